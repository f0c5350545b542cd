"""The pages' charts as plotly.graph_objects figures, for notebooks: the same palette, labels (app/i18n.py, both
languages), theory lines and overflow marks as static/js/charts.js, static/js/pages/norms.js (a trace),
home.js (a comparison) and gradients.js (a sweep's heatmap). tests/test_notebook.py holds them to the same data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from .. import numbers
from ..config import VARIANTS
from ..experiments.laws import Fit, growth_laws
from ..i18n import t
from ..pages import explorer as _page_strings  # noqa: F401  (registers the charts' strings)

# Okabe & Ito (2008), "Color Universal Design": the palette of static/js/charts.js.
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
SERIES = [PALETTE[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky", "black")]
FLOAT16_MAX = 65504.0
LINE, MARKER, FONT = 2.5, 6, 14  # charts.js's "normal" theme
DIVERGING = [[0, "#b2182b"], [0.25, "#ef8a62"], [0.5, "#f7f7f7"], [0.75, "#67a9cf"], [1, "#2166ac"]]


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
    runs: list[list[int]] = []
    for k, value in enumerate(x):
        if ys[k] is not None and math.isfinite(ys[k]):  # type: ignore[arg-type]
            continue
        if runs and runs[-1][1] == x[k - 1]:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    for low, high in runs:
        text = (
            t("mark.overflow_at", lang, layer=low)
            if low == high
            else t("mark.overflow_range", lang, **{"from": low, "to": high})
        )
        fig.add_vrect(
            x0=low - 0.5,
            x1=high + 0.5,
            fillcolor="rgba(213,94,0,0.16)",
            line={"color": PALETTE["vermillion"], "width": 2, "dash": "dot"},
            annotation={"text": text, "font": {"color": PALETTE["vermillion"]}},
        )


def stream(trace: dict[str, Any], field: str) -> tuple[list[int], list[float | None]]:
    """Layer 0 (the embedding) and every block's value of one field."""
    layers = trace["layers"]
    return [0, *(layer["layer"] for layer in layers)], [trace["embedding"][field], *(layer[field] for layer in layers)]


GROWS_ABOVE = 1.5  # norms.js: a stream that grew less than this from layer 1 to L is not fitted with a growth law


def laws_for(trace: dict[str, Any]) -> tuple[list[tuple[str, Fit]], tuple[str, Fit]] | None:
    """norms.js's lawsFor: the growth laws compared on this trace when its stream grew (None otherwise)."""
    growth = trace["summary"]["norm_growth"]
    if is_pinned(trace["config"]) or not (growth is not None and growth > GROWS_ABOVE):
        return None
    return growth_laws(finite(stream(trace, "act_norm")[1]))


def law_name(key: str, fit: Fit, lang: str) -> str:
    """norms.js's lawName (the line's slope is its c: (a + c·l)¹)."""
    return t(f"series.law.{key}", lang, c=fmt(fit.c, lang), slope=fmt(fit.c, lang), p=fmt(fit.p, lang))


def is_pinned(cfg: dict[str, Any]) -> bool:
    """Post placement of a norm that pins every token at √d (its pins_token in the variant table), as norms.js."""
    return cfg["norm_position"] == "post" and VARIANTS["norm"][cfg["norm"]].pins_token


def norms_figure(trace: dict[str, Any], lang: str = "en", log: bool = False) -> go.Figure:
    """The /norms chart: the stream's mean token norm, each block's output, the theory, the format's limits."""
    cfg = trace["config"]
    x, act = stream(trace, "act_norm")
    _, max_abs = stream(trace, "act_max_abs")
    fig = base_figure(t("chart.norms.title", lang), t("axis.layer", lang), t("chart.norms.y", lang), ylog=log)
    add_line(fig, t("series.act_norm", lang), x, act, PALETTE["blue"])
    branches = [layer["branch_norm"] for layer in trace["layers"]]
    add_line(fig, t("series.branch_norm", lang), x[1:], branches, PALETTE["vermillion"], width=0.8)
    laws = laws_for(trace)
    if laws:  # the law that fits best, over blocks 1..L (no point at the embedding)
        key, best = laws[1]
        add_line(
            fig,
            law_name(key, best, lang),
            x,
            [None, *best.curve],
            PALETTE["black"],
            dash="dash",
            markers=False,
            width=0.6,
        )
    if is_pinned(cfg):
        root = math.sqrt(cfg["d_model"])
        add_hline(fig, root, t("series.theory_post", lang, value=fmt(root, lang)))
    seen = [v for v in [*finite(max_abs), *finite(act)] if v is not None]
    peak = max(seen) if seen else 0.0
    overflowed = any(v is None for v in finite(max_abs))
    if cfg["dtype"] != "float32" or peak > FLOAT16_MAX / 10:
        add_line(fig, t("series.max_abs", lang), x, max_abs, PALETTE["green"], dash="dot", width=0.7)
    if FLOAT16_MAX / 10 < peak < FLOAT16_MAX * 1e3 or (cfg["dtype"] == "float16" and overflowed):
        add_hline(fig, FLOAT16_MAX, t("series.fp16_max", lang), PALETTE["vermillion"])
    limit = trace["summary"]["dtype_max"]
    if cfg["dtype"] == "bfloat16" and (peak > limit / 10 or overflowed):
        add_hline(
            fig, limit, t("series.dtype_max", lang, dtype=cfg["dtype"], value=fmt(limit, lang)), PALETTE["vermillion"]
        )
    mark_overflow(fig, x, max_abs, lang)
    return fig


def gradients_figure(traces: Sequence[tuple[str, dict[str, Any]]], lang: str = "en", log: bool = True) -> go.Figure:
    """Mean token gradient per layer (the /gradients profile), one series per named trace."""
    fig = base_figure(t("chart.grad_profile.title", lang), t("axis.layer", lang), t("chart.grad_profile.y", lang), log)
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
    title = t("chart.tour.title" if tour else "chart.norms.title", lang)  # the tour's title names its two variants
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


def heatmap_figure(rows: Sequence[dict[str, Any]], lang: str = "en", relative: bool = True) -> go.Figure:
    """The /gradients heatmap: log10 of the gradient reaching each layer at each depth (relative: ÷ the last layer's)."""
    deepest = max((row["depth"] for row in rows), default=1)
    layers = list(range(deepest + 1))
    by_depth = {row["depth"]: row for row in rows}
    depths = sorted(by_depth)
    values: list[list[float | None]] = []
    for depth in depths:
        row = by_depth[depth]
        grads = finite([row["embedding_grad_norm"], *row["grad_norm"]])
        scale = (grads[-1] or math.nan) if relative else 1.0
        values.append([g / scale if g is not None and l < len(grads) else None for l, g in _padded(grads, layers)])
    z = [[math.log10(v) if v is not None and v > 0 and math.isfinite(v) else None for v in row] for row in values]
    colorbar = "chart.grad_heatmap.colorbar_rel" if relative else "chart.grad_heatmap.colorbar"
    fig = base_figure(t("chart.grad_heatmap.title", lang), t("axis.layer", lang), t("axis.depth", lang))
    fig.add_heatmap(
        x=layers,
        y=depths,
        z=z,
        customdata=values,
        colorscale=DIVERGING if relative else "Viridis",
        zmid=0 if relative else None,
        hoverongaps=False,
        hovertemplate="l=%{x}, L=%{y}: %{customdata:.3g}<extra></extra>",
        colorbar={"title": {"text": t(colorbar, lang), "side": "right"}},
    )
    fig.update_layout(plot_bgcolor="#bdbdbd", hovermode="closest")
    return fig


def _padded(grads: list[float | None], layers: list[int]) -> list[tuple[int, float | None]]:
    return [(l, grads[l] if l < len(grads) else None) for l in layers]
