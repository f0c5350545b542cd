"""HTML pages: the registry and routes (`registry`), and one module per group of pages, each registering its
pages and their strings on import: `explorer`, `lessons`, `train`, `lecture`, `models`. main.py includes `router` after these imports,
so every page is on it.
"""

from . import explorer, lecture, lessons, models, static_pages, train  # noqa: F401  (importing registers the pages)
from .registry import (
    CHARTS,
    PAGES,
    Page,
    register_page,
    render_page,
    request_lang,
    router,
    templates,
    url_state_keys,
    warm_computations,
)

__all__ = [
    "CHARTS",
    "PAGES",
    "Page",
    "register_page",
    "render_page",
    "request_lang",
    "router",
    "templates",
    "url_state_keys",
    "warm_computations",
]
