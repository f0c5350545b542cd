"""/gradients' profile: the gradient reaching each layer, with the page's shortcut and without it, for the chosen seed
and the next three. A verdict (faded, kept, grew, ...) is stated only where every drawn seed gives it; where the seeds
disagree the caption says so and gives each seed's number. Seed `seed` alone is answered first (`seeds=1`, the band
"pending"), the band after it (`seeds=4`)."""

from __future__ import annotations

import math

from ..config import VARIANTS
from ..experiments.grad_profile import BAND
from .chart import Chart, ChartKind, Json, diff, y_scales
from .norms import stream
from .style import PALETTE, finish, finite, layout, line, mark_overflow
from .words import fmt, say, sentences

KEPT_WITHIN = 10.0  # a ratio within ×10 of 1 either way: the signal arrives at a usable size
EXPLODED_ABOVE = 1e3

STRINGS: dict[str, tuple[str, str]] = {
    "chart.grad_profile.title": ("Gradient per layer, with and without the residual", "每层的梯度：有残差与无残差"),
    "chart.grad_profile.y": ("Mean token gradient ‖∂loss/∂x_l‖", "词元平均梯度 ‖∂loss/∂x_l‖"),
    "series.with_residual": ("With residual ({residual})", "有残差（{residual}）"),
    "series.without_residual": ("Without residual (plain stack)", "无残差（普通堆叠）"),
    "caption.grad.read": (
        "Read from right to left: the gradient starts at the last layer ({depth}) and travels back to layer 1.",
        "从右往左读：梯度从最后一层（第 {depth} 层）出发，一路回传到第 1 层。",
    ),
    "caption.grad.with": (
        "With the shortcut, layer 1 gets {ratio} × the last layer's gradient{per_block}: {verdict}.",
        "有捷径时，第 1 层的梯度是最后一层的 {ratio} 倍{per_block}：{verdict}。",
    ),
    "caption.grad.without": (
        "Without it, {ratio}{per_block}: {verdict}.",
        "没有捷径时为 {ratio} 倍{per_block}：{verdict}。",
    ),
    "caption.grad.per_block": (" (×{factor} per block on average)", "（平均每块 ×{factor}）"),
    "caption.grad.one_block": (
        "With one block there is no trip back to measure: choose a depth of 2 or more.",
        "只有一个块时没有回传路径可测：请把深度设为 2 或更大。",
    ),
    "caption.grad.plain_fades": (
        "Each plain layer multiplies the gradient by its own derivative, here about ×{factor} a block, so the product "
        "fades with depth.",
        "普通堆叠的每一层都把梯度乘上自己的导数，这里平均每块约 ×{factor}，所以乘积随深度衰减。",
    ),
    "caption.grad.plain_grows": (
        "Here the plain stack's factors are above 1 (about ×{factor} a block), so its gradient grows toward the "
        "input instead of fading: a product of many factors drifts away from 1 in either direction.",
        "这里普通堆叠每块的因子大于 1（平均约 ×{factor}），所以梯度越靠近输入反而越大：许多因子连乘，"
        "结果会向任一方向偏离 1。",
    ),
    "caption.grad.plain_kept": (
        "Here even the plain stack's product stays within ×10 of 1 over this depth.",
        "在这个深度下，即使没有捷径，乘积也在 1 的 10 倍范围以内。",
    ),
    "caption.grad.shortcut_keeps": (
        "The shortcut adds 1 to every factor (1 + f′), so the gradient's path stays open.",
        "捷径给每个因子加上 1（变成 1 + f′），所以梯度的通路保持畅通。",
    ),
    "caption.grad.shortcut_grows": (
        "The shortcut's factors 1 + f′ are above 1 as well, so its product grows too: it stays near 1 only when "
        "every branch's derivative is small (see the chain lesson).",
        "有捷径时每个因子 1 + f′ 也大于 1，所以乘积同样增长：只有每个分支的导数都很小时，它才会停在 1 附近（见“链式法则”页）。",
    ),
    "caption.grad.plain_underflows": (
        "Each plain layer multiplies the gradient by its own derivative; here the product became too small for the "
        "number format and was rounded to exactly 0.",
        "普通堆叠的每一层都把梯度乘上自己的导数；这里乘积小到数值格式无法表示，被舍入为 0。",
    ),
    "caption.grad.plain_overflows": (
        "Each plain layer multiplies the gradient by its own derivative; here the product grew past the largest "
        "number the format holds (inf/NaN).",
        "普通堆叠的每一层都把梯度乘上自己的导数；这里乘积超过了数值格式的最大值（inf/NaN）。",
    ),
    "caption.grad.shortcut_underflows": (
        "Even with the shortcut the gradient was rounded to exactly 0 here.",
        "这里即使有捷径，梯度也被舍入为 0。",
    ),
    "caption.grad.shortcut_fades": (
        "Even with the shortcut the gradient fades here: its factors 1 + f′ average ×{factor} a block, below 1.",
        "这里即使有捷径，梯度也在衰减：因子 1 + f′ 平均每块 ×{factor}，小于 1。",
    ),
    "series.seeds_band": ("Seeds {seeds} (thin)", "种子 {seeds}（细线）"),
    "caption.grad.seed_pending": ("Seed {seed}; seeds {others} pending.", "种子 {seed}；种子 {others} 计算中。"),
    "caption.grad.with_band": (
        "With the shortcut, layer 1 gets {range} × the last layer's gradient on seeds {seeds}: {verdict} on every seed.",
        "有捷径时，在种子 {seeds} 上第 1 层的梯度是最后一层的 {range} 倍：每个种子都{verdict}。",
    ),
    "caption.grad.without_band": (
        "Without it, {range} on seeds {seeds}: {verdict} on every seed.",
        "没有捷径时，在种子 {seeds} 上为 {range} 倍：每个种子都{verdict}。",
    ),
    "caption.grad.on_seed": ("{verdict} on seed {seeds}", "种子 {seeds}：{verdict}"),
    "caption.grad.on_seeds": ("{verdict} on seeds {seeds}", "种子 {seeds}：{verdict}"),
    "caption.grad.with_split": (
        "With the shortcut, layer 1 ÷ the last layer depends on the seed: {values} on seeds {seeds} ({verdicts}): "
        "no verdict holds for this setting.",
        "有捷径时，第 1 层 ÷ 最后一层取决于种子：种子 {seeds} 上分别为 {values}（{verdicts}）；这个设置下没有对所有种子都成立的结论。",
    ),
    "caption.grad.without_split": (
        "Without it, the ratio depends on the seed: {values} on seeds {seeds} ({verdicts}): no verdict holds for "
        "this setting.",
        "没有捷径时，这个比值取决于种子：种子 {seeds} 上分别为 {values}（{verdicts}）；这个设置下没有对所有种子都成立的结论。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def gradients(trace: Json) -> list[float | None]:
    return finite(stream(trace, "grad_norm"))


def survival(trace: Json) -> float | None:
    """Layer 1's gradient over the last layer's: how much of the signal survives the trip back (None: overflow)."""
    g = finite([layer["grad_norm"] for layer in trace["layers"]])
    first, last = g[0], g[-1]
    return None if first is None or last is None or last == 0 else first / last


def verdict(ratio: float | None) -> str:
    """overflowed (inf/NaN), underflowed (exactly 0), exploded, grew, faded or kept, from the ratio alone."""
    if ratio is None or not math.isfinite(ratio):
        return "overflowed"
    if ratio == 0:
        return "underflowed"
    if ratio > EXPLODED_ABOVE:
        return "exploded"
    if ratio > KEPT_WITHIN:
        return "grew"
    if ratio < 1 / KEPT_WITHIN:
        return "faded"
    return "kept"


def per_step(ratio: float | None, steps: int) -> float | None:
    """The mean factor per block, ratio^(1/steps)."""
    return ratio ** (1 / steps) if ratio is not None and math.isfinite(ratio) and ratio > 0 and steps > 0 else None


def seed_list(seeds: list[int]) -> str:
    """0–3, or 0, 2, 5."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def ratio_text(value: float | None, lang: str) -> str:
    if value == 0:
        return say({}, "mark.underflowed", lang)  # a gradient rounded away, not a true zero
    return say({}, "mark.overflowed", lang) if value is None else fmt(value, lang)


def span_text(values: list[float | None], lang: str) -> str:
    """One value, or low–high over the seeds."""
    shown = sorted({ratio_text(v, lang) for v in values})
    finite_values = [v for v in values if v is not None]
    if len(shown) == 1 or len(finite_values) != len(values):
        return shown[0] if len(shown) == 1 else ", ".join(ratio_text(v, lang) for v in values)
    return f"{fmt(min(finite_values), lang)}–{fmt(max(finite_values), lang)}"


# ---- The figure -----------------------------------------------------------------------------------------------------


def figure(answer: Json, lang: str, theme: str) -> Json:
    cfg = answer["config"]
    x = list(range(cfg["depth"] + 1))
    shortcut = VARIANTS["residual"][answer["with"][0]["config"]["residual"]]
    residual = shortcut.label_zh if lang == "zh" else shortcut.label
    with_name = text("series.with_residual", lang, residual=residual)
    fig: Json = {
        "data": [],
        "layout": layout(
            theme, text("chart.grad_profile.title", lang), say({}, "axis.layer", lang),
            text("chart.grad_profile.y", lang), ylog=True,
        ),
    }  # fmt: skip
    first_with, first_without = answer["with"][0], answer["without"][0]
    fig["data"].append(line(theme, with_name, x, gradients(first_with), PALETTE["blue"]))
    fig["data"].append(
        line(
            theme,
            text("series.without_residual", lang),
            x,
            gradients(first_without),
            PALETTE["vermillion"],
            dash="dash",
        )
    )
    others = answer["seeds"][1:]
    for k, (w, wo) in enumerate(zip(answer["with"][1:], answer["without"][1:], strict=True)):
        band = text("series.seeds_band", lang, seeds=seed_list(others))
        for trace, color, dash in ((w, PALETTE["blue"], "solid"), (wo, PALETTE["vermillion"], "dash")):
            fig["data"].append(
                line(theme, band, x, gradients(trace), color, dash=dash, width=0.35, markers=False,
                     opacity=0.6, legendgroup="band", showlegend=k == 0 and color == PALETTE["blue"])
            )  # fmt: skip
    mark_overflow(theme, fig, x, gradients(first_with), lang, series=with_name)  # the band is this series' alone
    return finish(fig, theme)


# ---- The caption ----------------------------------------------------------------------------------------------------


def faint(trace: Json) -> tuple[int, int]:
    """(blocks whose gradient is under a tenth of the last block's, blocks with a finite gradient): what the
    heatmap's row of this model says; a block that overflowed is counted in neither."""
    g = [v for v in finite([layer["grad_norm"] for layer in trace["layers"]]) if v is not None]
    last = finite([trace["layers"][-1]["grad_norm"]])[0]
    weak = sum(1 for v in g if last is not None and last > 0 and v / last < 0.1)
    return weak, len(g)


def side(traces: list[Json], depth: int) -> Json:
    ratios = [survival(t) for t in traces]
    verdicts = [verdict(r) for r in ratios]
    common = verdicts[0] if len(set(verdicts)) == 1 else None
    steps = [per_step(r, depth - 1) for r in ratios]
    counts = [faint(t) for t in traces]
    return {"ratios": ratios, "verdicts": verdicts, "verdict": common, "per_block": steps,
            "faint": [c[0] for c in counts], "finite_blocks": [c[1] for c in counts]}  # fmt: skip


def claim(answer: Json) -> Json:
    """The numbers the caption states, by name: per side each seed's ratio, verdict and factor per block, and the
    verdict every seed gives (None where they disagree)."""
    depth = answer["config"]["depth"]
    return {
        "seeds": answer["seeds"],
        "band": BAND,
        "pending": len(answer["seeds"]) < BAND,
        "with": side(answer["with"], depth),
        "without": side(answer["without"], depth),
    }


def caption(answer: Json, lang: str, facts: Json) -> str:
    depth = answer["config"]["depth"]
    if depth < 2:
        return text("caption.grad.one_block", lang)
    seeds = answer["seeds"]
    parts: list[str] = [text("caption.grad.read", lang, depth=depth)]
    for name, key in (("with", "caption.grad.with"), ("without", "caption.grad.without")):
        s = facts[name]
        if len(seeds) == 1:
            step = s["per_block"][0]
            per_block = "" if step is None else text("caption.grad.per_block", lang, factor=fmt(step, lang))
            word = say({}, f"verdict.{s['verdicts'][0]}", lang)
            parts.append(text(key, lang, ratio=ratio_text(s["ratios"][0], lang), per_block=per_block, verdict=word))
        elif s["verdict"] is not None:
            word = say({}, f"verdict.{s['verdict']}", lang)
            parts.append(
                text(f"{key}_band", lang, range=span_text(s["ratios"], lang), seeds=seed_list(seeds), verdict=word)
            )
        else:
            values = ", ".join(ratio_text(r, lang) for r in s["ratios"])
            parts.append(text(f"{key}_split", lang, values=values, seeds=", ".join(map(str, seeds)),
                              verdicts=split_verdicts(s["verdicts"], seeds, lang)))  # fmt: skip
    parts += explanation(facts["with"], facts["without"], lang)
    if facts["pending"]:
        later = list(range(seeds[-1] + 1, seeds[0] + BAND))
        parts.append(text("caption.grad.seed_pending", lang, seed=seed_list(seeds), others=seed_list(later)))
    return sentences(parts, lang)


def split_verdicts(verdicts: list[str], seeds: list[int], lang: str) -> str:
    """faded on seed 0; kept on seeds 1–3: each verdict once, with the seeds that give it."""
    groups: dict[str, list[int]] = {}
    for v, seed in zip(verdicts, seeds, strict=True):
        groups.setdefault(v, []).append(seed)
    joiner = "；" if lang == "zh" else "; "
    return joiner.join(
        text("caption.grad.on_seed" if len(group) == 1 else "caption.grad.on_seeds", lang,
             verdict=say({}, f"verdict.{v}", lang), seeds=seed_list(group))
        for v, group in groups.items()
    )  # fmt: skip


def factor_text(steps: list[float | None], lang: str) -> str:
    known = [s for s in steps if s is not None]
    if not known:
        return ""
    low, high = fmt(min(known), lang), fmt(max(known), lang)
    return low if low == high else f"{low}–{high}"


def explanation(with_side: Json, without_side: Json, lang: str) -> list[str]:
    """Why the two curves went where they went: only from a verdict every seed gives (never "fades" under a seed
    whose curve grows)."""
    parts = []
    plain, factor = without_side["verdict"], factor_text(without_side["per_block"], lang)
    if plain == "underflowed":
        parts.append(text("caption.grad.plain_underflows", lang))
    elif plain == "faded":
        parts.append(text("caption.grad.plain_fades", lang, factor=factor))
    elif plain == "overflowed":
        parts.append(text("caption.grad.plain_overflows", lang))
    elif plain in ("grew", "exploded"):
        parts.append(text("caption.grad.plain_grows", lang, factor=factor))
    elif plain == "kept":
        parts.append(text("caption.grad.plain_kept", lang))
    shortcut = with_side["verdict"]
    if shortcut == "kept":
        parts.append(text("caption.grad.shortcut_keeps", lang))
    elif shortcut in ("grew", "exploded", "overflowed"):
        parts.append(text("caption.grad.shortcut_grows", lang))
    elif shortcut == "underflowed":
        parts.append(text("caption.grad.shortcut_underflows", lang))
    elif shortcut == "faded":
        parts.append(text("caption.grad.shortcut_fades", lang, factor=factor_text(with_side["per_block"], lang)))
    return parts


def rows(answer: Json) -> list[Json]:
    """The drawn data: per seed and variant, every layer's gradient and stream norm (layer 0 = the embedding)."""
    out = []
    for seed, w, wo in zip(answer["seeds"], answer["with"], answer["without"], strict=True):
        for variant, trace in (("with_residual", w), ("without_residual", wo)):
            layers = [trace["embedding"], *trace["layers"]]
            out += [
                {"seed": seed, "variant": variant, "residual": trace["config"]["residual"], "layer": k,
                 "grad_norm": layer["grad_norm"], "act_norm": layer["act_norm"]}
                for k, layer in enumerate(layers)
            ]  # fmt: skip
    return out


def build(answer: Json, lang: str = "en") -> Chart:
    """The /gradients profile of one answer (app/experiments/grad_profile.py), in lang."""
    facts = claim(answer)
    normal, slide = figure(answer, lang, "normal"), figure(answer, lang, "slide")
    patches = {
        "slide": diff(normal, slide),
        **y_scales(),
    }
    return Chart("gradients", normal, caption(answer, lang, facts), facts, rows(answer), patches)


CHART = ChartKind("gradients", "grad_profile", build, STRINGS)
