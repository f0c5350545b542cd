"""What a pages module returns: `Page`, one page of the registry (app/pages/registry.py collects them).

A pages module (app/pages/explorer.py, lessons.py, ...) owns its pages and their words: `pages() -> list[Page]` and
`STRINGS` (key: (English, 中文)). Importing it adds nothing anywhere; `collect()` asks each module for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import TraceConfig
from ..experiments.requests import Part


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

    def check(self) -> None:
        """A page default the request model refuses, or a default for a key the page lacks, fails at collection,
        not in a browser."""
        if not (self.defaults and self.model_controls):
            return
        unknown = set(self.defaults) - set(TraceConfig.model_fields) - set(self.url_keys)
        if unknown:
            raise ValueError(f"page {self.key}: defaults for keys it does not have: {sorted(unknown)}")
        TraceConfig(**{k: v for k, v in self.defaults.items() if k in TraceConfig.model_fields})
