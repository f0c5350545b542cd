"""Every view a static site of the lesson bakes, page by page (app/pages/static_views.py for the model pages, the
lessons and /models; app/pages/static_train.py for /train), and what each static page knows of its views."""

from __future__ import annotations

from typing import Any

from ..config import TraceConfig
from .registry import VIEW_KEYS
from .static_train import TRAIN_KEYS, train_views
from .static_views import DATA_KEYS, PRESET_PAGES, View, home_view, lesson_views, model_views, models_view


def all_views(
    depths: tuple[int, ...], langs: tuple[str, ...], sentences: tuple[str, ...] = ()
) -> dict[str, list[View]]:
    views = {"home": [home_view(langs)]}
    for page in PRESET_PAGES:
        views[page] = model_views(page, depths, langs)
    return {**views, **lesson_views(langs), "models": models_view(langs, sentences), "train": train_views(langs)}


# The URL keys that change what a page without model controls requests (its display-only keys never do).
PAGE_KEYS: dict[str, tuple[str, ...]] = {"models": ("model", "compare", "text"), "train": TRAIN_KEYS}


def manifest(page: str, views: list[View]) -> dict[str, Any]:
    """What a static page knows of its views: each one's URL state, preset and name (to name the nearest ones when a
    view was not baked) and the URL keys that change a request."""
    keys = [*TraceConfig.model_fields, *DATA_KEYS.get(page, ())] if page in PRESET_PAGES else []
    keys += PAGE_KEYS.get(page, ())
    return {
        "views": [{"query": v.query, "preset": v.preset, **({"label": v.label} if v.label else {})} for v in views],
        "keys": keys,
        "ignore": list(VIEW_KEYS),
    }
