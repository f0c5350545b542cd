"""A static site's files: each page rendered from its own template with relative links, the ES modules of every page
as one classic script (scripts.js, run per page by its data-entry), and the baked answers as classic scripts, so the
site works from any static host, under a sub-path and from file://. app/cli/site.py bakes the answers and writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from .. import i18n
from ..experiments.lecture.export import bundle as bundle_modules
from ..experiments.lecture.export import script_safe
from .registry import PAGES, page_context, page_data, templates

STRINGS: dict[str, tuple[str, str]] = {
    "static.not_baked": (
        "This view is not in this static copy of the lesson.",
        "这个视图不在本课程的静态副本中。",
    ),
    "static.nearest": ("Nearest baked views:", "最接近的已预先计算的视图："),
    "static.end": (".", "。"),
    "static.default_view": ("The page's default view", "本页默认视图"),
    "static.needs_server": (
        "This page needs the explorer's server (resnorm-explorer serve): a static copy cannot run models or training.",
        "本页需要探索器的服务器（resnorm-explorer serve）：静态副本无法运行模型或训练。",
    ),
    "static.built": (
        "Static copy built by ResNorm Explorer {version} on {when}; every number was computed by PyTorch then.",
        "静态副本由 ResNorm Explorer {version} 于 {when} 生成；每个数字都是当时由 PyTorch 计算的。",
    ),
    "static.models_data": (
        "The charts of this page are measurements of the pretrained models named above, recorded when the copy was "
        "built; the models' weights and their licences are described on each model's card.",
        "本页图表是对上面所列预训练模型的测量，在生成副本时记录；模型权重及其许可证见各模型的说明页（model card）。",
    ),
    "static.licence": (
        "Charts drawn with plotly.js {plotly} (MIT licence, © Plotly, Inc.: assets/LICENSE.plotly.js.txt).",
        "图表由 plotly.js {plotly} 绘制（MIT 许可证，© Plotly, Inc.：assets/LICENSE.plotly.js.txt）。",
    ),
}
i18n.register(STRINGS)

SERVER_ONLY = ("models", "train")  # live training, and real models unless baked: the page says it needs the server
DECK = "lecture"  # the offline deck file (app/pages/lecture_offline.py), one per language
SCRIPTS_FILE = "assets/scripts.js"
PLOTLY_FILE = "assets/plotly.min.js"


def page_file(key: str, lang: str) -> str:
    """index.html, norms.html, ... in English; index.zh.html, norms.zh.html, ... in Chinese."""
    stem = "index" if PAGES[key].path == "/" else PAGES[key].path.strip("/")
    return f"{stem}.html" if lang == "en" else f"{stem}.{lang}.html"


def path_file(path: str, lang: str) -> str:
    key = next(k for k, p in PAGES.items() if p.path == path)
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

    def pages(self) -> list[str]:
        return [key for key in PAGES if key != DECK]


def _static_context(site: Site, key: str, lang: str) -> dict[str, Any]:
    return {
        "data_files": site.data_files.get(key, []),
        "scripts": SCRIPTS_FILE,
        "built": i18n.t("static.built", lang, version=site.version, when=site.built_at),
        "licence": i18n.t("static.licence", lang, plotly=site.plotly),
        "models": i18n.t("static.models_data", lang) if key == "models" and key not in site.server_only else "",
    }


def render(site: Site, key: str, lang: str) -> str:
    """One page as a file of the static site: the live page's template and data, with files for URLs."""
    page = PAGES[key]
    request = Request({"type": "http", "method": "GET", "path": page.path, "query_string": b"", "headers": []})
    data = page_data(request, page, lang, None)
    data["nav"] = {k: page_file(k, lang) for k in PAGES}
    data["static"] = {
        "self": page_file(key, lang),
        "server_only": key in site.server_only,
        **site.manifests.get(key, {"views": [], "keys": []}),
    }
    other = next((other for other in site.langs if other != lang), lang)
    context = {
        **page_context(page, lang, None, data, page_file(key, other)),
        "static_url": lambda path: f"assets/{path.lstrip('/')}",
        "plotly_url": lambda: PLOTLY_FILE,
        "page_href": lambda path, lang: path_file(path, lang),
        "static_site": _static_context(site, key, lang),
    }
    return templates.env.get_template(page.template_name).render(**context)


# The deck's stage fills the window: its build line sits small in the top corner, on the empty band above the slide.
DECK_FOOTER_STYLE = "position:fixed;left:0;top:0;font:10px sans-serif;color:#aab;padding:1px 4px;pointer-events:none"


def deck_footer(html: str, site: Site, lang: str) -> str:
    """The offline deck file with the build and licence lines every page of the site carries (before </body>)."""
    line = f"{i18n.t('static.built', lang, version=site.version, when=site.built_at)} " + i18n.t(
        "static.licence", lang, plotly=site.plotly
    )
    footer = f'<footer class="static-build" style="{DECK_FOOTER_STYLE}">{_escape(line)}</footer>'
    head, tail = html.rsplit("</body>", 1)
    return f"{head}{footer}\n</body>{tail}"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def data_script(answers: dict[str, Any]) -> str:
    """Baked answers as a classic script (file:// pages cannot fetch), merged into window.RESNORM_ANSWERS; the JSON
    sits alone on the second line (`read_data_script`)."""
    body = json.dumps(answers, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"window.RESNORM_ANSWERS = Object.assign(window.RESNORM_ANSWERS || {{}},\n{body}\n);\n"


def read_data_script(text: str) -> dict[str, Any]:
    """The answers a data script carries (strict JSON)."""
    return dict(json.loads(text.split("\n")[1]))


# ---- Every page's ES modules as one classic script ------------------------------------------------------------


def bundle(entries: list[str]) -> str:
    """Every page's modules as one classic script, each page starting only its own (the deck's bundler)."""
    return script_safe(bundle_modules(entries, from_tag=True))


def entries() -> list[str]:
    """Every page's module and the shared chrome (site.js), except the deck's (it is its own offline file)."""
    return [f"pages/{PAGES[key].module_name}.js" for key in PAGES if key != DECK] + ["site.js"]
