"""The look of every chart, as Plotly JSON (plain dicts): palette, themes, axes, lines, reference lines and overflow
bands. The only place a chart's look is decided: the browser draws these figures (static/js/charts.js) and only fits
them to its box.

Plain dicts rather than plotly.graph_objects on the server path: building and validating a /norms figure through
graph_objects costs ~10x the dicts (docs/development.md, "Charts"); tests/test_figures_norms.py validates every
figure through graph_objects once, so the dicts stay valid Plotly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import numbers
from ..i18n import t

Json = dict[str, Any]

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
PALETTE = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "purple": "#CC79A7",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
SERIES = tuple(PALETTE[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky", "black"))
# Where the norm sits keeps one colour on every page, slide and notebook figure: Post-LN vermillion, Pre-LN blue.
PLACEMENT_COLORS = {"post": PALETTE["vermillion"], "pre": PALETTE["blue"]}
GREY = "#8a9099"  # what the data is read against: a lesson's input, a reference drawn under the curves
FLOAT16_MAX = 65504.0
THEMES: dict[str, Json] = {
    "normal": {"font": 14, "title": 17, "line": 2.5, "marker": 6, "grid": "#e2e5e9", "axis": "#444", "margin": 62},
    "slide": {"font": 22, "title": 28, "line": 5, "marker": 11, "grid": "#cfd3d8", "axis": "#000", "margin": 90},
}
FONT = 'system-ui, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif'
OVERFLOW_FILL = "rgba(213,94,0,0.16)"
# A reference line (a theory value, a format's limit, "1") is context, not data: thin, grey and under the traces, so a
# series lying on it stays visible (its label keeps the colour that says what it marks).
REFERENCE_LINE = {"color": "#808080", "dash": "dash", "width": 1.5}
# A reference label's name on its annotation, and the plot area its size is judged against: on a page and on the
# 1280x720 stage (width, height in px; a slide's text is the larger). Estimates: the browser measures, the server
# only needs to know which side of the line the label leaves the data visible on.
REFERENCE_LABEL = "reference"
PLOT_PX = {"normal": (700.0, 320.0), "slide": (600.0, 250.0)}
CHAR_EM = 0.6  # an average character's width, in em
LOG_AXIS_DECADES = 3.0  # a y axis turns logarithmic when its positive values span more than 3 decades


def theme_of(name: str) -> Json:
    return THEMES.get(name, THEMES["normal"])


def axis(theme: Json, title: str, log: bool = False) -> Json:
    """One axis in the theme; both scales write large numbers as powers of ten (no SI "20B")."""
    return {
        # standoff: a gap between tick labels and title (Plotly's default lets tall glyphs such as ‖ touch the ticks)
        "title": {"text": title, "font": {"size": theme["font"] + 1}, "standoff": round(theme["font"] * 0.8)},
        "type": "log" if log else "linear",
        "gridcolor": theme["grid"],
        "linecolor": theme["axis"],
        "linewidth": 2 if theme is THEMES["slide"] else 1,
        "showline": True,
        "zeroline": False,
        "ticks": "outside",
        "tickfont": {"size": theme["font"]},
        "automargin": True,
        **numbers.AXIS_NUMBERS,
    }


def layout(theme_name: str, title: str, x: str, y: str, ylog: bool = False) -> Json:
    """The base layout of every chart: title on the top edge, the legend in a row between it and the plot."""
    theme = theme_of(theme_name)
    return {
        "title": {
            "text": title,
            "font": {"size": theme["title"]},
            "x": 0.01,
            "xanchor": "left",
            "xref": "container",
            "y": 1,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": 10},
        },
        "font": {"family": FONT, "size": theme["font"], "color": "#111"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "margin": {"l": theme["margin"], "r": 24, "t": theme["title"] * 2 + 8, "b": theme["margin"]},
        "xaxis": axis(theme, x),
        "yaxis": axis(theme, y, log=ylog),
        "legend": {
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "font": {"size": theme["font"]},
        },
        "hovermode": "x unified",
        "hoverlabel": {"font": {"size": theme["font"]}},
        "shapes": [],
        "annotations": [],
    }


def finish(fig: Json, theme_name: str) -> Json:
    """The figure as Plotly keeps it: reference labels off the data (judged on the theme's plot area), no empty lists
    of shapes or notes (graph_objects drops them, and the notebook's figure must be the page's to the key)."""
    place_reference_labels(fig, theme_name)
    for key in ("shapes", "annotations"):
        if not fig["layout"].get(key):
            fig["layout"].pop(key, None)
    return fig


def escape(text: str) -> str:
    """Text safe inside HTML (hover boxes, exported files)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def finite(values: Sequence[float | None]) -> list[float | None]:
    """inf/NaN become gaps, as strict JSON's null does."""
    return [v if v is not None and math.isfinite(v) else None for v in values]


def line(theme_name: str, name: str, x: Sequence[Any], y: Sequence[float | None], color: str, **style: Any) -> Json:
    """A line series; missing values stay gaps. style: dash, width (× the theme's), markers; any other key (legendgroup,
    showlegend, xaxis, yaxis) is the trace's own."""
    theme = theme_of(theme_name)
    markers = style.pop("markers", True)
    dash, width = style.pop("dash", "solid"), style.pop("width", 1.0)
    return {
        "type": "scatter",
        "mode": "lines+markers" if markers else "lines",
        "name": name,
        "x": list(x),
        "y": finite(y),
        "line": {"color": color, "dash": dash, "width": theme["line"] * width},
        "marker": {"size": theme["marker"], "color": color},
        "hovertemplate": f"%{{y:.4g}}<extra>{escape(name)}</extra>",
        **style,
    }


def hline(
    theme_name: str,
    fig: Json,
    value: float,
    text: str,
    color: str = PALETTE["black"],
    below: bool = False,
    yaxis: str = "y",
) -> None:
    """A horizontal reference line across the plot (or the panel of `yaxis`, "y2": its x axis is "x2"), labelled at
    its right end, above it or `below` (a preference: place_reference_labels takes the side the data leave free)."""
    theme = theme_of(theme_name)
    xref = f"x{yaxis[1:]} domain"
    fig["layout"]["shapes"].append(
        {
            "type": "line",
            "xref": xref,
            "x0": 0,
            "x1": 1,
            "yref": yaxis,
            "y0": value,
            "y1": value,
            "layer": "below",
            "line": dict(REFERENCE_LINE),
        }
    )
    log = fig["layout"][f"yaxis{yaxis[1:]}"].get("type") == "log"  # annotations on a log axis: log10 units
    fig["layout"]["annotations"].append(
        {
            "name": REFERENCE_LABEL,  # placed by place_reference_labels once every series is drawn
            "xref": xref,
            "x": 1,
            "yref": yaxis,
            "y": math.log10(value) if log else value,
            "text": text,
            "showarrow": False,
            "xanchor": "right",
            "yanchor": "top" if below else "bottom",
            # off the line by a stroke, so a series lying on the reference stays visible beside its label
            "yshift": -theme["line"] if below else theme["line"],
            "font": {"size": theme["font"] - 1, "color": color},
            "bgcolor": "rgba(255,255,255,0.8)",
        }
    )


def plot_px(theme_name: str) -> tuple[float, float]:
    """The plot area a theme's text is judged against (width, height in px)."""
    return PLOT_PX.get(theme_name, PLOT_PX["normal"])


def place_reference_labels(fig: Json, theme_name: str) -> Json:
    """Each reference line's label on the side of its line (above or below) where it covers fewer data points: a
    label's box spans its text's width from the plot's right edge and its height from the line. Ties keep the side the
    builder asked for."""
    lay = fig["layout"]
    for note in lay.get("annotations") or []:
        if note.get("name") != REFERENCE_LABEL:
            continue
        below = note["yanchor"] == "top"
        covered = {side: _covered(fig, note, side, plot_px(theme_name)) for side in (below, not below)}
        if covered[not below] < covered[below]:
            below = not below
        shift = abs(note.get("yshift", 0))
        note.update(yanchor="top" if below else "bottom", yshift=-shift if below else shift)
    return fig


def _covered(fig: Json, note: Json, below: bool, plot: tuple[float, float]) -> int:
    """How many data points the label of `note` would cover, drawn above (or `below`) its line, on a plot area of
    `plot` px."""
    lay = fig["layout"]
    xname, yname = note["xref"].split()[0], note["yref"]
    xaxis, yaxis = lay.get(f"xaxis{xname[1:]}", {}), lay.get(f"yaxis{yname[1:]}", {})
    log = yaxis.get("type") == "log"
    points = [
        (x, math.log10(y) if log else y)
        for trace in fig["data"]
        if trace.get("xaxis", "x") == xname and trace.get("yaxis", "y") == yname
        for x, y in zip(trace.get("x") or [], trace.get("y") or [], strict=False)
        if isinstance(x, int | float) and isinstance(y, int | float) and math.isfinite(y) and (y > 0 or not log)
    ]
    if not points:
        return 0
    xs, ys = [x for x, _ in points], [y for _, y in points] + [note["y"]]
    low, high = yaxis.get("range") or (min(ys), max(ys))
    if high <= low or max(xs) <= min(xs):
        return 0
    size = note["font"]["size"]
    width_px, height_px = plot
    domain = xaxis.get("domain", [0, 1])
    wide = min(1.0, len(note["text"]) * CHAR_EM * size / (width_px * (domain[1] - domain[0])))
    tall = 1.6 * size / height_px  # a line of text and its padding, with room to spare
    left = max(xs) - wide * (max(xs) - min(xs))
    stroke = abs(note.get("yshift", 0)) / height_px  # what lies on the line's own stroke stays clear of the label
    sign = -1 if below else 1
    return sum(1 for x, y in points if x >= left and stroke < sign * (y - note["y"]) / (high - low) <= tall + stroke)


def reference(theme_name: str, name: str, x: Sequence[int], value: float, color: str = PALETTE["black"]) -> Json:
    """A horizontal reference line drawn as a legend entry (its label never sits on the data, on either scale)."""
    theme = theme_of(theme_name)
    trace = line(theme_name, name, [x[0], x[-1]], [value, value], color, dash="dash", markers=False)
    trace["line"]["width"] = max(1.5, theme["line"] * 0.6)
    return trace


def overflow_runs(x: Sequence[int], ys: Sequence[float | None]) -> list[tuple[int, int]]:
    """Runs of consecutive x where the series is missing (inf/NaN), as (from, to)."""
    runs: list[list[int]] = []
    for k, value in enumerate(x):
        if ys[k] is not None and math.isfinite(ys[k]):  # type: ignore[arg-type]
            continue
        if runs and runs[-1][1] == x[k - 1]:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return [(low, high) for low, high in runs]


def overflow_band(
    theme_name: str, fig: Json, low: int, high: int, text: str, right: bool = False, bottom: bool = False
) -> None:
    """Shade layers low..high, where values overflowed to inf/NaN, and say so inside the band (near its `bottom`
    where a reference series still climbs through the band's middle)."""
    theme = theme_of(theme_name)
    xs = [x for trace in fig["data"] for x in trace.get("x") or [] if isinstance(x, int | float)]
    if xs and max(xs) > min(xs):  # a label wider than its band would stretch the x axis past the data: two lines
        band_px = (high - low + 1) / (max(xs) - min(xs)) * plot_px(theme_name)[0]
        text = _wrapped(text, band_px, theme["font"])
    fig["layout"]["shapes"].append(
        {
            "type": "rect",
            "xref": "x",
            "x0": low - 0.5,
            "x1": high + 0.5,
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "fillcolor": OVERFLOW_FILL,
            "line": {"color": PALETTE["vermillion"], "width": 2, "dash": "dot"},
        }
    )
    fig["layout"]["annotations"].append(
        {
            "xref": "x",
            "x": high + 0.5 if right else low - 0.5,
            "yref": "paper",
            "y": 0.03 if bottom else 0.5,
            "yanchor": "bottom" if bottom else "middle",
            "xanchor": "right" if right else "left",
            "text": f"✕ {text}",
            "showarrow": False,
            "font": {"size": theme["font"], "color": PALETTE["vermillion"]},
            "bgcolor": "rgba(255,255,255,0.9)",
        }
    )


def _wrapped(text: str, width_px: float, size: float) -> str:
    """text on two lines, broken at the space nearest its middle, when one line would be wider than width_px."""
    if len(text) * CHAR_EM * size <= width_px or " " not in text:
        return text
    middle = len(text) / 2
    cut = min((i for i, c in enumerate(text) if c == " "), key=lambda i: abs(i - middle))
    return f"{text[:cut]}<br>{text[cut + 1 :]}"


def mark_overflow(
    theme_name: str, fig: Json, x: Sequence[int], ys: Sequence[float | None], lang: str, series: str = ""
) -> None:
    """Shade every overflowed run of a series and label it with its layers (and its name, where a chart has several)."""
    middle = (x[0] + x[-1]) / 2
    for low, high in overflow_runs(x, ys):
        where = (
            t("mark.overflow_at", lang, layer=low)
            if low == high
            else t("mark.overflow_range", lang, **{"from": low, "to": high})
        )
        overflow_band(theme_name, fig, low, high, f"{series}: {where}" if series else where, right=low > middle)


def wants_log(*series: Sequence[float | None]) -> bool:
    """True when the positive finite values span more than LOG_AXIS_DECADES decades."""
    seen = [v for ys in series for v in ys if v is not None and math.isfinite(v) and v > 0]
    return bool(seen) and math.log10(max(seen) / min(seen)) > LOG_AXIS_DECADES


def decade_ticks(axis_layout: Json, values: Sequence[float | None]) -> None:
    """A log axis over two to six decades of `values` labelled at its powers of ten only. Plotly's automatic ticks
    (plotly.js axes.autoTicks) label only powers of ten when the range spans more than 0.7 of a decade per tick
    (range ÷ nticks), and 2 and 5 between the decades below that, which crowd a short panel (the top one can meet the
    legend): so the range is set (the values' plus 5 % a side) and nticks to its whole decades rounded up. Under two
    decades the browser's 1-2-5 ticks are kept (static/js/charts.js tidyLogAxes); over six, nticks 6 gives decades."""
    logs = [math.log10(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    if not logs or not 2 <= max(logs) - min(logs) < 6:
        return
    pad = (max(logs) - min(logs)) * 0.05
    low, high = min(logs) - pad, max(logs) + pad
    axis_layout.update(range=[low, high], nticks=math.ceil(high - low))  # 0.73 to 1 decade a tick
