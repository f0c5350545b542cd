"""A static site's files: each page rendered from its own template with relative links, the ES modules of every page
as one classic script (scripts.js, run per page by its data-entry), and the baked answers as classic scripts, so the
site works from any static host, under a sub-path and from file://. app/cli/site.py bakes the answers and writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from ..experiments.lecture.export import bundle as bundle_modules
from ..experiments.lecture.export import script_safe
from ..security import content_security_policy
from . import registry
from .registry import page_context, page_data, templates

SERVER_ONLY = ("models", "train")  # real models and training unless baked: the page says it needs the server
DECK = "lecture"  # the offline deck file (app/pages/lecture_offline.py), one per language
SCRIPTS_FILE = "assets/scripts.js"


def strings_file(lang: str) -> str:
    """The words of every page in one language (app/i18n.py client_script), one file the pages share."""
    return f"assets/strings.{lang}.js"


PLOTLY_FILE = "assets/plotly.min.js"
EMBEDS = "embed"  # embed/<chart>.html: one chart alone, for an iframe (the live server's /embed/<chart>)


def _t(key: str, lang: str, **values: object) -> str:
    return registry.get_registry().t(key, lang, **values)


def _in_lang(stem: str, lang: str) -> str:
    return f"{stem}.html" if lang == "en" else f"{stem}.{lang}.html"


def page_file(key: str, lang: str) -> str:
    """index.html, norms.html, ... in English; index.zh.html, norms.zh.html, ... in Chinese."""
    path = registry.pages()[key].path
    return _in_lang("index" if path == "/" else path.strip("/"), lang)


def embed_file(chart: str, lang: str) -> str:
    """embed/norms.html, embed/norms.zh.html: a chart alone, with the same URL state as its page."""
    return f"{EMBEDS}/{_in_lang(chart, lang)}"


def path_file(path: str, lang: str) -> str:
    key = next(k for k, p in registry.pages().items() if p.path == path)
    return page_file(key, lang)


@dataclass
class Site:
    """What every page of one build shares: the languages, its build line and each page's baked data."""

    langs: tuple[str, ...]
    version: str
    built_at: str
    plotly: str
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)  # page -> views, keys
    data_files: dict[str, list[str]] = field(default_factory=dict)  # page -> data/<page>.js
    server_only: set[str] = field(default_factory=lambda: set(SERVER_ONLY))  # pages whose answers were not baked
    server: str = ""  # --server: every request goes to this explorer server, nothing is baked

    def __post_init__(self) -> None:
        if self.server:
            self.server_only.clear()

    def pages(self) -> list[str]:
        return [key for key in registry.pages() if key != DECK]

    def embeds(self) -> list[tuple[str, str]]:
        """(chart, page) of every chart a page of the site draws: each gets an embed file per language."""
        return [(chart, key) for key in self.pages() for chart in registry.pages()[key].charts]

    def footer_where(self, lang: str) -> str:
        """Where the numbers were computed, for the footers: at build time, or on the server this copy asks."""
        if self.server:
            return _t("footer.where.remote", lang, server=self.server)
        return _t("footer.where.static", lang)


def models_licences(names: Iterable[str], lang: str) -> str:
    """The licence line of the packaged models among `names` ("all-MiniLM-L6-v2 (Apache-2.0)"), or "" (another
    model's licence is on its own card)."""
    from ..models.real.sources import PACKAGED

    known = [PACKAGED[name] for name in dict.fromkeys(names) if name in PACKAGED and PACKAGED[name].licence]
    licences = ("、" if lang == "zh" else ", ").join(
        f"{model.label.split(' (')[0]} ({model.licence})" for model in known
    )
    return _t("static.models_licences", lang, licences=licences) if licences else ""


def _models_notice(lang: str, short: bool) -> str:
    """The notice of model-derived data on /models and its embeds: what the charts measure, and the models' licences."""
    extra = registry.pages()["models"].extra
    notice = _t("static.models_data_short" if short else "static.models_data", lang)
    licences = models_licences((extra["default_model"], extra["default_compare"]), lang)
    return f"{notice} {licences}".strip()


def _static_context(site: Site, key: str, lang: str, root: str) -> dict[str, Any]:
    baked = not site.server and key not in site.server_only  # its answers are in data/<page>.js
    return {
        "data_files": [root + file for file in site.data_files.get(key, [])],
        "scripts": root + SCRIPTS_FILE,
        "csp": content_security_policy(site.server),
        "built": _t(
            "static.built_pages" if site.server else "static.built", lang, version=site.version, when=site.built_at
        ),
        "licence": _t("static.licence", lang, plotly=site.plotly),
        "models": _models_notice(lang, short=False) if key == "models" and baked else "",
        "models_short": _models_notice(lang, short=True) if key == "models" and baked else "",  # an embed's
        "baked": baked,
    }


def render(site: Site, key: str, lang: str, embed_chart: str | None = None) -> str:
    """One page (or one chart of it, for an iframe) as a file of the static site: the live page's template and data,
    with files for URLs (relative to the embed/ folder for an embed)."""
    page = registry.pages()[key]
    request = Request({"type": "http", "method": "GET", "path": page.path, "query_string": b"", "headers": []})
    root = "../" if embed_chart else ""
    own = embed_file(embed_chart, lang) if embed_chart else page_file(key, lang)
    data = page_data(request, page, lang, embed_chart)
    data["nav"] = {k: root + page_file(k, lang) for k in registry.pages()}
    data["static"] = {
        "self": own.rsplit("/", 1)[-1],
        "root": root,  # the site's top, relative to this file: where a view's data file is loaded from
        "server_only": key in site.server_only,
        "server": site.server,
        "embeds": {chart: root + embed_file(chart, lang) for chart in page.charts},
        **site.manifests.get(key, {"views": [], "keys": []}),
    }
    other = next((other for other in site.langs if other != lang), lang)
    context = {
        **page_context(page, lang, embed_chart, data, page_file(key, other), site.footer_where(lang)),
        "static_url": lambda path: f"{root}assets/{path.lstrip('/')}",
        "plotly_url": lambda: root + PLOTLY_FILE,
        "strings_url": lambda lang: root + strings_file(lang),
        "page_href": lambda path, lang: path_file(path, lang),
        "static_site": _static_context(site, key, lang, root),
    }
    template = "embed.html" if embed_chart else page.template_name
    return templates.env.get_template(template).render(**context)


# The deck's stage fills the window: its build line sits small in the top corner, on the empty band above the slide.
DECK_FOOTER_STYLE = "position:fixed;left:0;top:0;font:10px sans-serif;color:#aab;padding:1px 4px;pointer-events:none"


def deck_footer(html: str, site: Site, lang: str) -> str:
    """The offline deck file with the build and licence lines every page of the site carries (before </body>), and
    the notice of model-derived data when the deck has the real models' slides."""
    from ..experiments.lecture import slides_real
    from ..models.real.sources import PACKAGED

    line = f"{_t('static.built', lang, version=site.version, when=site.built_at)} " + _t(
        "static.licence", lang, plotly=site.plotly
    )
    if slides_real.SLIDES:  # they measure the packaged models
        line += f" {_t('static.models_data_short', lang)} {models_licences(PACKAGED, lang)}".rstrip()
    footer = f'<footer class="static-build" style="{DECK_FOOTER_STYLE}">{_escape(line)}</footer>'
    head, tail = html.rsplit("</body>", 1)
    return f"{head}{footer}\n</body>{tail}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# A list this long (as JSON) that two answers carry alike is written once: the two languages' charts of one view
# share their numbers, and the views of one page their axes (static/js/viewkeys.js `resolveShared` puts them back).
SHARED_MIN_CHARS = 64
SHARED = "$shared"  # {"$shared": id} stands for pool[id]; no API answer has this key


def data_script(page: str, answers: dict[str, Any]) -> str:
    """Baked answers as a classic script (file:// pages cannot fetch): the lists several answers share into
    window.RESNORM_SHARED, the answers, referring to them, into window.RESNORM_ANSWERS. Each JSON sits alone on
    its line (`read_data_script`). `page` names the pool's ids: one per file of a page (app/pages/static_data.py)."""
    pool, refs = _shared_lists(page, answers)
    body = _json(_with_refs(answers, refs))
    return (
        f"window.RESNORM_SHARED = Object.assign(window.RESNORM_SHARED || {{}},\n{_json(pool)}\n);\n"
        f"window.RESNORM_ANSWERS = Object.assign(window.RESNORM_ANSWERS || {{}},\n{body}\n);\n"
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _shared_lists(page: str, answers: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """(pool id -> list, the list's JSON -> pool id) of the long lists that occur more than once (outermost only)."""
    counts: dict[str, int] = {}

    def count(value: Any) -> None:
        if isinstance(value, list) and len(text := _json(value)) >= SHARED_MIN_CHARS:
            counts[text] = counts.get(text, 0) + 1
            if counts[text] > 1:
                return  # its inner lists were counted the first time
        for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
            count(item)

    count(answers)
    shared = [text for text, n in counts.items() if n > 1]
    refs = {text: f"{page}:{index}" for index, text in enumerate(shared)}
    return {ref: json.loads(text) for text, ref in refs.items()}, refs


def _with_refs(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, list) and (ref := refs.get(_json(value))):
        return {SHARED: ref}
    if isinstance(value, dict):
        return {key: _with_refs(item, refs) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_refs(item, refs) for item in value]
    return value


def read_data_script(text: str) -> dict[str, Any]:
    """The answers a data script carries (strict JSON), each shared list put back in its place."""
    lines = text.split("\n")
    pool, answers = json.loads(lines[1]), json.loads(lines[4])

    def resolve(value: Any) -> Any:
        if isinstance(value, dict):
            return pool[value[SHARED]] if set(value) == {SHARED} else {k: resolve(v) for k, v in value.items()}
        return [resolve(item) for item in value] if isinstance(value, list) else value

    return dict(resolve(answers))


# ---- Every page's ES modules as one classic script ------------------------------------------------------------


def bundle(entries: list[str]) -> str:
    """Every page's modules as one classic script, each page starting only its own (the deck's bundler)."""
    return script_safe(bundle_modules(entries, from_tag=True))


def entries() -> list[str]:
    """Every page's module and the shared chrome (site.js), except the deck's (it is its own offline file)."""
    return [f"pages/{registry.pages()[key].module_name}.js" for key in registry.pages() if key != DECK] + ["site.js"]
