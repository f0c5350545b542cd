"""/batchnorm: why NLP avoids BatchNorm. Two charts of the four norms' answers on one set of sizes
(app/experiments/lessons/batch.py): how much a fixed sequence's output moves when its batch mates change (and
BatchNorm's train-vs-eval gap), and what zero padding of the other sequences does; with them the summary table.
Every sentence reads the numbers: "a bigger batch shrinks it" only where the largest batch's change is smaller."""

from __future__ import annotations

from typing import Any

from ..experiments.lessons.batch import BATCH_SWEEP
from .chart import Chart, ChartKind, Json, diff
from .lesson import blank, text
from .lesson import precise as _precise
from .style import PALETTE, finish, line, theme_of
from .words import sentences

NORMS = ("batchnorm", "layernorm", "rmsnorm", "groupnorm")
# The three per-token norms lie on top of each other at 0: different markers keep each visible.
STYLE = {
    "batchnorm": ("vermillion", "circle", 1.0),
    "layernorm": ("blue", "circle-open", 2.2),
    "rmsnorm": ("green", "square-open", 1.6),
    "groupnorm": ("purple", "diamond", 1.0),
}
HALF = 0.5  # the table's padding column and the padding caption: the sweep point nearest half the batch padded


def precise(value: float | None, lang: str, digits: int = 3) -> str:
    return _precise(value, lang, digits)


def near_half(answer: Json) -> Json:
    return min(answer["padding"], key=lambda p: abs(p["pad_fraction"] - HALF))


def _blank(theme: str, lang: str, title: str, x: str, y: str) -> Json:
    """The chart's empty figure, its legend below the plot (five to six entries would crowd the title)."""
    fig = blank(theme, lang, title, x, y)
    fig["layout"]["legend"] = {"orientation": "h", "x": 0, "y": -0.22, "font": {"size": theme_of(theme)["font"]}}
    return fig


def _norm_line(theme: str, norm: str, x: list[Any], y: list[Any], name: str) -> Json:
    color, symbol, size = STYLE[norm]
    trace = line(theme, name, x, y, PALETTE[color])
    trace["marker"] = {"size": theme_of(theme)["marker"] * size, "symbol": symbol, "color": PALETTE[color],
                       "line": {"color": PALETTE[color], "width": 2}}  # fmt: skip
    return trace


def dependence_figure(answers: Json, lang: str, theme: str) -> Json:
    fig = _blank(theme, lang, "chart.batch_dependence.title", "batchnorm.axis.batch", "batchnorm.axis.change")
    fig["layout"]["xaxis"].update(type="log", tickvals=list(BATCH_SWEEP), ticktext=[str(b) for b in BATCH_SWEEP])
    for norm in NORMS:
        rows = answers[norm]["by_batch"]
        fig["data"].append(_norm_line(theme, norm, [r["batch"] for r in rows], [r["same_sequence_change"] for r in rows],
                                      text(f"batchnorm.name.{norm}", lang)))  # fmt: skip
    bn = answers["batchnorm"]
    fig["data"].append(line(theme, text("batchnorm.series.train_eval", lang), [r["batch"] for r in bn["by_batch"]],
                            [r["train_eval_change"] for r in bn["by_batch"]], PALETTE["orange"], dash="dash"))  # fmt: skip
    chosen = line(theme, text("batchnorm.mark.chosen", lang, batch=bn["batch"]), [bn["batch"]],
                  [bn["same_sequence_change"]], PALETTE["black"], mode="markers")  # fmt: skip
    chosen["marker"] = {"size": 14, "symbol": "diamond-open", "color": PALETTE["black"],
                        "line": {"width": 2, "color": PALETTE["black"]}}  # fmt: skip
    fig["data"].append(chosen)
    fig["layout"]["yaxis"]["rangemode"] = "tozero"
    return finish(fig, theme)


def padding_figure(answers: Json, lang: str, theme: str) -> Json:
    fig = _blank(theme, lang, "chart.batch_padding.title", "batchnorm.axis.pad", "batchnorm.axis.effect")
    for norm in NORMS:
        points = answers[norm]["padding"]
        fig["data"].append(_norm_line(theme, norm, [p["pad_fraction"] for p in points],
                                      [p["output_change"] for p in points], text(f"batchnorm.name.{norm}", lang)))  # fmt: skip
    bn = answers["batchnorm"]["padding"]
    x = [p["pad_fraction"] for p in bn]
    fig["data"].append(line(theme, text("batchnorm.series.mean_shift", lang), x, [p["mean_shift"] for p in bn],
                            PALETTE["orange"], dash="dot"))  # fmt: skip
    fig["data"].append(line(theme, text("batchnorm.series.std_ratio", lang), x, [p["std_ratio"] for p in bn],
                            PALETTE["sky"], dash="dash"))  # fmt: skip
    fig["layout"]["xaxis"]["tickformat"] = ".0%"
    fig["layout"]["yaxis"]["rangemode"] = "tozero"
    return finish(fig, theme)


def _per_token_max(answers: Json, field: str, value: str) -> float:
    """The largest change any per-token norm showed over a sweep (0 where they are exact)."""
    return max(row[value] for norm in NORMS[1:] for row in answers[norm][field])


def dependence_claim(answers: Json) -> Json:
    bn = answers["batchnorm"]
    last = bn["by_batch"][-1]
    return {
        "batch": bn["batch"],
        "same": bn["same_sequence_change"],
        "max": bn["same_sequence_change_max"],
        "gap": bn["train_eval_change"],
        "big": last["batch"],
        "big_same": last["same_sequence_change"],
        "per_token_max": _per_token_max(answers, "by_batch", "same_sequence_change"),
        # "a bigger batch shrinks it" holds only where the largest batch is bigger and its change smaller
        "shrinks": last["batch"] > bn["batch"] and last["same_sequence_change"] < bn["same_sequence_change"],
    }


def dependence_caption(facts: Json, lang: str) -> str:
    values = {k: precise(facts[k], lang) for k in ("same", "max", "gap", "big_same")}
    parts = [text("batchnorm.caption.dependence", lang, batch=facts["batch"], **values)]
    if facts["big"] > facts["batch"]:
        rule = "shrinks" if facts["shrinks"] else "not"
        parts.append(text(f"batchnorm.caption.bigger.{rule}", lang, big=facts["big"], batch=facts["batch"],
                          big_same=values["big_same"]))  # fmt: skip
    parts.append(text("batchnorm.caption.per_token", lang, zero=precise(facts["per_token_max"], lang)))
    return sentences(parts, lang)


def padding_claim(answers: Json) -> Json:
    point = near_half(answers["batchnorm"])
    return {
        "pad_fraction": point["pad_fraction"],
        "mean_shift": point["mean_shift"],
        "output_change": point["output_change"],
        "per_token_max": _per_token_max(answers, "padding", "output_change"),
    }


def padding_caption(facts: Json, lang: str) -> str:
    return text("batchnorm.caption.padding", lang, fraction=f"{round(facts['pad_fraction'] * 100)}%",
                shift=precise(facts["mean_shift"], lang), change=precise(facts["output_change"], lang),
                zero=precise(facts["per_token_max"], lang))  # fmt: skip


def summary_table(answers: Json, lang: str) -> Json:
    """One row per norm at the chosen batch: change with new batch mates, the train/eval gap, the change with about
    half the batch padding, and the check against torch.nn.functional."""
    first = answers[NORMS[0]]
    rows = []
    for norm in NORMS:
        a = answers[norm]
        gap = text("batchnorm.none", lang) if a["train_eval_change"] is None else precise(a["train_eval_change"], lang)
        rows.append([
            {"text": text(f"batchnorm.name.{norm}", lang), "header": True},
            {"text": precise(a["same_sequence_change"], lang), "lost": a["same_sequence_change"] > 0},
            {"text": gap},
            {"text": precise(near_half(a)["output_change"], lang)},
            {"text": precise(a["torch_check"]["max_abs_difference"], lang, 2)},
        ])  # fmt: skip
    return {"caption": text("batchnorm.table.title", lang, batch=first["batch"], trials=first["trials"]), "rows": rows}


def _rows(answers: Json, field: str, keys: tuple[str, ...]) -> list[Json]:
    return [{"norm": norm, **{k: row[k] for k in keys}} for norm in NORMS for row in answers[norm][field]]


def build_dependence(answers: Json, lang: str = "en") -> Chart:
    facts, normal = dependence_claim(answers), dependence_figure(answers, lang, "normal")
    rows = _rows(
        answers, "by_batch", ("batch", "same_sequence_change", "same_sequence_change_max", "train_eval_change")
    )
    return Chart("batch-dependence", normal, dependence_caption(facts, lang), facts, rows,
                 {"slide": diff(normal, dependence_figure(answers, lang, "slide"))},
                 tables={"batch-table": summary_table(answers, lang)})  # fmt: skip


def build_padding(answers: Json, lang: str = "en") -> Chart:
    facts, normal = padding_claim(answers), padding_figure(answers, lang, "normal")
    rows = _rows(answers, "padding", ("pad_fraction", "other_length", "output_change", "mean_shift", "std_ratio"))
    return Chart("batch-padding", normal, padding_caption(facts, lang), facts, rows,
                 {"slide": diff(normal, padding_figure(answers, lang, "slide"))})  # fmt: skip


DEPENDENCE = ChartKind("batch-dependence", "batch_norms", build_dependence, {})
PADDING = ChartKind("batch-padding", "batch_norms", build_padding, {})
