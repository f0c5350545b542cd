"""The four explorer pages: a tour, the snowballing stream, the gradients, and variants side by side.

Their controls come from TraceConfig (`model_controls`), their charts from /api/trace and /api/sweep.
"""
from __future__ import annotations

from app.pages.registry import Page, register_page

register_page(Page("home", "/", "home.title", charts=("tour",), template="index.html", nav_key="nav.home",
                   nav_order=0, model_controls=False))
register_page(Page("norms", "/norms", "norms.title", charts=("norms",), nav_key="nav.norms", nav_order=10))
register_page(Page("gradients", "/gradients", "gradients.title", charts=("grad-profile", "grad-heatmap"),
                   nav_key="nav.gradients", nav_order=20))
register_page(Page("compare", "/compare", "compare.title", charts=("compare",), nav_key="nav.compare", nav_order=30))
