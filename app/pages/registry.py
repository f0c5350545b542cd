"""The page registry and its HTML routes: every page and one embed route for every chart.

A page is a `Page` (app/pages/page.py), the one table of that page: its template, its ES module under
static/js/pages/, the charts it draws, its URL keys beyond the request model's fields, its defaults (handed to its
script, never retyped there) and the requests its default view makes (`default_requests`: what the warm-up
computes, for a running server and `--warm-only` alike). The modules in `OWNERS` return their pages and words;
`collect()` alone builds the registry from them (see docs/adding-a-page.md), so `/embed/{chart}` works for their
charts too and the navigation lists them. Nothing is added to a table by importing a module.
"""

from __future__ import annotations

import functools
import gzip
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from .. import figures, i18n
from ..assets import IMMUTABLE, REVALIDATE, plotly_url, static_url
from ..config import MAX_DEPTH, TraceConfig, presets_payload, variants_payload
from ..config.limits import budget_report
from ..config.variants import enum_strings
from ..experiments.lecture.export import module_graph
from ..experiments.requests import Computation, computations
from ..i18n import client_script, client_version, pick_lang, t
from ..paths import asset_dir
from ..settings import get_settings
from . import explorer, lecture, lessons, models, static_strings, train
from .page import Page

templates = Jinja2Templates(directory=asset_dir("templates"))
templates.env.globals["t"] = t
templates.env.globals.update(static_url=static_url, plotly_url=plotly_url)  # versioned, long-cached URLs
# A page's link in the language shown; a static site (app/pages/static_pages.py) links its files instead.
templates.env.globals["page_href"] = lambda path, lang: f"{path}?lang={lang}"
templates.env.globals["strings_url"] = lambda lang: f"/i18n/{client_version()}/strings.{lang}.js"
templates.env.globals["static_site"] = None


@functools.cache
def module_preloads(*entries: str) -> tuple[str, ...]:
    """The versioned URLs of every module the entry modules (paths under static/js) import, for
    <link rel="modulepreload">: the browser then fetches the whole graph at once, not one import level after another
    (three round trips before a page's first request, measured)."""
    return tuple(static_url(f"js/{path}") for path in module_graph(entries) if path not in entries)


templates.env.globals["module_preloads"] = module_preloads
# Keep the request model's field order (Jinja sorts JSON keys by default): controls follow it.
templates.env.policies["json.dumps_kwargs"] = {"sort_keys": False}

# URL keys every page understands and no request model has: language, hidden controls (classroom links), theme.
VIEW_KEYS = ("lang", "hide", "theme")

# The modules that own pages, in the navigation's registration order: each returns its pages (`pages()`) and its
# words (`strings()`), and registers nothing by being imported.
OWNERS = (explorer, lecture, lessons, models, train)


@dataclass(frozen=True)
class Registry:
    """Every page, every chart's page (for /embed/{chart}), the embed and words routes (the pages' own: routes.py) and the
    pages' translation table."""

    pages: dict[str, Page]
    charts: dict[str, str]  # chart key -> page key
    strings: dict[str, tuple[str, str]]
    router: APIRouter

    def t(self, key: str, lang: str = "en", **values: object) -> str:
        """The pages' string for key in lang, with {placeholders} filled (app/i18n.py's `t` on this table)."""
        return i18n.lookup(self.strings, key, lang, **values)


def collect() -> Registry:
    """Ask each owner for its pages and words and build the tables and routes from them, checking that no page or
    chart key is taken twice, no word is owned twice or lacks a language, and every page default is valid."""
    pages: dict[str, Page] = {}
    charts: dict[str, str] = {}
    for page in (page for owner in OWNERS for page in owner.pages()):
        if page.key in pages:
            raise ValueError(f"page collected twice: {page.key}")
        taken = [chart for chart in page.charts if chart in charts]
        if taken:
            raise ValueError(f"chart key {taken[0]} already belongs to page {charts[taken[0]]}")
        page.check()
        pages[page.key] = page
        charts.update({chart: page.key for chart in page.charts})
    owned = (enum_strings(), figures.strings(), *(owner.strings() for owner in OWNERS), static_strings.STRINGS)
    return Registry(pages, charts, i18n.merge(*owned), _router(pages))


def _router(pages: dict[str, Page]) -> APIRouter:
    """/embed/{chart} and the pages' words (the pages' own routes: app/pages/routes.py, which hands answers over)."""
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/embed/{chart}", embed, methods=["GET"], response_class=HTMLResponse, name="embed")
    router.add_api_route("/i18n/{version}/strings.{lang}.js", strings_script, methods=["GET"], name="strings")
    return router


@cache
def get_registry() -> Registry:
    """This process's registry, collected on first use (the app factory, the command line, the static-site builder),
    its words then the table `t` and the pages' templates read."""
    registry = collect()
    i18n.use(registry.strings)
    return registry


def pages() -> dict[str, Page]:
    return get_registry().pages


def charts() -> dict[str, str]:
    return get_registry().charts


def url_state_keys() -> frozenset[str]:
    """Every URL key of a page that is not a request model's field: the API ignores these in a page's query."""
    return frozenset(VIEW_KEYS).union(*(page.url_keys for page in pages().values()))


def warm_computations() -> list[Computation]:
    """Every page's default view as cached computations, each key once, in the warm-up's order (_warm_rank): what
    the running server warms in the background and `--warm-only` computes."""
    seen: dict[str, Computation] = {}
    for page in pages().values():
        for kind, req in page.default_requests():
            for item in computations(kind, req, f"{page.key} {kind}"):
                seen.setdefault(item.key, item)
    ranked = [[item for item in seen.values() if _warm_rank(item) == rank] for rank in range(3)]
    return ranked[0] + ranked[1][::-1] + ranked[2]


def _warm_rank(item: Computation) -> int:
    """The order of the warm-up: the pages' single default views, then the lecture deck from its last slide back
    (a lecturer opens the deck right after starting the server, and it draws from the first slide on: the two
    meet in the middle instead of computing the same slide at once), then /gradients' 1..96 sweep, the costliest
    and the one that streams its progress anyway."""
    page, _, kind = item.label.partition(" ")
    return 2 if kind == "sweep" else 1 if page == "lecture" else 0


def request_lang(request: Request) -> str:
    return pick_lang(
        request.query_params.get("lang"), request.headers.get("accept-language"), get_settings().default_lang
    )


def _query_depth(request: Request, page: Page) -> int:
    """The depth the presets are resolved for (DeepNorm's α); a bad value falls back to the page's default."""
    fallback = int(page.defaults.get("depth", TraceConfig().depth))
    try:
        depth = int(request.query_params.get("depth", ""))
    except ValueError:
        return fallback
    return depth if 1 <= depth <= MAX_DEPTH else fallback


def _default_budget(page: Page) -> dict[str, Any]:
    """POST /api/budget's answer for the page's default model, handed over with the page: the default view then
    sends its first request without waiting for that answer (static/js/budget.js reads it for that model only)."""
    cfg = TraceConfig(**{k: v for k, v in page.defaults.items() if k in TraceConfig.model_fields})
    return {"config": cfg.model_dump(), "report": budget_report(cfg)}


def page_data(request: Request, page: Page, lang: str, embed_chart: str | None) -> dict[str, Any]:
    """Everything the page's JS needs, handed over as one JSON block (no inline script code)."""
    depth = _query_depth(request, page)
    return {
        "page": page.key,
        "lang": lang,
        "embed": embed_chart,
        "model_controls": page.model_controls,
        "schema": TraceConfig.model_json_schema() if page.model_controls else None,
        "presets": {"depth": depth, "presets": presets_payload(TraceConfig(depth=depth))}
        if page.model_controls
        else None,
        "budget": _default_budget(page) if page.model_controls else None,
        "extra": page.extra,
        "defaults": page.defaults,
        "variants": variants_payload(),  # physics per variant, e.g. variants.norm[key].pins_token (the √d line)
        "nav": {p.key: p.path for p in pages().values()},
        "nav_defaults": {p.key: p.defaults for p in pages().values() if p.defaults},
    }


# A page is a function of (page, chart, language, query) alone: a room opens the same few links, so each is rendered
# once per worker (about 12 ms of CPU on the event loop each time otherwise, which 200 students arriving at once
# queue behind).
RENDERED_PAGES = 256
_rendered: OrderedDict[tuple[str, str | None, str, str, bool], tuple[Page, bytes]] = OrderedDict()


def render_page(request: Request, key: str, embed_chart: str | None = None, plotly_first: bool = False) -> HTMLResponse:
    """`plotly_first`: the page carries its first charts (handover.py), so Plotly.js runs before its module."""
    lang = request_lang(request)
    cache_key = (key, embed_chart, lang, request.url.query, plotly_first)
    cached = _rendered.get(cache_key)
    if cached is not None and cached[0] is pages()[key]:  # a page replaced in the registry is rendered anew
        body = cached[1]
        _rendered.move_to_end(cache_key)
    else:
        body = _render(request, key, lang, embed_chart, plotly_first)
        _rendered[cache_key] = (pages()[key], body)
        if len(_rendered) > RENDERED_PAGES:
            _rendered.popitem(last=False)
    return HTMLResponse(body, headers={"Vary": "Accept-Language"})


def page_context(
    page: Page, lang: str, embed_chart: str | None, data: dict[str, Any], other: str, where: str | None = None
) -> dict[str, Any]:
    """What a page's template reads, for the live server and the static site alike (other: the link to the page
    in the other language; where: where its numbers are computed, for the footer, by default this server)."""
    return {
        "page": page,
        "lang": lang,
        "html_lang": "zh-CN" if lang == "zh" else "en",
        "nav": sorted((p for p in pages().values() if p.nav_key), key=lambda p: p.nav_order),
        "embed_chart": embed_chart,
        "data": data,
        "other_lang_query": other,
        "footer": t(page.footer_key, lang, where=where or t("footer.where.server", lang)),
    }


def _render(request: Request, key: str, lang: str, embed_chart: str | None, plotly_first: bool = False) -> bytes:
    page = pages()[key]
    data = page_data(request, page, lang, embed_chart)
    context = page_context(page, lang, embed_chart, data, _other_lang_query(request, lang))
    context["plotly_first"] = plotly_first
    template = "embed.html" if embed_chart else page.template_name
    return bytes(templates.TemplateResponse(request, template, context).body)


def _other_lang_query(request: Request, lang: str) -> str:
    """The same URL state with the other language, for the language switch link."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    params.append(("lang", "en" if lang == "zh" else "zh"))
    from urllib.parse import urlencode

    return "?" + urlencode(params)


async def strings_script(request: Request, version: str, lang: str) -> Response:
    """Every page's words in one language (app/i18n.py client_script), shared by every page and embed. The current
    version is cached for a year; another version gets today's words, revalidated (a page from before a restart)."""
    if lang not in i18n.LANGS:
        raise HTTPException(
            status_code=404, detail=f"lang: unknown language {lang!r}; allowed: {', '.join(i18n.LANGS)}"
        )
    latest = client_version()
    headers = {"Cache-Control": IMMUTABLE if version == latest else REVALIDATE, "Vary": "Accept-Encoding"}
    body = _strings_bytes(lang, latest)
    if "gzip" in request.headers.get("accept-encoding", ""):
        body, headers["Content-Encoding"] = _strings_gzip(lang, latest), "gzip"
    return Response(body, media_type="text/javascript", headers=headers)


@functools.cache
def _strings_bytes(lang: str, version: str) -> bytes:
    return client_script(lang).encode()


@functools.cache
def _strings_gzip(lang: str, version: str) -> bytes:
    return gzip.compress(_strings_bytes(lang, version), compresslevel=9, mtime=0)


async def embed(request: Request, chart: str) -> HTMLResponse:
    """One chart alone, no navigation, sized to its frame; same URL state as its page."""
    known = charts()
    if chart not in known:
        raise HTTPException(
            status_code=404, detail=f"chart: unknown chart {chart!r}; allowed: {', '.join(sorted(known))}"
        )
    return render_page(request, known[chart], embed_chart=chart)
