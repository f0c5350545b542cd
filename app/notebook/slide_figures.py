"""Every chart kind of the lecture deck as a plotly figure: static/js/lecture/figures.js in Python, from the same
slide data (app/experiments/lecture) and the same answers. tests/test_notebook.py draws every slide of the deck."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

from ..experiments.lecture.claims import read_path
from ..i18n import t
from . import figures
from .figures import PALETTE

Answers = list[Any]


def per_layer(answer: dict[str, Any], field: str) -> tuple[list[int], list[float | None]]:
    """A trace's values per layer (layer 0, the embedding, first), or a chain lesson's (layers 1..L)."""
    if answer["layers"] and isinstance(answer["layers"][0], dict):
        return figures.stream(answer, field)
    return list(answer["layers"]), list(answer[field])


def format_number(value: Any, digits: int, lang: str) -> str:
    """claims.js's formatNumber: `digits` significant digits, ×10ⁿ for the very small and large, overflow named."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return t("lecture.overflow", lang)
    if isinstance(value, bool):
        return str(value).lower()
    if digits == 0 or value == 0:
        return str(round(value))
    if abs(value) < 1e-3 or abs(value) >= 1e5:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa.replace('-', '−')}×10{str(int(exponent)).translate(SUPERSCRIPT)}"
    return f"{value:#.{digits}g}".rstrip(".").replace("-", "−")


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def layers_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    """One line per series over the layers, a second panel when the chart has one, overlays on top."""
    first = chart["panels"][0]
    fig = figures.base_figure(chart["title"][lang], t("axis.layer", lang), first["y"][lang], ylog=first["log"])
    if "range" in first:
        fig.update_yaxes(range=first["range"])
    if len(chart["panels"]) > 1:
        second = chart["panels"][1]
        fig.update_layout(
            xaxis={"domain": [0, 0.42]},
            xaxis2={"domain": [0.6, 1], "anchor": "y2", "title": {"text": t("axis.layer", lang)}},
            yaxis2={"anchor": "x2", "title": {"text": second["y"][lang]}, "type": "log" if second["log"] else "linear"},
        )
        if "range" in second:
            fig.update_layout(yaxis2={"range": second["range"]})
    for series in chart["series"]:
        x, y = per_layer(answers[series["source"]], series["field"])
        name = series["label"][lang]
        figures.add_line(fig, name, x, y, PALETTE[series["color"]], dash=series["dash"], markers=len(x) <= 30)
        if series["panel"]:
            fig.data[-1].update(xaxis="x2", yaxis="y2")
        elif any(v is None for v in y):
            figures.mark_overflow(fig, x, y, lang)
    for overlay in chart.get("overlays", []):
        _overlay(fig, chart, answers, overlay, lang)
    return fig


def _overlay(fig: go.Figure, chart: dict[str, Any], answers: Answers, overlay: dict[str, Any], lang: str) -> None:
    if overlay["type"] == "hline":
        spec = overlay["label"]
        text = t(spec["key"], lang, value=spec.get("value")) if "key" in spec else spec[lang]
        color = PALETTE[overlay.get("color", "black")]
        figures.add_hline(fig, overlay["value"], text, color, below=overlay.get("below", False))
        return
    series = chart["series"][overlay["series"]]  # "sqrt_fit": √(‖x₀‖² + c·l), c by least squares, as on /norms
    x, y = per_layer(answers[series["source"]], series["field"])
    c, curve = figures.fit_sqrt_growth(figures.finite(y))
    name = t("series.theory_pre", lang, c=format_number(c, 3, lang))
    figures.add_line(fig, name, x, curve, PALETTE["black"], dash="dash", markers=False, width=0.6)


def chain_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], t("chain.axis.x", lang), t("chain.axis.y", lang), ylog=True)
    for series in chart["series"]:
        answer = answers[series["source"]]
        name = series["label"][lang]
        figures.add_line(fig, name, answer["layers"], answer[series["field"]], PALETTE[series["color"]], markers=False)
    figures.add_hline(fig, 1.0, t("chain.mark.one", lang))
    return fig


def precision_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    snow = answers[0]["snowball"]
    fig = figures.base_figure(chart["title"][lang], t("axis.layer_plain", lang), t("precision.axis.y", lang), True)
    name32, name16 = t("precision.series.float32", lang), t("precision.series.float16", lang)
    figures.add_line(fig, name32, snow["layers"], snow["float32_max_abs"], PALETTE["black"], dash="dash", width=0.7)
    figures.add_line(fig, name16, snow["layers"], snow["float16_max_abs"], PALETTE["blue"])
    figures.add_hline(fig, figures.FLOAT16_MAX, t("series.fp16_max", lang), PALETTE["vermillion"])
    if snow["overflow_layer"] is not None:
        at = t("mark.overflow", lang, layer=snow["overflow_layer"])
        fig.add_vrect(x0=snow["overflow_layer"] - 0.5, x1=len(snow["layers"]) + 0.5, fillcolor="rgba(213,94,0,0.16)",
                      line={"color": PALETTE["vermillion"], "width": 2, "dash": "dot"}, annotation={"text": at})  # fmt: skip
    return fig


def softmax_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
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


def layernorm_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], t("layernorm.axis.x", lang), t("layernorm.axis.y", lang))
    colors = {"x": "#8a9099", "normalized": PALETTE["blue"], "output": PALETTE["vermillion"]}
    for field in chart["bars"]:
        y = chart["sources"][0]["body"]["x"] if field == "x" else answers[0][field]
        text = [str(v) if field == "x" else format_number(v, 4, lang) for v in y]
        fig.add_bar(name=t(f"lecture.bar.{field}", lang), x=list(range(1, len(y) + 1)), y=y,
                    marker={"color": colors[field]}, text=text, textposition="outside", cliponaxis=False)  # fmt: skip
    fig.update_layout(barmode="group", xaxis={"dtick": 1})
    return fig


def train_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
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


def bars_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    values = [read_path(answer, chart["field"]) for answer in answers]
    names = [label[lang] for label in chart["labels"]]
    fig = figures.base_figure(chart["title"][lang], chart["x"][lang], "")
    shown = [v if v is not None and v > 0 else None for v in values]
    colors = [PALETTE["blue"] if v is not None and 0.05 < v < 20 else PALETTE["vermillion"] for v in values]
    text = [t("lecture.zero", lang) if v == 0 else format_number(v, 2, lang) for v in values]
    fig.add_bar(orientation="h", y=names, x=shown, marker={"color": colors}, text=text, textposition="outside",
                showlegend=False, cliponaxis=False)  # fmt: skip
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="category", autorange="reversed", showgrid=False)
    fig.add_vline(x=1, line={"color": PALETTE["black"], "dash": "dot", "width": 2})  # arrives as large as it left
    fig.update_layout(hovermode="closest")
    return fig


def table_figure(chart: dict[str, Any], answers: Answers, lang: str) -> go.Figure:
    fig = figures.base_figure(chart["title"][lang], "", "")
    columns = [[format_number(read_path(a, c["path"]), 3, lang) for a in answers] for c in chart["columns"]]
    header = ["", *(f"<b>{c['label'][lang]}</b>" for c in chart["columns"])]
    rows = [f"<b>{row[lang]}</b>".replace("\n", "<br>") for row in chart["rows"]]
    fig.add_table(header={"values": header, "align": ["left", "right"]}, cells={"values": [rows, *columns],
                  "align": ["left", "right"]})  # fmt: skip
    fig.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, showlegend=False)
    return fig


KINDS: dict[str, Callable[[dict[str, Any], Answers, str], go.Figure]] = {
    "layers": layers_figure,
    "chain": chain_figure,
    "precision": precision_figure,
    "softmax": softmax_figure,
    "layernorm": layernorm_figure,
    "train": train_figure,
    "bars": bars_figure,
    "table": table_figure,
}
