"""The back row's rules for a slide's chart, applied to every chart of the deck after it is built (app/figures/slides.py),
whichever builder drew it, and measured in a real browser by tests/browser/legibility.js at 1280x720:

- text at least 24 px on the 1280x720 stage (titles, axis titles, legend, notes, bar labels, table cells), tick
  labels at least 18 px;
- a linear axis reaches 0 or spans at least half of its largest value, else a ×1.3 change is drawn as a cliff; a log
  axis spans at least a decade, else a small change looks like orders of magnitude (data under a decade: linear).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from .style import Json

TEXT_PX = 24  # a slide's text on the 1280x720 stage, read from the back of a lecture room
TICK_PX = 18  # tick labels: numbers a reader looks up, not reads out
AXIS_KEY = re.compile(r"^([xy])axis(\d*)$")


def _raise(font: Json | None, least: int) -> Json:
    font = dict(font or {})
    font["size"] = max(font.get("size") or 0, least)
    return font


def at_least_legible(fig: Json) -> Json:
    """Every text of the figure raised to TEXT_PX, its tick labels to TICK_PX (none is made smaller)."""
    lay = fig["layout"]
    lay["font"] = _raise(lay.get("font"), TEXT_PX)  # what a text without its own size inherits
    for key in ("title", "legend"):
        if isinstance(lay.get(key), dict):
            lay[key]["font"] = _raise(lay[key].get("font"), TEXT_PX)
    for key in [k for k in lay if AXIS_KEY.match(k)]:
        axis = lay[key]
        if isinstance(axis.get("title"), dict):
            axis["title"]["font"] = _raise(axis["title"].get("font"), TEXT_PX)
        # a log axis without a whole-decade dtick labels 2 and 5 between its decades at three quarters of the size
        decades = isinstance(axis.get("dtick"), (int, float)) and axis["dtick"] >= 1
        minor = axis.get("type") == "log" and not decades
        axis["tickfont"] = _raise(axis.get("tickfont"), TICK_PX * 4 // 3 if minor else TICK_PX)
    for note in lay.get("annotations", []):
        note["font"] = _raise(note.get("font"), TEXT_PX)
    for trace in fig["data"]:
        if trace.get("type") == "table":
            for part in ("header", "cells"):
                trace[part]["font"] = _raise(trace[part].get("font"), TEXT_PX)
        elif "text" in trace or "textfont" in trace:
            trace["textfont"] = _raise(trace.get("textfont"), TEXT_PX)
            if trace.get("type") == "bar":
                trace["constraintext"] = "none"  # Plotly would shrink a label wider than its bar below the size
        if "colorbar" in trace:
            bar = trace["colorbar"]
            bar["tickfont"] = _raise(bar.get("tickfont"), TICK_PX)
            if isinstance(bar.get("title"), dict):
                bar["title"]["font"] = _raise(bar["title"].get("font"), TEXT_PX)
    return fig


def _values_on(fig: Json, letter: str, number: str) -> Iterator[float]:
    """The finite values the traces put on axis `letter` `number` ('' for the first): x or y, by each trace's axes."""
    ref = letter + number
    for trace in fig["data"]:
        if trace.get("type") not in (None, "scatter", "bar"):
            continue
        if (trace.get(f"{letter}axis") or letter) != ref:
            continue
        values = trace.get(letter) or []
        if trace.get("type") == "bar" and trace.get("orientation") == "h" and letter == "y":
            continue  # a horizontal bar chart's y holds its categories
        for value in values:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                yield float(value)


def honest_axes(fig: Json) -> Json:
    """A linear axis that would start far from 0 starts at 0; a log axis whose data span under a decade becomes linear
    from 0 (a ×1.3 change drawn as what it is). Axes with a range set by their builder, category axes and axes without
    numbers are left as built."""
    lay = fig["layout"]
    for key in [k for k in lay if AXIS_KEY.match(k)]:
        axis = lay[key]
        letter, number = AXIS_KEY.match(key).groups()  # type: ignore[union-attr]
        if axis.get("range") is not None or axis.get("type") not in (None, "linear", "log"):
            continue
        values = list(_values_on(fig, letter, number))
        if axis.get("type") == "log":
            positive = [v for v in values if v > 0]
            if not positive:
                continue
            low, high = math.log10(min(positive)), math.log10(max(positive))
            if high - low < 1 and len(positive) == len(values):  # under a decade: linear from 0 shows it as it is
                axis.update(type="linear", rangemode="tozero")
                axis.pop("nticks", None)
                axis.pop("dtick", None)  # a decade step means nothing on a linear axis
        elif values:
            low, high = min(values), max(values)
            if (low > 0 or high < 0) and high - low < 0.5 * max(abs(low), abs(high)):
                axis["rangemode"] = "tozero"
    return fig


def room_for_bar_labels(fig: Json) -> Json:
    """Labels above (below) upright bars stay inside the plot, off the legend above it: the y axis reaches 40 % of its
    span past the tallest bar (room for a label turned upright when its neighbours are too close: −0.8165)."""
    bars = [t for t in fig["data"] if t.get("type") == "bar" and t.get("text") and t.get("orientation") != "h"]
    axis = fig["layout"].get("yaxis", {})
    values = [v for t in bars for v in t.get("y") or [] if isinstance(v, (int, float)) and math.isfinite(v)]
    if not values or axis.get("range") is not None or axis.get("type") not in (None, "linear"):
        return fig
    low, high = min(0.0, *values), max(0.0, *values)
    room = (high - low) * 0.4
    axis["range"] = [low - room if low < 0 else low, high + room if high > 0 else high]
    return fig


def for_the_back_row(fig: Json, theme: str) -> Json:
    """A slide's figure by the back row's rules: honest axes and room for bar labels in every theme, the sizes on
    the projector's."""
    room_for_bar_labels(fig)
    honest_axes(fig)
    return at_least_legible(fig) if theme == "slide" else fig
