"""What a chart builder returns, and the view patches (log axis, slide theme) the browser only applies."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Chart:
    """One chart built from one answer: everything a page, an export or a notebook shows of it."""

    key: str  # the chart's name (/embed/{key}, POST /api/figure/{key})
    figure: Json  # Plotly JSON {"data": [...], "layout": {...}} in the normal theme and the chart's own y scale
    caption: str  # in the requested language
    claim: Json  # the values the caption states (ratios, the law and its errors, overflow layer), by name
    rows: list[Json]  # the chart's data as CSV rows
    patches: dict[str, Json] = field(default_factory=dict)  # view name -> patch: "slide", "log", "linear"
    # Page elements built with the chart from the same answer (a lesson's table, its step lists), by name:
    # {"caption": str, "rows": [[{"text": str, "header"?: bool, "lost"?: bool}, ...], ...]}; the page only renders them
    tables: dict[str, Json] = field(default_factory=dict)

    def to_json(self) -> Json:
        out = {
            "chart": self.key,
            "figure": self.figure,
            "caption": self.caption,
            "claim": self.claim,
            "rows": self.rows,
            "patches": self.patches,
        }
        return {**out, "tables": self.tables} if self.tables else out

    def view(self, *names: str) -> Json:
        """The figure with the named patches applied, in order (what the page draws for those view settings)."""
        figure = copy.deepcopy(self.figure)
        for name in names:
            if name in self.patches:
                apply_patch(figure, self.patches[name])
        return figure


@dataclass(frozen=True)
class ChartKind:
    """A registry entry: the request kind the chart draws (app/experiments/requests.py) and its builder."""

    key: str
    request: str
    build: Callable[[Any, str], Chart]  # (answer, lang) -> Chart
    strings: dict[str, tuple[str, str]]  # the chart's own words (English, 中文)


def y_scales() -> dict[str, Json]:
    """The y scale views of a chart with one y axis: log and linear."""
    return {"log": {"layout": {"yaxis": {"type": "log"}}}, "linear": {"layout": {"yaxis": {"type": "linear"}}}}


def diff(base: Any, target: Any) -> Any:
    """The patch that turns base into target: changed dict keys, lists of equal length item by item (None for an
    unchanged item), anything else whole. Only what a view changes; keys are never removed."""
    if isinstance(base, dict) and isinstance(target, dict):
        out = {k: diff(base[k], v) if k in base else v for k, v in target.items() if base.get(k) != v}
        return out
    if isinstance(base, list) and isinstance(target, list) and len(base) == len(target):
        items = [diff(b, v) if b != v else None for b, v in zip(base, target, strict=True)]
        return items if any(item is not None for item in items) else None
    return target


def apply_patch(base: Json, patch: Json) -> Json:
    """base with patch merged in place (static/js/charts.js's applyPatch does the same in the browser)."""
    for key, value in patch.items():
        here = base.get(key)
        if isinstance(value, dict) and isinstance(here, dict):
            apply_patch(here, value)
        elif isinstance(value, list) and isinstance(here, list) and len(value) == len(here):
            for i, item in enumerate(value):
                if isinstance(item, dict) and isinstance(here[i], dict):
                    apply_patch(here[i], item)
                elif item is not None:
                    here[i] = item
        else:
            base[key] = value
    return base
