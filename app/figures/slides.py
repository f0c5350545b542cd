"""Every chart of the lecture deck, built once, here: a slide's answers -> its figure, its caption filled with the
measured values and the checks that fail. The live deck, the speaker view, /embed/lecture-<id>, the offline file
and `rx.lecture.slide(...)` all show what `build` returns; the browser only draws it.

The slide data (app/experiments/lecture) says which kind of chart, which answer feeds which series, and the labels;
the claim (claims.py) names the values the caption states. Figures are plain Plotly JSON in the normal theme with a
"slide" patch (the projector's sizes), as every chart of app/figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..experiments.lecture.claims import OVERFLOW, evaluate, failed_values, format_number, read_path, statement
from ..i18n import t
from . import batchnorm, chain, layernorm, layernorm_geometry, lr_warmup, paths, precision, softmax, train
from .backrow import for_the_back_row
from .chart import Chart, diff
from .style import (
    GREY,
    PALETTE,
    REFERENCE_LINE,
    Json,
    axis,
    decade_ticks,
    finish,
    hline,
    layout,
    line,
    mark_overflow,
    theme_of,
)
from .words import say

Answers = list[Any]
Slide = dict[str, Any]

STRINGS: dict[str, tuple[str, str]] = {
    "lecture.overflow": OVERFLOW,
    "lecture.zero": ("0 (underflow)", "0（下溢）"),
    "lecture.underflow": (
        "{name}: exactly 0 (underflow) at layers {from}–{to}",
        "{name}：第 {from}–{to} 层恰为 0（下溢）",
    ),
    "lecture.law.sqrt": ("√(‖x₀‖²+c·l)", "√(‖x₀‖²+c·l)"),
    "lecture.law.line": ("Line", "直线"),
    "lecture.law.power": ("Power {p}", "幂律 {p}"),
    "lecture.law.exp": ("Exponential", "指数"),
    "lecture.law.independent": ("Unfitted Σ‖fₗ‖²", "不拟合 Σ‖fₗ‖²"),
    "lecture.bar.x": ("x", "x"),
    "lecture.bar.normalized": ("x̂ = (x − μ) / σ", "x̂ = (x − μ) / σ"),
    "lecture.bar.output": ("y = γ·x̂ + β", "y = γ·x̂ + β"),
    "lecture.train_idle": ("Press T to train on this server", "按 T 在本服务器上训练"),
    "lecture.train_guess": ("uniform guess", "均匀猜测"),
    "lecture.train_pending": (
        "Not trained yet: press T (or the button) to run it on this server; the caption then shows "
        "the measured losses.",
        "尚未训练：按 T（或按钮）在本服务器上运行；之后说明文字会显示实测的损失。",
    ),
    "lecture.checked": ("✓ claim checked on these numbers", "✓ 结论已用这些数字核对"),
    "lecture.check_failed": ("✗ the claim does not hold for: {names}", "✗ 结论不成立：{names}"),
}
LAW_COLORS = {"sqrt": "black", "line": "purple", "power": "vermillion", "exp": "sky", "independent": "green"}
LAW_DASHES = {"independent": "dot"}
TRAIN_COLORS = ("vermillion", "blue", "orange", "green")


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def tr(pair: dict[str, str], lang: str) -> str:
    return pair[lang]


def is_training(slide: Slide) -> bool:
    return bool(slide.get("chart")) and any(s["api"] == "train" for s in slide["chart"]["sources"])


_ABSENT = object()


def per_layer(answer: Json, field: str) -> tuple[list[Any], list[float | None], list[bool]]:
    """A trace's values per layer (layer 0, the embedding, first) or a chain lesson's or a real model's (`field` a
    path such as 'stream.mean'), and per point whether it overflowed (null). A field the embedding does not have
    (branch_norm) is a gap at layer 0, not an overflow."""
    layers = answer.get("layers")
    if layers and isinstance(layers[0], dict) and "layer" in layers[0]:
        values = [answer["embedding"].get(field, _ABSENT), *(layer.get(field, _ABSENT) for layer in layers)]
        x = [0, *(layer["layer"] for layer in layers)]
    else:
        x, values = list(layers or []), list(read_path(answer, field) or [])
        if len(values) == len(x) - 1:  # one value per block (a real model's attention): blocks 1..L
            x = x[1:]
    return x, [None if v is _ABSENT else v for v in values], [v is None for v in values]


# ---- One builder per chart kind: (chart, answers, theme, lang, slide) -> Plotly JSON --------------------------------


def layers_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """One line per series over the layers, a second panel when the chart has one, overflow and underflow marked,
    overlays (reference lines, the laws the server fitted) on top."""
    style = theme_of(theme)
    first = chart["panels"][0]
    x_title = tr(chart["x"], lang) if "x" in chart else t("axis.layer", lang)  # the depth-scan slide: x is the depth
    fig: Json = {
        "data": [],
        "layout": layout(theme, tr(chart["title"], lang), x_title, tr(first["y"], lang), first["log"]),
    }
    lay = fig["layout"]
    if chart.get("xlog"):
        lay["xaxis"]["type"] = "log"
    if "range" in first:
        lay["yaxis"]["range"] = first["range"]
    if first["log"]:
        lay["yaxis"]["nticks"] = 6  # powers of ten over six decades and more; decade_ticks below for fewer
    two = len(chart["panels"]) > 1
    if two:
        second = chart["panels"][1]
        lay["xaxis"]["domain"] = [0, 0.4]  # the gap holds the right panel's y title and ticks
        lay["xaxis2"] = {**axis(style, x_title), "domain": [0.63, 1], "anchor": "y2"}
        lay["yaxis2"] = {**axis(style, tr(second["y"], lang), log=second["log"]), "anchor": "x2"}
        if "range" in second:
            lay["yaxis2"]["range"] = second["range"]
        if second["log"]:
            lay["yaxis2"]["nticks"] = 6
    named: set[str] = set()
    for series in chart["series"]:
        x, y, missing = per_layer(answers[series["source"]], series["field"])
        name = tr(series["label"], lang)
        on = {"xaxis": "x2", "yaxis": "y2"} if series["panel"] else {}
        fig["data"].append(
            line(
                theme,
                name,
                x,
                y,
                PALETTE[series["color"]],
                dash=series["dash"],
                markers=len(x) <= 30,
                legendgroup=name,
                showlegend=name not in named,
                **on,
            )
        )
        named.add(name)
        if series["panel"] == 0 and any(missing):
            before = len(lay["annotations"])
            gaps = [None if m else 1.0 for m in missing]
            mark_overflow(theme, fig, x, gaps, lang, series=name)
            if two:  # keep the label inside the left panel (top left, a line per part), off both y titles: the
                # legend and the caption name the series, the label only where it overflowed
                for note in lay["annotations"][before:]:
                    where = note["text"].split(f"{name}: ", 1)[-1].replace(" (inf/NaN)", "").replace("（inf/NaN）", "")
                    note.update(
                        xref="paper",
                        x=0.01,
                        xanchor="left",
                        y=0.98,
                        yanchor="top",
                        text="✕ " + where.replace(": ", ":<br>").replace("：", "：<br>"),
                    )
        if chart["panels"][series["panel"]]["log"]:
            _mark_underflow(theme, fig, x, y, name, lang)
    for overlay in chart.get("overlays", []):
        _overlay(theme, fig, answers, overlay, lang)
    for key, ref in (("yaxis", "y"), ("yaxis2", "y2")):
        if lay.get(key, {}).get("type") == "log" and "range" not in lay[key]:
            drawn = [v for trace in fig["data"] if trace.get("yaxis", "y") == ref for v in trace["y"]]
            decade_ticks(lay[key], drawn + [s["y0"] for s in lay["shapes"] if s.get("yref") == ref])
    if chart.get("xlog"):  # a few depths on a log axis: a tick at each, not Plotly's 2 3 4 5 between decades
        x, _, _ = per_layer(answers[chart["series"][0]["source"]], chart["series"][0]["field"])
        lay["xaxis"].update(tickvals=x, ticktext=[str(v) for v in x])
    return fig


def _mark_underflow(theme: str, fig: Json, x: list[Any], y: list[float | None], name: str, lang: str) -> None:
    """A log axis cannot show 0: say where a series underflowed to exactly 0 instead of silently dropping it."""
    zeros = [layer for layer, value in zip(x, y, strict=True) if value == 0]
    if zeros:
        fig["layout"]["annotations"].append(
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0.01,
                "y": 0.02,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
                "text": text("lecture.underflow", lang, name=name, **{"from": min(zeros), "to": max(zeros)}),
                "font": {"size": theme_of(theme)["font"] - 4, "color": PALETTE["vermillion"]},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )


def _overlay(theme: str, fig: Json, answers: Answers, overlay: Json, lang: str) -> None:
    if overlay["type"] == "hline":
        spec = overlay["label"]
        label = t(spec["key"], lang, value=spec.get("value")) if "key" in spec else spec[lang]
        color = PALETTE[overlay.get("color", "black")]
        # a constant, or a number read from an answer (a real model's uniform attention share)
        value = overlay["value"] if "value" in overlay else read_path(answers[overlay["source"]], overlay["path"])
        if value is None:
            return
        axes = "y2" if overlay.get("panel") else "y"  # the second panel's axes, or the first's
        hline(theme, fig, value, label, color, below=overlay.get("below", False), yaxis=axes)
        return
    # "law_fit": a law the server fitted from ‖x₀‖ (POST /api/laws, app/experiments/laws.py), read from its answer
    laws = answers[overlay["source"]]
    fit = laws["independent"] if overlay["law"] == "independent" else laws["fits"].get(overlay["law"])
    if not fit:
        return
    p = format_number(fit["p"], 2, lang) if fit.get("p") is not None else ""
    name = text(f"lecture.law.{overlay['law']}", lang, p=p)
    color = PALETTE[LAW_COLORS[overlay["law"]]]
    dash = LAW_DASHES.get(overlay["law"], "dash")
    fig["data"].append(line(theme, name, laws["layers"], fit["curve"], color, dash=dash, markers=False, width=0.8))


def chain_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /chain lesson's chart (app/figures/chain.py) of the slide's own series, under the slide's title."""
    series = [
        {"name": tr(s["label"], lang), "layers": answers[s["source"]]["layers"],
         "values": answers[s["source"]][s["field"]], "color": PALETTE[s["color"]]}
        for s in chart["series"]
    ]  # fmt: skip
    return chain.products_figure(tr(chart["title"], lang), series, theme, lang, markers=False)


def precision_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /precision lesson's chart (app/figures/precision.py), under the slide's title."""
    fig = precision.figure(answers[0], lang, theme)
    fig["layout"]["title"]["text"] = tr(chart["title"], lang)
    return fig


def softmax_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /softmax lesson's sweep (app/figures/softmax.py), under the slide's title."""
    fig = softmax.sweep_figure(answers[0], lang, theme)
    fig["layout"]["title"]["text"] = tr(chart["title"], lang)
    fig["data"][-1]["showlegend"] = False  # the chosen scale's marker: the caption names it; three entries fit above
    return fig


def layernorm_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /layernorm lesson's bars (app/figures/layernorm.py) of the slide's steps, each bar's value written on it."""
    colors = {"x": GREY, "normalized": PALETTE["blue"], "output": PALETTE["vermillion"]}
    bars = [
        (text(f"lecture.bar.{field}", lang), chart["sources"][0]["body"]["x"] if field == "x" else answers[0][field],
         colors[field])
        for field in chart["bars"]
    ]  # fmt: skip
    fig: Json = {"data": [], "layout": layout(theme, tr(chart["title"], lang), t("layernorm.axis.x", lang),
                                              t("layernorm.axis.y", lang))}  # fmt: skip
    fig = layernorm.bars_figure(fig, bars, theme, lang, labels=True)
    labelled = chart.get("labelled") or chart["bars"]  # where neighbours' labels would touch: one series labelled
    for trace, field in zip(fig["data"], chart["bars"], strict=True):
        if field not in labelled:
            trace.pop("text")
    fig["layout"]["xaxis"]["dtick"] = 1
    return fig


def train_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /train loss chart (app/figures/train.py) of the slide's training runs, named and coloured by the slide:
    empty until trained, with what to press."""
    body = chart["sources"][0]["body"]
    symbols, title = body["runs"][0]["vocab_size"] - 1, tr(chart["title"], lang)
    if not any(answers):
        return train.loss_figure([], body["steps"], symbols, title, theme, lang, text("lecture.train_idle", lang))
    labels, curves = iter(chart["labels"]), list[train.Curve]()
    for recording, source in zip(answers, chart["sources"], strict=True):
        for run in range(len(source["body"]["runs"])):
            series = recording["runs"][run] if recording else {"steps": [], "loss": [], "done": None}
            done = series["done"] or {}
            curves.append(train.Curve(tr(next(labels), lang), PALETTE[TRAIN_COLORS[len(curves)]], series["steps"],
                                      series["loss"], done.get("diverged_step") if done.get("diverged") else None))  # fmt: skip
    fig = train.loss_figure(curves, body["steps"], symbols, title, theme, lang)
    return _short_guess(fig, lang) if theme == "slide" else fig


def _short_guess(fig: Json, lang: str) -> Json:
    """On the stage the uniform guess (trace 0) goes under a short name (the caption states its value), so the
    legend's 24 px entries take two rows above the plot, not one row each: Plotly sets a legend that needs rows in
    columns as wide as its widest entry, and 'uniform guess (ln 15)' (300 px) is over half of the plot's 588 px."""
    fig["data"][0]["name"] = text("lecture.train_guess", lang)
    return fig


def bars_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """One horizontal bar per source on a log axis; 0 and overflow said in words where the bar would start."""
    style = theme_of(theme)
    values = [read_path(answer, chart["field"]) for answer in answers]
    names = [tr(label, lang) for label in chart["labels"]]
    fig: Json = {"data": [], "layout": layout(theme, tr(chart["title"], lang), tr(chart["x"], lang), "")}
    lay = fig["layout"]
    shown = [v if v is not None and v > 0 else None for v in values]
    fig["data"].append(
        {
            "type": "bar",
            "orientation": "h",
            "y": names,
            "x": shown,
            "showlegend": False,
            "cliponaxis": False,
            "marker": {
                "color": [PALETTE[c] for c in chart["colors"]]
                if "colors" in chart  # the slide's own grouping, named in its caption
                else [PALETTE["blue"] if v is not None and 0.05 < v < 20 else PALETTE["vermillion"] for v in values]
            },
            "text": [text("lecture.zero", lang) if v == 0 else format_number(v, 2, lang) for v in values],
            "textposition": "outside",
            "textfont": {"size": style["font"] - 4},
            "hovertemplate": "%{y}: %{x:.3g}<extra></extra>",
        }
    )
    finite = [v for v in shown if v is not None]
    low = math.floor(math.log10(min(finite))) - 1 if finite else 0
    high = math.ceil(math.log10(max(finite))) + 1 if finite else 1
    lay["xaxis"].update(type="log", range=[low, high], dtick=max(1, math.ceil((high - low) / 5)), tickangle=0)
    for name, v in zip(names, values, strict=True):  # no bar on a log axis for 0: say it where the bar would start
        if not (v is not None and v > 0):
            lay["annotations"].append(
                {
                    "xref": "x",
                    "x": low,
                    "yref": "y",
                    "y": name,
                    "xanchor": "left",
                    "showarrow": False,
                    "text": text("lecture.zero" if v == 0 else "lecture.overflow", lang),
                    "font": {"size": style["font"] - 4, "color": PALETTE["vermillion"]},
                }
            )
    lay["yaxis"].update(type="category", autorange="reversed", tickfont={"size": style["font"] - 6}, showgrid=False)
    # no legend above the plot and, where the title names the ratio, no x title below it: one bar a row needs the height
    lay["margin"].update(l=20, t=round(style["title"] * 1.3), b=round(style["font"] * 1.8))
    lay["title"]["pad"] = {"t": 4}
    lay["showlegend"] = False
    if theme == "slide":  # on the stage the slide's lead names the ratio: every row of the plot's height for the bars
        lay["title"]["text"] = ""
        lay["margin"]["t"] = 8
    if not chart["x"]["en"]:
        del lay["xaxis"]["title"]  # an empty title would still keep its room
    lay["xaxis"]["tickfont"] = {"size": style["font"] - 4}  # decades only (dtick), no smaller labels between them
    lay["hovermode"] = "closest"
    # x = 1: the gradient arrives at block 1 as large as it left block 96
    lay["shapes"].append(
        {
            "type": "line",
            "xref": "x",
            "x0": 1,
            "x1": 1,
            "yref": "paper",
            "y0": 0,
            "y1": 1,
            "layer": "below",
            "line": dict(REFERENCE_LINE),
        }
    )
    return fig


def _cell_text(cell: Json, measured: Json, lang: str) -> str:
    """A summary cell: its value with its slide's digits, or a range low – high where the seeds disagree."""
    shown = format_number(measured[cell["value"]], cell["digits"], lang)
    return f"{shown} – {format_number(measured[cell['upto']], cell['digits'], lang)}" if "upto" in cell else shown


def table_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """One row per source and one column per path; or, with `cells` (the summary), each cell the value its own
    slide showed, with that slide's digits, read from this slide's claim."""
    style = theme_of(theme)
    fig: Json = {"data": [], "layout": layout(theme, tr(chart["title"], lang), "", "")}
    if "cells" in chart:
        measured = evaluate(slide["claim"], answers)
        columns = [
            [_cell_text(row[j], measured, lang) if row[j] else "" for row in chart["cells"]]
            for j in range(len(chart["columns"]))
        ]
    else:
        columns = [[format_number(read_path(a, c["path"]), 3, lang) for a in answers] for c in chart["columns"]]
    header = ["", *(f"<b>{tr(c['label'], lang)}</b>".replace("\n", "<br>") for c in chart["columns"])]
    rows = [f"<b>{tr(row, lang)}</b>".replace("\n", "<br>") for row in chart["rows"]]
    grid = "#c9cdd3"
    fig["data"].append(
        {
            "type": "table",
            "columnwidth": [1.5, *(1 for _ in chart["columns"])],
            "header": {
                "values": header,
                "align": ["left", "right"],
                "font": {"size": style["font"] - 4, "color": "#111"},
                "height": style["font"] * 2.4,
                "line": {"color": grid},
                "fill": {"color": "#f1f3f6"},
            },
            "cells": {
                "values": [rows, *columns],
                "align": ["left", "right"],
                "font": {"size": style["font"] - 2, "color": "#111"},
                "height": style["font"] * 2.2,
                "line": {"color": grid},
                "fill": {"color": "#fff"},
            },
        }
    )
    fig["layout"].update(
        margin={"l": 4, "r": 4, "t": style["title"] * 1.6, "b": 4},
        showlegend=False,
        xaxis={"visible": False},
        yaxis={"visible": False},
    )
    return fig


def batch_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /batchnorm lesson's chart (app/figures/batchnorm.py) of the slide's four norms, under the slide's title."""
    fig = batchnorm.dependence_figure({a["norm"]: a for a in answers}, lang, theme)
    base = layout(theme, tr(chart["title"], lang), "", "")
    # on a slide: the legend above the plot in three columns (below it, or one entry a row, the plot is a strip), and
    # a short y title
    fig["layout"].update(
        title=base["title"], legend={**base["legend"], "entrywidthmode": "fraction", "entrywidth": 0.33}
    )
    fig["layout"]["yaxis"]["title"]["text"] = "‖Δy‖ / ‖y‖"
    fig["data"][-1]["showlegend"] = False  # the chosen batch's marker: the caption names it; five entries fit above
    fig["layout"].setdefault("shapes", [])
    fig["layout"].setdefault("annotations", [])
    return fig


def speed_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The /layernorm lesson's timing chart (app/figures/layernorm.py) under the slide's title."""
    fig = layernorm.speed_figure(answers[0], lang, theme)
    fig["layout"]["title"] = layout(theme, tr(chart["title"], lang), "", "")["title"]
    fig["layout"].setdefault("shapes", [])
    fig["layout"].setdefault("annotations", [])
    return fig


def grid_figure(chart: Json, answers: Answers, theme: str, lang: str, slide: Slide) -> Json:
    """The recorded learning-rate × warm-up grid (app/figures/lr_warmup.py) under the slide's chart title."""
    return lr_warmup.grid_figure(answers[0], tr(chart["title"], lang), theme, lang)


KINDS: dict[str, Callable[[Json, Answers, str, str, Slide], Json]] = {
    "layers": layers_figure,
    "chain": chain_figure,
    "precision": precision_figure,
    "softmax": softmax_figure,
    "layernorm": layernorm_figure,
    "train": train_figure,
    "bars": bars_figure,
    "table": table_figure,
    "batch": batch_figure,
    "geometry": layernorm_geometry.slide_figure,
    "paths": paths.slide_figure,
    "norm_speed": speed_figure,
    "lr_warmup": grid_figure,
}


def figure(slide: Slide, answers: Answers, theme: str, lang: str) -> Json:
    """The Plotly figure of a slide's chart. Its title is smaller than the theme's: the slide's own title is above."""
    chart = slide["chart"]
    fig = KINDS[chart["kind"]](chart, answers, theme, lang, slide)
    style = theme_of(theme)
    fig["layout"]["title"]["font"]["size"] = round(style["title"] * 0.75)
    fig["layout"]["legend"]["font"]["size"] = style["font"] - 4
    return finish(for_the_back_row(fig, theme), theme)


# ---- The slide as shown: figure, caption, verdict ------------------------------------------------------------------


def build(slide: Slide, answers: Answers, lang: str = "en") -> Chart:
    """Slide `slide` (a deck slide, or one "try it" option of it: the slide with the option's chart and claim) on
    these answers (in the order of its chart's sources; a training source not trained yet: None), in lang.

    claim holds the measured values, `failed` (the checks that do not hold, by value name), `checked` (whether the
    caption states numbers it checked) and `pending` (a training slide not trained yet: no caption numbers yet)."""
    claim = slide["claim"]
    pending = is_training(slide) and not all(
        answers[i] and answers[i].get("finished", True)
        for i, s in enumerate(slide["chart"]["sources"])
        if s["api"] == "train"
    )
    measured = {} if pending else evaluate(claim, answers)
    failed = [] if pending else failed_values(claim, measured)
    caption = text("lecture.train_pending", lang) if pending else statement(claim, measured, lang)
    checks = bool(claim["checks"]) and not pending
    verdict = (
        (text("lecture.check_failed", lang, names=", ".join(failed)) if failed else text("lecture.checked", lang))
        if checks
        else ""
    )
    if not slide.get("chart"):
        return Chart(f"lecture-{slide['id']}", {}, caption, _claim(measured, failed, checks, pending, verdict), [])
    normal = figure(slide, answers, "normal", lang)
    projected = figure(slide, answers, "slide", lang)
    return Chart(
        f"lecture-{slide['id']}",
        normal,
        caption,
        _claim(measured, failed, checks, pending, verdict),
        [],
        {"slide": diff(normal, projected)},
    )


def _claim(measured: Json, failed: list[str], checks: bool, pending: bool, verdict: str) -> Json:
    return {"values": measured, "failed": failed, "checked": checks, "pending": pending, "verdict": verdict}
