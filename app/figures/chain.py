"""/chain: the chain product. A plain stack multiplies g per layer, the shortcut 1 + g (He et al. 2016, eq. 5); both
cumulative products from the chain lesson (app/experiments/lessons/chain.py), judged from their numbers: the caption
cannot call a product that explodes "near 1", and it names a gap on the log axis for what it is (an exact 0, or an
overflow of float64) only where one occurs."""

from __future__ import annotations

import math

from .chart import Chart, ChartKind, Json, diff
from .gradients import verdict
from .lesson import precise, text
from .style import PALETTE, finish, finite, hline, layout, line
from .words import fmt, sentences


def factor_of(g: float) -> float:
    """1 + g without binary noise (1 + 0.1 reads 1.1, not 1.1000000000000001)."""
    return float(f"{1 + g:.12g}")


def products_figure(title: str, series: list[Json], theme: str, lang: str, markers: bool = True) -> Json:
    """Cumulative products over the layers on a log axis, one line per `series` ({name, layers, values, color}), and
    the line at 1 (the gradient arrives unchanged). The deck's chain slides draw their own series with it."""
    fig: Json = {
        "data": [],
        "layout": layout(theme, title, text("chain.axis.x", lang), text("chain.axis.y", lang), ylog=True),
    }
    for s in series:
        fig["data"].append(line(theme, s["name"], s["layers"], finite(s["values"]), s["color"], markers=markers))
    hline(theme, fig, 1.0, text("chain.mark.one", lang))
    shown = [v for s in series for v in finite(s["values"]) if v is not None and v > 0]
    low, high = (math.log10(min(shown)), math.log10(max(shown))) if shown else (0.0, 0.0)
    if high - low < 1:  # a log axis over less than a decade (g = 0: only the shortcut's 1s): a decade around the data
        middle = (low + high) / 2
        fig["layout"]["yaxis"].update(range=[middle - 1, middle + 1], dtick=1)
    return finish(fig, theme)


def figure(answer: Json, lang: str, theme: str) -> Json:
    g, layers = answer["derivative"], answer["layers"]
    series = [
        {"name": text("chain.series.plain", lang, g=fmt(g, lang)), "layers": layers, "values": answer["plain"],
         "color": PALETTE["vermillion"]},
        {"name": text("chain.series.residual", lang, factor=fmt(factor_of(g), lang)), "layers": layers,
         "values": answer["residual"], "color": PALETTE["blue"]},
    ]  # fmt: skip
    return products_figure(text("chart.chain.title", lang), series, theme, lang, markers=answer["depth"] <= 128)


def claim(answer: Json) -> Json:
    plain, residual = answer["plain_final"], answer["residual_final"]
    products = [*answer["plain"], *answer["residual"]]
    return {
        "plain": plain,
        "residual": residual,
        "plain_verdict": verdict(plain),
        "residual_verdict": verdict(residual),
        "overflow": any(v is None or not math.isfinite(v) for v in products),
        "zero": any(v == 0 for v in products),
    }


def caption(answer: Json, lang: str, facts: Json) -> str:
    g = answer["derivative"]
    values = {"depth": answer["depth"], "g": fmt(g, lang), "factor": fmt(factor_of(g), lang),
              "plain": precise(facts["plain"], lang), "residual": precise(facts["residual"], lang)}  # fmt: skip
    plain, residual = facts["plain_verdict"], facts["residual_verdict"]
    words = {"plain": text(f"verdict.{plain}", lang), "residual": text(f"verdict.{residual}", lang)}
    parts = [text("chain.caption", lang, **values), text("chain.verdicts", lang, **words)]
    fades, grows = plain in ("faded", "underflowed"), ("grew", "exploded", "overflowed")
    if fades and residual == "kept":
        parts.append(text("chain.story.shortcut_keeps", lang))
    elif fades:
        parts.append(text("chain.verdict.vanish", lang))
    elif plain in grows:
        parts.append(text("chain.verdict.explode", lang))
    else:
        parts.append(text("chain.verdict.fine", lang))
    if residual in grows:
        parts.append(text("chain.shortcut.grows", lang))
    if facts["overflow"]:  # what a gap on the log axis is: an overflow to infinity, or an exact 0
        parts.append(text("chain.verdict.overflow", lang))
    if facts["zero"]:
        parts.append(text("chain.verdict.zero", lang))
    return sentences(parts, lang)


def rows(answer: Json) -> list[Json]:
    return [
        {"layer": layer, "plain": p, "residual": r}
        for layer, p, r in zip(answer["layers"], answer["plain"], answer["residual"], strict=True)
    ]


def build(answer: Json, lang: str = "en") -> Chart:
    facts = claim(answer)
    normal, slide = figure(answer, lang, "normal"), figure(answer, lang, "slide")
    patches = {
        "slide": diff(normal, slide),
        "log": {"layout": {"yaxis": {"type": "log"}}},
        "linear": {"layout": {"yaxis": {"type": "linear", "range": None, "autorange": True, "dtick": None}}},
    }
    return Chart("chain", normal, caption(answer, lang, facts), facts, rows(answer), patches)


CHART = ChartKind("chain", "chain", build, {})
