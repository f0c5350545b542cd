"""The page registry and its HTML routes: every page and one embed route for every chart.

A page is a `Page` in the `PAGES` registry, the one table of that page: its template, its ES module under
static/js/pages/, the charts it draws, its URL keys beyond the request model's fields, its defaults (handed to its
script, never retyped there) and the requests its default view makes (`default_requests`: what the warm-up
computes, for a running server and `--warm-only` alike). Modules in app/pages/ add pages with
`register_page(Page(...))` (see docs/adding-a-page.md); `/embed/{chart}` then works for their charts too, and the
navigation lists them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from ..assets import plotly_url, static_url
from ..config import MAX_DEPTH, TraceConfig, presets_payload, variants_payload
from ..experiments.requests import Computation, Part, computations
from ..i18n import client_table, pick_lang, t
from ..paths import asset_dir
from ..settings import get_settings

templates = Jinja2Templates(directory=asset_dir("templates"))
templates.env.globals["t"] = t
templates.env.globals.update(static_url=static_url, plotly_url=plotly_url)  # versioned, long-cached URLs
# A page's link in the language shown; a static site (app/pages/static_pages.py) links its files instead.
templates.env.globals["page_href"] = lambda path, lang: f"{path}?lang={lang}"
templates.env.globals["static_site"] = None
# Keep the request model's field order (Jinja sorts JSON keys by default): controls follow it.
templates.env.policies["json.dumps_kwargs"] = {"sort_keys": False}

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class Page:
    """One page: route, template, JS module (static/js/pages/<module>.js), charts it draws, nav entry."""

    key: str
    path: str
    title_key: str
    charts: tuple[str, ...] = ()
    template: str = ""  # default: <key>.html
    module: str = ""  # default: <key>
    nav_key: str = ""  # i18n key of the nav label; empty: not in the navigation
    nav_order: int = 100
    model_controls: bool = True  # controls for every TraceConfig field (presets first)
    extra: dict[str, Any] = field(default_factory=dict)  # anything else the template or module needs
    url_keys: tuple[str, ...] = ()  # its own URL keys beyond the request model's fields (view settings)
    defaults: dict[str, Any] = field(default_factory=dict)  # its own default settings, read by its script
    default_requests: Callable[[], list[Part]] = list  # (request kind, request) its default view makes
    footer_key: str = "footer.offline"  # i18n key of the footer: where this page's numbers come from, truly

    @property
    def template_name(self) -> str:
        return self.template or f"{self.key}.html"

    @property
    def module_name(self) -> str:
        return self.module or self.key


# URL keys every page understands and no request model has: language, hidden controls (classroom links), theme.
VIEW_KEYS = ("lang", "hide", "theme")

PAGES: dict[str, Page] = {}
CHARTS: dict[str, str] = {}  # chart key -> page key, for /embed/{chart}


def register_page(page: Page) -> Page:
    """Add a page to the registry and a GET route for it on the pages' router (before main.py includes it)."""
    if page.key in PAGES:
        raise ValueError(f"page registered twice: {page.key}")
    for chart in page.charts:
        if chart in CHARTS:
            raise ValueError(f"chart key {chart} already belongs to page {CHARTS[chart]}")
    if page.defaults and page.model_controls:
        unknown = set(page.defaults) - set(TraceConfig.model_fields) - set(page.url_keys)
        if unknown:
            raise ValueError(f"page {page.key}: defaults for keys it does not have: {sorted(unknown)}")
        # a page default the request model refuses fails at import, not in a browser
        TraceConfig(**{k: v for k, v in page.defaults.items() if k in TraceConfig.model_fields})
    PAGES[page.key] = page
    CHARTS.update({chart: page.key for chart in page.charts})

    async def show(request: Request) -> HTMLResponse:
        return render_page(request, page.key)

    router.add_api_route(
        page.path, show, methods=["GET"], response_class=HTMLResponse, include_in_schema=False, name=f"page_{page.key}"
    )
    return page


def url_state_keys() -> frozenset[str]:
    """Every URL key of a page that is not a request model's field: the API ignores these in a page's query."""
    return frozenset(VIEW_KEYS).union(*(page.url_keys for page in PAGES.values()))


def warm_computations() -> list[Computation]:
    """Every page's default view as cached computations, each key once, in registration order: what the running
    server warms in the background and `--warm-only` computes (both import app.pages, so every page is here)."""
    seen: dict[str, Computation] = {}
    for page in PAGES.values():
        for kind, req in page.default_requests():
            for item in computations(kind, req, f"{page.key} {kind}"):
                seen.setdefault(item.key, item)
    return list(seen.values())


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
        "strings": client_table(lang),
        "extra": page.extra,
        "defaults": page.defaults,
        "variants": variants_payload(),  # physics per variant, e.g. variants.norm[key].pins_token (the √d line)
        "nav": {p.key: p.path for p in PAGES.values()},
        "nav_defaults": {p.key: p.defaults for p in PAGES.values() if p.defaults},
    }


# A page is a function of (page, chart, language, query) alone: a room opens the same few links, so each is rendered
# once per worker (about 12 ms of CPU on the event loop each time otherwise, which 200 students arriving at once
# queue behind).
RENDERED_PAGES = 256
_rendered: OrderedDict[tuple[str, str | None, str, str], tuple[Page, bytes]] = OrderedDict()


def render_page(request: Request, key: str, embed_chart: str | None = None) -> HTMLResponse:
    lang = request_lang(request)
    cache_key = (key, embed_chart, lang, request.url.query)
    cached = _rendered.get(cache_key)
    if cached is not None and cached[0] is PAGES[key]:  # a page replaced in PAGES is rendered anew
        body = cached[1]
        _rendered.move_to_end(cache_key)
    else:
        body = _render(request, key, lang, embed_chart)
        _rendered[cache_key] = (PAGES[key], body)
        if len(_rendered) > RENDERED_PAGES:
            _rendered.popitem(last=False)
    return HTMLResponse(body, headers={"Vary": "Accept-Language"})


def page_context(page: Page, lang: str, embed_chart: str | None, data: dict[str, Any], other: str) -> dict[str, Any]:
    """What a page's template reads, for the live server and the static site alike (other: the link to the page
    in the other language)."""
    return {
        "page": page,
        "lang": lang,
        "html_lang": "zh-CN" if lang == "zh" else "en",
        "nav": sorted((p for p in PAGES.values() if p.nav_key), key=lambda p: p.nav_order),
        "embed_chart": embed_chart,
        "data": data,
        "other_lang_query": other,
    }


def _render(request: Request, key: str, lang: str, embed_chart: str | None) -> bytes:
    page = PAGES[key]
    data = page_data(request, page, lang, embed_chart)
    context = page_context(page, lang, embed_chart, data, _other_lang_query(request, lang))
    template = "embed.html" if embed_chart else page.template_name
    return bytes(templates.TemplateResponse(request, template, context).body)


def _other_lang_query(request: Request, lang: str) -> str:
    """The same URL state with the other language, for the language switch link."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    params.append(("lang", "en" if lang == "zh" else "zh"))
    from urllib.parse import urlencode

    return "?" + urlencode(params)


@router.get("/embed/{chart}", response_class=HTMLResponse)
async def embed(request: Request, chart: str) -> HTMLResponse:
    """One chart alone, no navigation, sized to its frame; same URL state as its page."""
    if chart not in CHARTS:
        raise HTTPException(
            status_code=404, detail=f"chart: unknown chart {chart!r}; allowed: {', '.join(sorted(CHARTS))}"
        )
    return render_page(request, CHARTS[chart], embed_chart=chart)
