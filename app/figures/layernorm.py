"""/layernorm: one vector through LayerNorm and RMSNorm, coordinate by coordinate, with each norm's steps and its
check against torch (app/experiments/lessons/layernorm.py); and "is RMSNorm faster?", forward + backward times of
both measured on this server (app/experiments/lessons/norm_speed.py), its verdict read from the measured ratios."""

from __future__ import annotations

import math

from ..experiments.lessons.norm_speed import CLEAR, speed_verdict, spread_of
from .chart import Chart, ChartKind, Json, diff
from .lesson import blank, precise, text
from .style import GREY, PALETTE, finish, line, theme_of
from .words import sentences

KINDS = ("layernorm", "rmsnorm")
SHOWN_VALUES = 12  # a step lists at most this many coordinates
SPEED_SERIES = (("layernorm", "blue", "solid"), ("rmsnorm", "vermillion", "solid"),
                ("layernorm_composed", "blue", "dot"))  # fmt: skip


# --- the norms side by side ---


def bars_figure(
    fig: Json, bars: list[tuple[str, list[float], str]], theme: str, lang: str, labels: bool = False
) -> Json:
    """Grouped bars, one group per coordinate i and one bar per (name, values, colour); `labels`: each bar's value
    written above it (the deck's four coordinates). The deck's LayerNorm slides draw their own bars with it."""
    for name, y, color in bars:
        bar: Json = {"type": "bar", "name": name, "x": list(range(1, len(y) + 1)), "y": y, "marker": {"color": color},
               "hovertemplate": f"%{{y:.4g}}<extra>{name}</extra>"}  # fmt: skip
        if labels:
            bar.update(text=[precise(v, lang, 4) for v in y], textposition="outside", cliponaxis=False,
                       textfont={"size": theme_of(theme)["font"] - 6})  # fmt: skip
        fig["data"].append(bar)
    fig["layout"]["barmode"] = "group"
    return finish(fig, theme)


def norms_figure(answer: Json, lang: str, theme: str) -> Json:
    fig = blank(theme, lang, "chart.layernorm.title", "layernorm.axis.x", "layernorm.axis.y")
    bars = [
        (text("layernorm.series.x", lang), answer["x"], GREY),
        (text("layernorm.series.layernorm", lang), answer["layernorm"]["output"], PALETTE["blue"]),
        (text("layernorm.series.rmsnorm", lang), answer["rmsnorm"]["output"], PALETTE["vermillion"]),
    ]
    return bars_figure(fig, bars, theme, lang)


def norms_claim(answer: Json) -> Json:
    ln, rms = answer["layernorm"], answer["rmsnorm"]["output"]
    # an RMS that overflowed makes every output 0: their mean says nothing about x's offset
    finite = all(v is not None for v in rms) and ln["rms"] is not None and math.isfinite(ln["rms"])
    return {
        "mean": ln["mean"],
        "variance": ln["variance"],
        "n": ln["n"],
        "rms": ln["rms"],
        "beta": answer["beta"],
        "rms_mean": sum(rms) / len(rms) if finite else None,
        "torch_difference": {kind: answer[kind]["torch_check"]["max_abs_difference"] for kind in KINDS},
    }


def norms_caption(facts: Json, lang: str) -> str:
    return text("layernorm.caption", lang, mean=precise(facts["mean"], lang), variance=precise(facts["variance"], lang),
                n=facts["n"], rms=precise(facts["rms"], lang), beta=precise(facts["beta"], lang, 3),
                rms_mean=precise(facts["rms_mean"], lang, 3))  # fmt: skip


def _value_text(step: Json, lang: str) -> str:
    if step["scalar"]:
        return precise(step["value"], lang)
    shown = ", ".join(precise(v, lang, 4) for v in step["value"][:SHOWN_VALUES])
    return f"[{shown}{', …' if len(step['value']) > SHOWN_VALUES else ''}]"


def steps_table(lesson: Json, lang: str) -> Json:
    """One norm's steps as rows of (label, formula, worked numbers, value), and its check against torch."""
    zh = lang == "zh"
    rows = [
        [{"text": step["label_zh"] if zh else step["label"]}, {"text": step["formula_zh"] if zh else step["formula"]},
         {"text": step.get("worked") or ""}, {"text": f"= {_value_text(step, lang)}"}]
        for step in lesson["steps"]
    ]  # fmt: skip
    check = lesson["torch_check"]
    caption = text("layernorm.check", lang, op=check["op"].split(".")[-1],
                   diff=precise(check["max_abs_difference"], lang, 2))  # fmt: skip
    return {"caption": caption, "rows": rows}


def build_norms(answer: Json, lang: str = "en") -> Chart:
    facts, normal = norms_claim(answer), norms_figure(answer, lang, "normal")
    ln, rms = answer["layernorm"], answer["rmsnorm"]
    rows = [
        {"i": i + 1, "x": x, "layernorm": ln["output"][i], "rmsnorm": rms["output"][i],
         "layernorm_normalized": ln["normalized"][i], "rmsnorm_normalized": rms["normalized"][i]}
        for i, x in enumerate(answer["x"])
    ]  # fmt: skip
    tables = {f"steps-{kind}": steps_table(answer[kind], lang) for kind in KINDS}
    return Chart("layernorm", normal, norms_caption(facts, lang), facts, rows,
                 {"slide": diff(normal, norms_figure(answer, lang, "slide"))}, tables=tables)  # fmt: skip


# --- is RMSNorm faster? ---


def speed_figure(answer: Json, lang: str, theme: str) -> Json:
    fig = blank(
        theme,
        lang,
        "chart.norm_speed.title",
        "normspeed.axis.width",
        "normspeed.axis.time",
        ylog=True,
        tokens=answer["tokens"],
    )
    widths = [row["width"] for row in answer["rows"]]
    for kind, color, dash in SPEED_SERIES:
        spread = [row[kind] for row in answer["rows"]]
        trace = line(theme, text(f"normspeed.series.{kind}", lang), widths, [s["median_us"] for s in spread],
                     PALETTE[color], dash=dash)  # fmt: skip
        trace["error_y"] = {"type": "data", "symmetric": False, "array": [s["p75_us"] - s["median_us"] for s in spread],
                            "arrayminus": [s["median_us"] - s["p25_us"] for s in spread], "color": PALETTE[color],
                            "thickness": 1.5}  # fmt: skip
        fig["data"].append(trace)
    fig["layout"]["xaxis"].update(type="log", tickvals=widths, ticktext=[str(w) for w in widths])
    return finish(fig, theme)


def speed_claim(answer: Json) -> Json:
    ratios = [row["ratio"] for row in answer["rows"]]
    composed = [row["composed_ratio"] for row in answer["rows"]]
    ops = answer["operator_calls"]
    verdict = speed_verdict(ratios)
    # "one fused kernel against a chain of ops" explains a slower RMSNorm only where it really makes more calls
    why = verdict if verdict != "slower" or ops["rmsnorm"] > ops["layernorm"] else "mixed"
    wide = spread_of(answer["rows"]) == "wide"
    return {
        "ratio_low": min(ratios),
        "ratio_high": max(ratios),
        "verdict": verdict,
        "composed_low": min(composed),
        "composed_high": max(composed),
        "composed_cheaper": all(r > 1 + CLEAR for r in composed),
        "why": why,
        "noisy": wide,
        "operator_calls": ops,
    }


def speed_caption(answer: Json, facts: Json, lang: str) -> str:
    def span(low: float, high: float) -> dict[str, str]:
        return {"low": precise(low, lang, 2), "high": precise(high, lang, 2)}

    ops = facts["operator_calls"]
    return sentences([
        text("normspeed.caption.head", lang, time=answer.get("measured_at") or "—", torch=answer["torch"],
             threads=answer["threads"], tokens=answer["tokens"], repeats=answer["repeats"]),
        text(f"normspeed.verdict.{facts['verdict']}", lang, **span(facts["ratio_low"], facts["ratio_high"])),
        text(f"normspeed.composed.{'cheaper' if facts['composed_cheaper'] else 'unclear'}", lang,
             **span(facts["composed_low"], facts["composed_high"])),
        text(f"normspeed.why.{facts['why']}", lang, layernorm_ops=ops["layernorm"], rmsnorm_ops=ops["rmsnorm"]),
        facts["noisy"] and text("normspeed.noisy", lang),
    ], lang)  # fmt: skip


def build_speed(answer: Json, lang: str = "en") -> Chart:
    facts, normal = speed_claim(answer), speed_figure(answer, lang, "normal")
    rows = [
        {"width": row["width"], "kernel": answer["kernels"][kind], **row[kind], "rms_over_layernorm": row["ratio"]}
        for row in answer["rows"]
        for kind, _, _ in SPEED_SERIES
    ]
    return Chart("norm-speed", normal, speed_caption(answer, facts, lang), facts, rows,
                 {"slide": diff(normal, speed_figure(answer, lang, "slide"))})  # fmt: skip


NORMS = ChartKind("layernorm", "layernorm_page", build_norms, {})
SPEED = ChartKind("norm-speed", "norm_speed", build_speed, {})
