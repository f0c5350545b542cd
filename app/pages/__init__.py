"""HTML pages: the registry and routes (`registry`), and one module per group of pages, each returning its pages
(`pages()`) and their words (`strings()`): `explorer`, `lecture`, `lessons`, `models`, `train`. Importing them
registers nothing: `collect()` builds the pages, charts, routes and translation table from them, and
`get_registry()` is this process's collection, which main.py's app factory includes.
"""

from .page import Page
from .registry import (
    Registry,
    charts,
    collect,
    get_registry,
    pages,
    render_page,
    request_lang,
    templates,
    url_state_keys,
    warm_computations,
)

__all__ = [
    "Page",
    "Registry",
    "charts",
    "collect",
    "get_registry",
    "pages",
    "render_page",
    "request_lang",
    "templates",
    "url_state_keys",
    "warm_computations",
]
