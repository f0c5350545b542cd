"""Every chart kind of the lecture deck as a plotly figure: static/js/lecture/figures.js in Python, from the same
slide data (app/experiments/lecture) and the same answers. tests/test_notebook.py draws every slide of the deck."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import plotly.graph_objects as go

from ..experiments.lecture.claims import evaluate, read_path
from ..i18n import t
from ..numbers import fmt
from . import figures
from .figures import PALETTE

Answers = list[Any]
Slide = dict[str, Any]
LAW_COLORS = {"sqrt": "black", "line": "purple", "power": "vermillion", "independent": "green"}  # figures.js's
LAW_DASHES = {"independent": "dot"}


def per_layer(answer: dict[str, Any], field: str) -> tuple[list[int], list[float | None], bool]:
    """figures.js's perLayer: a trace's values per layer (layer 0, the embedding, first), or a chain lesson's or a
    real model's (`field` a path such as 'stream.mean'), and whether a value is null (overflowed). A field the
    embedding does not have (branch_norm) is a gap at layer 0, not an overflow (undefined in the browser)."""
    layers = answer.get("layers")
    if layers and isinstance(layers[0], dict) and "layer" in layers[0]:
        values = [answer["embedding"].get(field, _ABSENT), *(layer.get(field, _ABSENT) for layer in layers)]
        x = [0, *(layer["layer"] for layer in layers)]
    else:
        x, values = list(layers or []), list(read_path(answer, field) or [])
    return x, [None if v is _ABSENT else v for v in values], any(v is None for v in values)


_ABSENT = object()


def format_number(value: Any, digits: int, lang: str) -> str:
    """claims.js's formatNumber: the site's one formatter (app/numbers.py, format.js's twin) with `digits`
    significant digits (0: an integer); no number (an overflow in strict JSON) named in words."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None or not math.isfinite(value):
        return t("lecture.overflow", lang)
    return fmt(value, digits=digits, lang=lang)


def overflow_band(
    fig: go.Figure, low: int, high: int, text: str, anchor_right: bool = False, bottom: bool = False
) -> None:
    """charts.js's overflowBand: shade layers low..high, where values overflowed to inf/NaN, and say so."""
    fig.add_shape(type="rect", xref="x", x0=low - 0.5, x1=high + 0.5, yref="paper", y0=0, y1=1,
                  fillcolor="rgba(213,94,0,0.16)", line={"color": PALETTE["vermillion"], "width": 2, "dash": "dot"})  # fmt: skip
    fig.add_annotation(xref="x", x=high + 0.5 if anchor_right else low - 0.5, yref="paper", y=0.03 if bottom else 0.5,
                       yanchor="bottom" if bottom else "middle", xanchor="right" if anchor_right else "left",
                       text=f"✕ {text}", showarrow=False, font={"color": PALETTE["vermillion"]},
                       bgcolor="rgba(255,255,255,0.9)")  # fmt: skip


def mark_overflow(fig: go.Figure, x: Sequence[int], ys: Sequence[float | None], series: str, lang: str) -> None:
    """charts.js's markOverflow: every run of layers with no value, shaded and labelled with the series' name."""
    runs: list[list[int]] = []
    for k, value in enumerate(x):
        if ys[k] is not None:
            continue
        if runs and runs[-1][1] == x[k - 1]:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    middle = (x[0] + x[-1]) / 2
    for low, high in runs:
        where = (
            t("mark.overflow_at", lang, layer=low)
            if low == high
            else t("mark.overflow_range", lang, **{"from": low, "to": high})
        )
        overflow_band(fig, low, high, f"{series}: {where}" if series else where, anchor_right=low > middle)


def layers_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    """One line per series over the layers, a second panel when the chart has one, overflow and underflow marked,
    overlays on top (figures.js's layersFigure)."""
    first = chart["panels"][0]
    x_title = chart["x"][lang] if "x" in chart else t("axis.layer", lang)  # the depth-scan slide: x is the depth, log
    fig = figures.base_figure(chart["title"][lang], x_title, first["y"][lang], ylog=first["log"])
    if chart.get("xlog"):
        fig.update_xaxes(type="log")
    if "range" in first:
        fig.update_yaxes(range=first["range"])
    if first["log"]:
        fig.update_yaxes(nticks=6)  # powers of ten, not every digit between them
    two = len(chart["panels"]) > 1
    if two:
        second = chart["panels"][1]
        fig.update_layout(
            xaxis={"domain": [0, 0.4]},  # the gap holds the right panel's y title and ticks
            xaxis2={"domain": [0.63, 1], "anchor": "y2", "title": {"text": t("axis.layer", lang)}},
            yaxis2={"anchor": "x2", "title": {"text": second["y"][lang]}, "type": "log" if second["log"] else "linear"},
        )
        if "range" in second:
            fig.update_layout(yaxis2={"range": second["range"]})
        if second["log"]:
            fig.update_layout(yaxis2={"nticks": 6})
    named: set[str] = set()
    for series in chart["series"]:
        x, y, overflowed = per_layer(answers[series["source"]], series["field"])
        name = series["label"][lang]
        figures.add_line(fig, name, x, y, PALETTE[series["color"]], dash=series["dash"], markers=len(x) <= 30)
        fig.data[-1].update(legendgroup=name, showlegend=name not in named)
        named.add(name)
        if series["panel"]:
            fig.data[-1].update(xaxis="x2", yaxis="y2")
        elif overflowed:
            before = len(fig.layout.annotations)
            mark_overflow(fig, x, y, name, lang)
            if two:  # keep the label inside the left panel (top left, smaller, on two lines), off both y titles
                for note in fig.layout.annotations[before:]:
                    note.update(xref="paper", x=0.01, xanchor="left", y=0.98, yanchor="top",
                                text=note.text.replace(": ", ":<br>"), font={"size": figures.FONT - 6})  # fmt: skip
        if chart["panels"][series["panel"]]["log"]:
            _mark_underflow(fig, x, y, name, lang)
    for overlay in chart.get("overlays", []):
        _overlay(fig, chart, answers, overlay, lang)
    if chart.get("xlog"):  # figures.js: a tick at each depth, not Plotly's 2 3 4 5 between decades
        x, _, _ = per_layer(answers[chart["series"][0]["source"]], chart["series"][0]["field"])
        fig.update_xaxes(tickvals=x, ticktext=[str(v) for v in x])
    return fig


def _mark_underflow(fig: go.Figure, x: list[int], y: list[float | None], name: str, lang: str) -> None:
    """A log axis cannot show 0: say where a series underflowed to exactly 0 (figures.js's markUnderflow)."""
    zeros = [layer for layer, value in zip(x, y, strict=True) if value == 0]
    if zeros:
        text = t("lecture.underflow", lang, name=name, **{"from": min(zeros), "to": max(zeros)})
        fig.add_annotation(xref="paper", yref="paper", x=0.01, y=0.02, xanchor="left", yanchor="bottom", showarrow=False,
                           text=text, font={"size": figures.FONT - 4, "color": PALETTE["vermillion"]},
                           bgcolor="rgba(255,255,255,0.85)")  # fmt: skip


def _overlay(fig: go.Figure, chart: dict[str, Any], answers: Answers, overlay: dict[str, Any], lang: str) -> None:
    if overlay["type"] == "hline":
        spec = overlay["label"]
        text = t(spec["key"], lang, value=spec.get("value")) if "key" in spec else spec[lang]
        color = PALETTE[overlay.get("color", "black")]
        figures.add_hline(fig, overlay["value"], text, color, below=overlay.get("below", False))
        return
    # "law_fit": a law the server fitted from ‖x₀‖ (POST /api/laws, app/experiments/laws.py), read from its answer
    laws = answers[overlay["source"]]
    fit = laws["independent"] if overlay["law"] == "independent" else laws["fits"].get(overlay["law"])
    if not fit:
        return
    p = format_number(fit["p"], 2, lang) if fit.get("p") is not None else ""
    name = t(f"lecture.law.{overlay['law']}", lang, p=p, error=format_number(fit["error"], 2, lang))
    color = PALETTE[LAW_COLORS[overlay["law"]]]
    dash = LAW_DASHES.get(overlay["law"], "dash")
    figures.add_line(fig, name, laws["layers"], fit["curve"], color, dash=dash, markers=False, width=0.8)


def chain_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], t("chain.axis.x", lang), t("chain.axis.y", lang), ylog=True)
    for series in chart["series"]:
        answer = answers[series["source"]]
        name = series["label"][lang]
        figures.add_line(fig, name, answer["layers"], answer[series["field"]], PALETTE[series["color"]], markers=False)
    figures.add_hline(fig, 1.0, t("chain.mark.one", lang))
    return fig


def precision_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    snow = answers[0]["snowball"]
    fig = figures.base_figure(chart["title"][lang], t("axis.layer_plain", lang), t("precision.axis.y", lang), True)
    name32, name16 = t("precision.series.float32", lang), t("precision.series.float16", lang)
    figures.add_line(
        fig, name32, snow["layers"], snow["float32_max_abs"], PALETTE["black"], dash="dash", width=0.7, markers=False
    )
    figures.add_line(fig, name16, snow["layers"], snow["float16_max_abs"], PALETTE["blue"])
    figures.add_hline(fig, figures.FLOAT16_MAX, t("series.fp16_max", lang), PALETTE["vermillion"])
    if snow["overflow_layer"] is not None:  # low: the float32 series still climbs through the band's middle
        at = t("mark.overflow", lang, layer=snow["overflow_layer"])
        overflow_band(fig, snow["overflow_layer"], len(snow["layers"]), at, bottom=True)
    return fig


def softmax_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    sweep = answers[0]["sweep"]
    fig = figures.base_figure(chart["title"][lang], t("softmax.axis.scale", lang), t("softmax.axis.value", lang), True)
    fig.update_xaxes(type="log")
    x = [row["scale"] for row in sweep]
    for field, key, color in (
        ("entropy", "softmax.series.entropy", "green"),
        ("max_prob", "softmax.series.max_prob", "orange"),
        ("jacobian_norm", "softmax.series.jacobian", "vermillion"),
    ):
        figures.add_line(fig, t(key, lang), x, [row[field] for row in sweep], PALETTE[color], markers=False)
    fig.update_yaxes(range=[-16, 0.5])  # below 1e-16 a gradient is lost next to a weight of size 1, even in float64
    return fig


def layernorm_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], t("layernorm.axis.x", lang), t("layernorm.axis.y", lang))
    colors = {"x": "#8a9099", "normalized": PALETTE["blue"], "output": PALETTE["vermillion"]}
    for field in chart["bars"]:
        y = chart["sources"][0]["body"]["x"] if field == "x" else answers[0][field]
        text = [str(v) if field == "x" else format_number(v, 4, lang) for v in y]
        fig.add_bar(name=t(f"lecture.bar.{field}", lang), x=list(range(1, len(y) + 1)), y=y,
                    marker={"color": colors[field]}, text=text, textposition="outside", cliponaxis=False)  # fmt: skip
    fig.update_layout(barmode="group", xaxis={"dtick": 1})
    return fig


def train_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], t("chart.train_loss.x", lang), t("chart.train_loss.y", lang), True)
    colors = ["vermillion", "blue", "orange", "green"]
    labels = iter(chart["labels"])
    for i, (recording, source) in enumerate(zip(answers, chart["sources"], strict=True)):
        for run in range(len(source["body"]["runs"])):
            series = recording["runs"][run]
            index = i * len(source["body"]["runs"]) + run
            figures.add_line(
                fig, next(labels)[lang], series["steps"], series["loss"], PALETTE[colors[index]], markers=False
            )
    body = chart["sources"][0]["body"]
    symbols = body["runs"][0]["vocab_size"] - 1
    chance = t("chart.train_loss.chance", lang, symbols=symbols, value=format_number(math.log(symbols), 3, lang))
    figures.add_hline(fig, math.log(symbols), chance, below=True)
    fig.update_xaxes(range=[0, body["steps"]])
    return fig


def bars_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    """One horizontal bar per source on a log axis; 0 and overflow said in words where the bar would start."""
    values = [read_path(answer, chart["field"]) for answer in answers]
    names = [label[lang] for label in chart["labels"]]
    fig = figures.base_figure(chart["title"][lang], chart["x"][lang], "")
    shown = [v if v is not None and v > 0 else None for v in values]
    colors = [PALETTE["blue"] if v is not None and 0.05 < v < 20 else PALETTE["vermillion"] for v in values]
    text = [t("lecture.zero", lang) if v == 0 else format_number(v, 2, lang) for v in values]
    fig.add_bar(orientation="h", y=names, x=shown, marker={"color": colors}, text=text, textposition="outside",
                showlegend=False, cliponaxis=False, hovertemplate="%{y}: %{x:.3g}<extra></extra>")  # fmt: skip
    finite = [v for v in shown if v is not None]
    low = math.floor(math.log10(min(finite))) - 1 if finite else 0
    high = math.ceil(math.log10(max(finite))) + 1 if finite else 1
    fig.update_xaxes(type="log", range=[low, high], dtick=max(1, math.ceil((high - low) / 5)), tickangle=0)
    for name, v in zip(names, values, strict=True):  # no bar on a log axis for 0: say it where the bar would start
        if not (v is not None and v > 0):
            fig.add_annotation(xref="x", x=low, yref="y", y=name, xanchor="left", showarrow=False,
                               text=t("lecture.zero" if v == 0 else "lecture.overflow", lang),
                               font={"size": figures.FONT - 4, "color": PALETTE["vermillion"]})  # fmt: skip
    fig.update_yaxes(type="category", autorange="reversed", showgrid=False)
    # x = 1: the gradient arrives at block 1 as large as it left block 96
    fig.add_shape(type="line", xref="x", x0=1, x1=1, yref="paper", y0=0, y1=1,
                  line={"color": PALETTE["black"], "dash": "dot", "width": 2})  # fmt: skip
    fig.update_layout(hovermode="closest")
    return fig


def _cell_text(cell: dict[str, Any], measured: dict[str, Any], lang: str) -> str:
    """A summary cell: its value with its slide's digits, or a range low – high where the seeds disagree."""
    text = format_number(measured[cell["value"]], cell["digits"], lang)
    return f"{text} – {format_number(measured[cell['upto']], cell['digits'], lang)}" if "upto" in cell else text


def table_figure(chart: dict[str, Any], answers: Answers, lang: str, slide: Slide | None = None) -> go.Figure:
    """One row per source and one column per path; or, with `cells` (the summary), each cell the value its own
    slide showed, with that slide's digits, read from this slide's claim (null: no slide showed it, blank)."""
    fig = figures.base_figure(chart["title"][lang], "", "")
    if "cells" in chart:
        if slide is None:
            raise ValueError("a table with cells needs its slide: its claim names the cells' values")
        measured = evaluate(slide["claim"], answers)
        columns = [
            [_cell_text(row[j], measured, lang) if row[j] else "" for row in chart["cells"]]
            for j in range(len(chart["columns"]))
        ]
    else:
        columns = [[format_number(read_path(a, c["path"]), 3, lang) for a in answers] for c in chart["columns"]]
    header = ["", *(f"<b>{c['label'][lang]}</b>".replace("\n", "<br>") for c in chart["columns"])]
    rows = [f"<b>{row[lang]}</b>".replace("\n", "<br>") for row in chart["rows"]]
    fig.add_table(columnwidth=[1.5, *(1 for _ in chart["columns"])], header={"values": header, "align": ["left", "right"]},
                  cells={"values": [rows, *columns], "align": ["left", "right"]})  # fmt: skip
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, showlegend=False)
    return fig


KINDS: dict[str, Callable[[dict[str, Any], Answers, str, Slide | None], go.Figure]] = {
    "layers": layers_figure,
    "chain": chain_figure,
    "precision": precision_figure,
    "softmax": softmax_figure,
    "layernorm": layernorm_figure,
    "train": train_figure,
    "bars": bars_figure,
    "table": table_figure,
}
