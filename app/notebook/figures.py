"""The pages' charts as plotly.graph_objects figures, for notebooks. /norms' chart is its Python builder's figure
(app/figures/norms.py), the very JSON the page draws; the others (a comparison, a gradient profile, a sweep's
heatmap) still use the palette and labels below, as static/js/charts.js does. tests/test_notebook.py and
tests/test_figures_norms.py hold them to the same data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from .. import numbers
from ..figures import Chart, build, gradients
from ..figures import tour as toured
from ..figures.style import OVERFLOW_FILL, overflow_runs
from ..figures.style import PALETTE as PALETTE
from ..figures.words import say
from ..i18n import t
from ..pages import explorer as _page_strings  # noqa: F401  (registers the charts' strings)

SERIES = [PALETTE[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky", "black")]
FLOAT16_MAX = 65504.0
LINE, MARKER, FONT = 2.5, 6, 14  # charts.js's "normal" theme


def finite(values: Sequence[float | None]) -> list[float | None]:
    """inf/NaN become gaps, as strict JSON's null does on the pages."""
    return [v if v is not None and math.isfinite(v) else None for v in values]


def fmt(value: float | None, lang: str = "en") -> str:
    """The site's one number formatter (app/numbers.py, format.js's twin, which i18n.js's fmt binds to the page's
    language): three significant digits, ×10ⁿ for the very small and large, 万/亿 in Chinese."""
    return numbers.fmt(value, lang=lang)


def base_figure(title: str, x: str, y: str, ylog: bool = False) -> go.Figure:
    axis = {"showline": True, "zeroline": False, "ticks": "outside", "gridcolor": "#e2e5e9", "linecolor": "#444"}
    return go.Figure(
        layout={
            "title": {"text": title, "x": 0.01, "xanchor": "left"},
            "font": {"size": FONT, "color": "#111"},
            "paper_bgcolor": "#ffffff",
            "plot_bgcolor": "#ffffff",
            "xaxis": {**axis, "title": {"text": x}},
            "yaxis": {**axis, "title": {"text": y}, "type": "log" if ylog else "linear", "exponentformat": "power"},
            "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"},
            "hovermode": "x unified",
        }
    )


def add_line(fig: go.Figure, name: str, x: Sequence[Any], y: Sequence[float | None], color: str, **style: Any) -> None:
    dash, width, markers = style.get("dash", "solid"), style.get("width", 1.0), style.get("markers", True)
    fig.add_scatter(
        x=list(x),
        y=finite(y),
        name=name,
        mode="lines+markers" if markers else "lines",
        line={"color": color, "dash": dash, "width": LINE * width},
        marker={"size": MARKER, "color": color},
        hovertemplate=f"%{{y:.4g}}<extra>{name}</extra>",
    )


def add_hline(fig: go.Figure, value: float, text: str, color: str = PALETTE["black"], below: bool = False) -> None:
    fig.add_hline(
        y=value,
        line={"color": color, "dash": "dash", "width": max(1.5, LINE * 0.6)},
        annotation={
            "text": text,
            "xanchor": "right",
            "yanchor": "top" if below else "bottom",
            "font": {"color": color},
        },
        annotation_position="top right" if not below else "bottom right",
    )


def mark_overflow(fig: go.Figure, x: Sequence[int], ys: Sequence[float | None], lang: str) -> None:
    """Shade each run of layers whose values overflowed (inf/NaN) and say which, as charts.js's markOverflow."""
    for low, high in overflow_runs(x, ys):
        text = (
            t("mark.overflow_at", lang, layer=low)
            if low == high
            else t("mark.overflow_range", lang, **{"from": low, "to": high})
        )
        fig.add_vrect(
            x0=low - 0.5,
            x1=high + 0.5,
            fillcolor=OVERFLOW_FILL,
            line={"color": PALETTE["vermillion"], "width": 2, "dash": "dot"},
            annotation={"text": text, "font": {"color": PALETTE["vermillion"]}},
        )


def stream(trace: dict[str, Any], field: str) -> tuple[list[int], list[float | None]]:
    """Layer 0 (the embedding) and every block's value of one field."""
    layers = trace["layers"]
    return [0, *(layer["layer"] for layer in layers)], [trace["embedding"][field], *(layer[field] for layer in layers)]


def norms_figure(trace: dict[str, Any], lang: str = "en", log: bool | None = None, theme: str = "normal") -> go.Figure:
    """The /norms chart: its builder's figure (app/figures/norms.py), on the scale it chose unless `log` says,
    with the slide theme's patch when theme="slide" (what the page applies for those view settings)."""
    views = [*(["slide"] if theme == "slide" else []), *([] if log is None else ["log" if log else "linear"])]
    return plotly_figure(build("norms", trace, lang).view(*views))


def gradients_figure(traces: Sequence[tuple[str, dict[str, Any]]], lang: str = "en", log: bool = True) -> go.Figure:
    """Mean token gradient per layer (the /gradients profile), one series per named trace."""
    title, y = (say(gradients.STRINGS, key, lang) for key in ("chart.grad_profile.title", "chart.grad_profile.y"))
    fig = base_figure(title, t("axis.layer", lang), y, log)
    for i, (name, trace) in enumerate(traces):
        x, grads = stream(trace, "grad_norm")
        add_line(fig, name, x, grads, SERIES[i % len(SERIES)], dash="solid" if i == 0 else "dash")
    if traces:
        x, grads = stream(traces[0][1], "grad_norm")
        mark_overflow(fig, x, grads, lang)
    return fig


def compare_figure(traces: Sequence[tuple[str, dict[str, Any]]], lang: str = "en", log: bool = False) -> go.Figure:
    """The home page's tour: the stream's norm per layer for each variant, and √d_model where Post-LN pins it."""
    tour = [(tr["config"]["depth"], tr["config"]["norm_position"]) for _, tr in traces] == [(24, "post"), (24, "pre")]
    # the tour's title names its two variants
    title = say(toured.STRINGS, "chart.tour.title", lang, depth=24) if tour else t("chart.norms.title", lang)
    fig = base_figure(title, t("axis.layer", lang), t("chart.norms.y", lang), ylog=log)
    for i, (name, trace) in enumerate(traces):
        x, act = stream(trace, "act_norm")
        add_line(fig, name, x, act, SERIES[i % len(SERIES)])
    widths = {trace["config"]["d_model"] for _, trace in traces}
    pinned = any(trace["config"]["norm_position"] == "post" for _, trace in traces)
    if pinned and len(widths) == 1:
        root = math.sqrt(widths.pop())
        add_hline(fig, root, t("series.theory_post", lang, value=fmt(root, lang)), below=True)
    return fig


def chart_figure(chart: Chart, theme: str = "normal") -> go.Figure:
    """A built chart as the page draws it, in the normal theme or (theme="slide") with the projector's sizes."""
    if theme not in ("normal", "slide"):
        raise ValueError(f"theme: normal or slide; got {theme!r}")
    return plotly_figure(chart.view(*(["slide"] if theme == "slide" else [])))


def plotly_figure(figure: dict[str, Any]) -> go.Figure:
    """A builder's figure (app/figures/) as graph_objects, to the key what the page draws: no template (plotly.py's
    default one would restyle it)."""
    fig = go.Figure(figure)
    fig.layout.template = None
    return fig
