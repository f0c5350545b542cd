"""`resnorm-explorer site -o DIR`: the lesson as a static site, for GitHub Pages, a university web server or a USB stick.

Every answer a baked view's page asks for is asked of the real API in this process (FastAPI's TestClient, the
server's compute pool and cache), recorded as the same strict JSON under its request's key
(app/pages/static_views.py), and written into data/<page>.js, shared by both languages. The pages are the live
templates with relative links and their modules as one classic script (app/pages/static_pages.py); the deck is the
offline file `resnorm-explorer lecture` writes. Nothing on the site loads anything from elsewhere.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .commands import LANGS, _parser, add_origin

DEFAULT_DEPTHS = "12,96"


def _depths(text: str) -> tuple[int, ...]:
    from ..config import MAX_DEPTH

    try:
        depths = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not depths or not all(1 <= d <= MAX_DEPTH for d in depths):
        raise argparse.ArgumentTypeError(f"each depth must be from 1 to {MAX_DEPTH}; got {text!r}")
    return depths


def _langs(text: str) -> tuple[str, ...]:
    langs = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not langs or any(lang not in LANGS for lang in langs):
        raise argparse.ArgumentTypeError(f"languages are {', '.join(LANGS)}; got {text!r}")
    return langs


def site(argv: list[str], prog: str) -> int:
    parser = _parser(prog, "Write the lesson as a static site (relative links; works under a sub-path and file://).")
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write (made if missing)")
    parser.add_argument(
        "--depths",
        type=_depths,
        default=_depths(DEFAULT_DEPTHS),
        metavar="L,L",
        help=f"depths whose preset views are baked on /norms, /gradients, /compare [default {DEFAULT_DEPTHS}]",
    )
    parser.add_argument("--lang", type=_langs, default=LANGS, metavar="en,zh", help="languages [default en,zh]")
    add_origin(parser)
    args = parser.parse_args(argv)
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        parser.exit(1, f"{prog}: error: -o {out}: is a file, not a folder\n")
    out.mkdir(parents=True, exist_ok=True)
    sizes = build(out, args.depths, args.lang, args.origin.rstrip("/"))
    _print_sizes(out, sizes)
    return 0


def build(out: Path, depths: tuple[int, ...], langs: tuple[str, ...], origin: str) -> dict[str, int]:
    """Write the whole site into `out`; the bytes of each part. One app in this process answers every request and
    records the decks, so its compute pool, real models and memory cache serve both."""
    from fastapi.testclient import TestClient

    from .. import __version__
    from ..assets import PLOTLY_VERSION
    from ..main import app
    from ..pages import static_pages as pages
    from ..pages.static_views import all_views

    built_at = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    site = pages.Site(langs, __version__, built_at, PLOTLY_VERSION.split("-")[0])
    views = all_views(depths, langs)
    sizes = {"plotly": 0, "scripts": 0, "pages": 0, "data": 0, "deck": 0}
    with TestClient(app) as client:
        sizes["deck"] = _write_decks(client, out, site, origin)
        answers = _bake(client, [call for page_views in views.values() for view in page_views for call in view.calls])
    sizes["data"] = _write_data(out, site, views, answers)
    sizes["plotly"], sizes["scripts"] = _write_assets(out)
    for key in site.pages():
        for lang in langs:
            sizes["pages"] += _write(out / pages.page_file(key, lang), pages.render(site, key, lang))
    return sizes


def _write_data(out: Path, site: Any, views: dict[str, list[Any]], answers: dict[str, Any]) -> int:
    """data/<page>.js for every page whose answers were all baked (else the page says it needs the server)."""
    from ..pages import static_pages as pages
    from ..pages.static_views import manifest

    total = 0
    for page, page_views in views.items():
        keys = dict.fromkeys(call.key for view in page_views for call in view.calls)
        if not page_views or not all(key in answers for key in keys):
            continue
        site.server_only.discard(page)
        total += _write(out / "data" / f"{page}.js", pages.data_script({k: answers[k] for k in keys}))
        site.data_files[page] = [f"data/{page}.js"]
        site.manifests[page] = manifest(page, page_views)
    return total


def _write_assets(out: Path) -> tuple[int, int]:
    """(Plotly.js and its licence, scripts and styles): each once for every page of both languages."""
    from ..assets import PLOTLY_JS, STATIC
    from ..pages import static_pages as pages

    assets = out / "assets"
    plotly = _copy(PLOTLY_JS, out / pages.PLOTLY_FILE)
    plotly += _copy(STATIC / "vendor" / "LICENSE.plotly.js.txt", assets / "LICENSE.plotly.js.txt")
    scripts = _write(out / pages.SCRIPTS_FILE, pages.bundle(pages.entries()))
    for css in sorted((STATIC / "css").glob("*.css")):
        scripts += _copy(css, assets / "css" / css.name)
    return plotly, scripts


def _write_decks(client: Any, out: Path, site: Any, origin: str) -> int:
    """The offline deck (`resnorm-explorer lecture`), one file per language, with the site's build line; recorded
    on the app's own event loop, so its answers come from the same compute pool and cache as the pages'."""
    from ..pages import static_pages as pages
    from ..pages.lecture_offline import offline_html
    from ..services.compute import get_pool

    total = 0
    for lang in site.langs:
        html = client.portal.call(offline_html, get_pool(), lang, origin)
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


def _print_sizes(out: Path, sizes: dict[str, int]) -> None:
    labels = {
        "plotly": "Plotly.js (once)",
        "scripts": "scripts and styles (once)",
        "pages": "pages",
        "data": "baked answers (shared by the languages)",
        "deck": "deck files (each inlines its own Plotly and answers)",
    }
    for key, label in labels.items():
        print(f"{sizes[key] / 1e6:8.2f} MB  {label}", file=sys.stderr)
    print(f"{sum(sizes.values()) / 1e6:8.2f} MB  total in {out}", file=sys.stderr)
