"""/precision: the largest value per block of a stack run in float16, beside the same weights in float32, and the
block where float16 first holds inf/NaN (app/experiments/lessons/precision.py); with it the table of the three
formats (limits from torch.finfo, a + b in each), each row's verdict read from its numbers."""

from __future__ import annotations

import math
from decimal import Decimal

from .chart import Chart, ChartKind, Json, diff
from .lesson import blank, precise, text
from .style import FLOAT16_MAX, PALETTE, finish, hline, line, overflow_band


def exact(value: float | None, lang: str) -> str:
    """Every digit of a stored value: the shortest decimal that reads back as this double, written out in full
    (10000.0009765625, not 1.00000009765625e+04), or the word for an overflow."""
    if value is None or not math.isfinite(value):
        return text("lesson.overflow", lang)
    digits = format(Decimal(repr(value)), "f")
    if "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return digits.replace("-", "−", 1) if digits.startswith("-") else digits


def verdict(row: Json) -> str:
    """What a + b did in one format: the sum overflowed, the update was lost (a + b == a), it was rounded, or kept."""
    if row["overflowed"]:
        return "overflow"
    if row["update_lost"]:
        return "lost"
    return "kept" if row["sum_error"] == 0 else "rounded"


def figure(answer: Json, lang: str, theme: str) -> Json:
    snow = answer["snowball"]
    fig = blank(theme, lang, "chart.precision_overflow.title", "axis.layer_plain", "precision.axis.y", ylog=True)
    layers = snow["layers"]
    # the float32 reference: the same weights, a thin dashed line without markers
    fig["data"].append(line(theme, text("precision.series.float32", lang), layers, snow["float32_max_abs"],
                            PALETTE["black"], dash="dash", width=0.7, markers=False))  # fmt: skip
    fig["data"].append(line(theme, text("precision.series.float16", lang), layers, snow["float16_max_abs"],
                            PALETTE["blue"]))  # fmt: skip
    hline(theme, fig, FLOAT16_MAX, text("series.fp16_max", lang), color=PALETTE["vermillion"])
    if snow["overflow_layer"] is not None:  # the float32 reference climbs through the band's middle: label it low
        overflow_band(theme, fig, snow["overflow_layer"], len(layers),
                      text("mark.overflow", lang, layer=snow["overflow_layer"]), bottom=True)  # fmt: skip
    return finish(fig, theme)


def claim(answer: Json) -> Json:
    snow = answer["snowball"]
    finite16 = [v for v in snow["float16_max_abs"] if v is not None and math.isfinite(v)]
    return {
        "depth": len(snow["layers"]),
        "overflow_layer": snow["overflow_layer"],
        "overflow_sublayer": snow["overflow_sublayer"],
        "float32_exceeds_float16_max_at": snow["float32_exceeds_float16_max_at"],
        "float16_peak": max(finite16) if finite16 else None,
        "verdicts": {row["dtype"]: verdict(row) for row in answer["formats"]},
    }


def caption(facts: Json, lang: str) -> str:
    if facts["overflow_layer"] is None:
        return text("precision.caption.safe", lang, depth=facts["depth"], peak=precise(facts["float16_peak"], lang, 4))
    sublayer = text(f"precision.sublayer.{facts['overflow_sublayer'].split('.')[-1]}", lang)
    beyond = facts["float32_exceeds_float16_max_at"]
    return text("precision.caption.overflow", lang, layer=facts["overflow_layer"], sublayer=sublayer,
                f32="—" if beyond is None else beyond)  # fmt: skip


def formats_table(answer: Json, lang: str) -> Json:
    """The formats table beside the chart: its caption and one row of cells per format (a cell marked `lost` where
    the update did not survive)."""
    rows = []
    for row in answer["formats"]:
        outcome = verdict(row)
        rows.append([
            {"text": row["dtype"], "header": True},
            *({"text": precise(row[k], lang, 5)} for k in ("max", "eps", "tiny")),
            *({"text": exact(row[k], lang)} for k in ("stored_big", "spacing_at_big", "sum")),
            {"text": text(f"precision.verdict.{outcome}", lang), "lost": outcome != "kept"},
        ])  # fmt: skip
    title = text("precision.table.title", lang, big=exact(answer["big"], lang), small=exact(answer["small"], lang),
                 exact=exact(answer["float64_sum"], lang))  # fmt: skip
    return {"caption": title, "rows": rows}


def rows(answer: Json) -> list[Json]:
    snow = answer["snowball"]
    fields = ("float16_max_abs", "float32_max_abs", "float16_act_norm", "float32_act_norm")
    return [{"layer": layer, **{f: snow[f][i] for f in fields}} for i, layer in enumerate(snow["layers"])]


def build(answer: Json, lang: str = "en") -> Chart:
    facts, normal = claim(answer), figure(answer, lang, "normal")
    patches = {"slide": diff(normal, figure(answer, lang, "slide"))}
    return Chart("precision-overflow", normal, caption(facts, lang), facts, rows(answer), patches,
                 tables={"formats": formats_table(answer, lang)})  # fmt: skip


CHART = ChartKind("precision-overflow", "precision_page", build, {})
