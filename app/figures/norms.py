"""/norms: the snowball. A trace's mean token norm of the residual stream and of each block's output per layer, the
growth law that fits (app/experiments/laws.py) or the √d line of a norm that pins every token, the format's limits
when they matter and overflow marked; the caption says only what these numbers show."""

from __future__ import annotations

import math
from typing import Any

from ..config import VARIANTS
from ..experiments.laws import BETTER_BY, FIT_OF_RANGE, LawChoice, LawFit, choose_law
from .chart import Chart, ChartKind, Json, diff, y_scales
from .style import FLOAT16_MAX, PALETTE, finish, finite, layout, line, mark_overflow, reference, wants_log
from .words import FLAT_WITHIN, direction, fmt, ratio, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.norms.title": ("Activation norm along the residual stream", "残差流上的激活范数"),
    "series.act_norm": ("Residual stream ‖x_l‖", "残差流 ‖x_l‖"),
    "series.branch_norm": ("Block output ‖f(x)‖", "块输出 ‖f(x)‖"),
    "series.max_abs": ("Largest |entry| (what overflows)", "绝对值最大的分量（决定是否溢出）"),
    "caption.norms": (
        "The measured lengths and the law they follow appear here once the model has run.",
        "模型运行完成后，这里显示实测的长度以及它们符合的规律。",
    ),
    "caption.norms.pre": (
        "Pre-LN: each block adds its output to the stream and nothing normalizes the sum.",
        "Pre-LN：每个块把输出加到残差流上，而相加的结果不做归一化。",
    ),
    "caption.norms.pre_mixed": (
        "Pre-LN: nothing normalizes the stream between blocks; the shortcut, {residual}, sets how much of each "
        "block's output joins it.",
        "Pre-LN：块与块之间不对残差流做归一化；捷径（{residual}）决定每个块的输出有多少加入残差流。",
    ),
    "caption.norms.plain": (
        "Without a shortcut each block's output is the next stream: x_l = f(x_{l−1}), nothing is added.",
        "没有捷径时，每个块的输出就是下一层的残差流：x_l = f(x_{l−1})，没有相加。",
    ),
    "caption.norms.post": (
        "{norm} {where} rescales every token vector to the same length √d_model at every layer (dashed line). "
        "The stream cannot snowball, but see the Gradients page for what this costs the gradient.",
        "{norm} {where}，把每层的每个词元向量都缩放到同样的长度 √d_model（虚线）。"
        "残差流不会滚雪球，但梯度要为此付出代价，见“梯度”页。",
    ),
    "caption.norms.where.add": ("after the add", "放在相加之后"),
    "caption.norms.where.block": ("at the end of every block", "放在每个块的末尾"),
    "caption.norms.pinned": (
        "Measured: every layer's mean token length is within {percent}% of √{d} = {value}.",
        "实测：每层词元的平均长度与 √{d} = {value} 相差不超过 {percent}%。",
    ),
    "caption.norms.other": (
        "The stream's length after each block, for this norm and placement.",
        "在当前的归一化方式和位置下，每个块之后残差流的长度。",
    ),
    "caption.norms.post_free": (
        "{norm} {where} does not set each token's length, so no √d_model line is drawn.",
        "{norm} {where}也不会固定每个词元的长度，所以不画 √d_model 线。",
    ),
    "caption.norms.grew": (
        "Measured: the stream's norm grew ×{ratio} from the embedding (layer 0) to layer {depth}.",
        "实测：残差流范数从嵌入层（第 0 层）到第 {depth} 层增长为 {ratio} 倍。",
    ),
    "caption.norms.flat": (
        "Measured: the stream's norm stayed within ×{flat} of the embedding's: ×{ratio} at layer {depth}.",
        "实测：残差流范数与嵌入层相差不到 {flat} 倍：第 {depth} 层为 {ratio} 倍。",
    ),
    "caption.norms.shrink": (
        "Measured: the stream shrank to ×{ratio} of the embedding's length by layer {depth}, ×{step} per block on "
        "average.",
        "实测：到第 {depth} 层，残差流缩小为嵌入层长度的 {ratio} 倍，平均每块 ×{step}。",
    ),
    "caption.norms.underflow": (
        "The stream shrank until it underflowed to exactly 0 at layer {layer}: too small for {dtype}, every "
        "later layer gets zeros.",
        "残差流不断缩小，在第 {layer} 层下溢为 0：数值小到 {dtype} 无法表示，之后的每一层收到的都是 0。",
    ),
    "caption.norms.law": (
        "Of four laws fitted from layer {start} by least squares, {law} fits (dashed): {why} Root-mean-square "
        "error {error}, against {rival_error} for the next best, {rival}.",
        "从第 {start} 层起用最小二乘拟合四种规律，{law} 符合（虚线）：{why}均方根误差 {error}，"
        "次优的规律（{rival}）为 {rival_error}。",
    ),
    "caption.norms.no_law": (
        "No simple law fits: of √l, a line, geometric growth and a power fitted from layer {start}, the closest, {law}, "
        "misses by {error} (root mean square) and the next, {rival}, by {rival_error}, over a range of {spread}. A "
        "law is named only when it misses by at most {share}% of the range and {better} × the next best's error.",
        "没有简单的规律符合：从第 {start} 层起拟合 √l、直线、几何增长和幂律，最接近的规律（{law}）误差为 {error}"
        "（均方根），其次（{rival}）为 {rival_error}，而数据的范围是 {spread}。只有误差不超过范围的 {share}%、"
        "且不超过次优误差的 {better} 倍时才称其为规律。",
    ),
    "caption.norms.why.sqrt": (
        "the blocks' updates add like independent steps, whose squares add up (Xiong et al. 2020).",
        "各块的增量近似独立，按平方累加（Xiong 等，2020）。",
    ),
    "caption.norms.why.line": (
        "the blocks' updates are aligned, so their lengths add up, faster than √l.",
        "各块的增量方向一致，长度直接相加，比 √l 增长得快。",
    ),
    "caption.norms.why.exp": (
        "each block multiplies the stream by about ×{factor}, so it grows geometrically.",
        "每个块把残差流放大约 {factor} 倍，呈几何增长。",
    ),
    "caption.norms.why.power_slow": ("slower than √l.", "比 √l 增长得还慢。"),
    "caption.norms.why.power_between": (
        "between √l (independent updates) and a line (aligned updates).",
        "介于 √l（增量相互独立）和直线（增量方向一致）之间。",
    ),
    "caption.norms.why.power_fast": ("faster than a line.", "比直线增长得还快。"),
    "caption.norms.mix_from": (
        "Laws are fitted from layer {layer} on: Mix-LN's first {layer} blocks are Post-LN.",
        "规律从第 {layer} 层起拟合：Mix-LN 的前 {layer} 个块是 Post-LN。",
    ),
    "caption.norms.log_scale": (
        "The values span more than {decades} decades, so the axis is logarithmic and errors are factors.",
        "数值跨越超过 {decades} 个数量级，所以纵轴取对数，误差以倍数表示。",
    ),
    "caption.norms.no_norm": (
        "With no norm there is nothing to place: the norm position and the final norm change nothing here.",
        "不使用归一化时没有可放置的归一化：归一化位置和最终归一化在这里都不起作用。",
    ),
    "caption.norms.final_norm": (
        "The final norm acts after the last block, on what the head reads; this chart stops before it, so it changes "
        "nothing here.",
        "最终归一化作用在最后一个块之后、输出头读取之前；本图止于它之前，所以它在这里不起作用。",
    ),
    "caption.norms.overflow": (
        "In {dtype} the values passed the largest finite number: from layer {layer} on they are inf or NaN (marked).",
        "在 {dtype} 下数值超过了最大有限值：从第 {layer} 层起变成 inf 或 NaN（已标出）。",
    ),
    "law.sqrt": ("√({x}² + c·l)", "√({x}² + c·l)"),
    "law.line": ("a line {x} + c·l", "直线 {x} + c·l"),
    "law.exp": ("geometric growth {x}·e^(c·l)", "几何增长 {x}·e^(c·l)"),
    "law.power": ("the power ({x}^(1/p) + c·l)^p with p = {p}", "幂律 ({x}^(1/p) + c·l)^p，p = {p}"),
    # The legend's short names (a phone's row is 340 px wide); the caption under the chart gives the formula.
    "series.law.sqrt": ("Fit: √l growth", "拟合：√l 增长"),
    "series.law.line": ("Fit: a line", "拟合：直线"),
    "series.law.exp": ("Fit: geometric", "拟合：几何增长"),
    "series.law.power": ("Fit: power, p = {p}", "拟合：幂律，p = {p}"),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def is_pinned(cfg: Json) -> bool:
    """Post placement of a norm that pins every token at √d (its pins_token in the variant table)."""
    return cfg["norm_position"] == "post" and VARIANTS["norm"][cfg["norm"]].pins_token


def stream(trace: Json, field: str) -> list[float | None]:
    """Layer 0 (the embedding) and every block's value of one field."""
    return [trace["embedding"][field], *(layer[field] for layer in trace["layers"])]


def fit_from(cfg: Json) -> int:
    """The layer the laws start from: Mix-LN's first ⌊L/4⌋ blocks are Post-LN (Li et al. 2024), pinned near √d."""
    return cfg["depth"] // 4 if cfg["norm_position"] == "mix" and cfg["norm"] != "none" else 0


def law_choice(trace: Json) -> LawChoice | None:
    """The laws compared on a stream that grew (None when it did not grow, is pinned, or cannot be fitted)."""
    act = finite(stream(trace, "act_norm"))
    if is_pinned(trace["config"]) or direction(act) != "grew":
        return None
    return choose_law(act[fit_from(trace["config"]) :])


SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def law_name(fit: LawFit, lang: str, start: int = 0) -> str:
    """The law's formula, anchored at the stream's norm ‖x_s‖ at the layer s the fit starts from."""
    anchor = f"‖x{str(start).translate(SUBSCRIPT)}‖"
    return text(f"law.{fit.key}", lang, p=fmt(fit.p, lang), x=anchor)


def first_overflow(trace: Json) -> int | None:
    """The first layer whose stream or largest entry is inf/NaN (null in strict JSON)."""
    act, peak = finite(stream(trace, "act_norm")), finite(stream(trace, "act_max_abs"))
    return next((layer for layer, (a, m) in enumerate(zip(act, peak, strict=True)) if a is None or m is None), None)


def build(trace: Json, lang: str = "en") -> Chart:
    """The /norms chart of one trace answer, in lang, with its slide and scale patches."""
    choice = law_choice(trace)
    normal, slide = figure(trace, lang, "normal", choice), figure(trace, lang, "slide", choice)
    patches = {
        "slide": diff(normal, slide),
        **y_scales(),
    }
    return Chart("norms", normal, caption(trace, lang, choice), claim(trace, choice), rows(trace, choice), patches)


def figure(trace: Json, lang: str, theme: str, choice: LawChoice | None) -> Json:
    cfg = trace["config"]
    x = list(range(cfg["depth"] + 1))
    act, max_abs = finite(stream(trace, "act_norm")), finite(stream(trace, "act_max_abs"))
    branch = finite([layer["branch_norm"] for layer in trace["layers"]])
    seen = [v for v in [*max_abs, *act] if v is not None]
    peak = max(seen) if seen else 0.0
    show_peak = cfg["dtype"] != "float32" or peak > FLOAT16_MAX / 10
    log = wants_log(act, branch, max_abs if show_peak else [])
    title, y_title = text("chart.norms.title", lang), text("chart.norms.y", lang)
    fig: Json = {"data": [], "layout": layout(theme, title, text("axis.layer", lang), y_title, ylog=log)}
    data = fig["data"]
    data.append(line(theme, text("series.act_norm", lang), x, act, PALETTE["blue"]))
    data.append(line(theme, text("series.branch_norm", lang), x[1:], branch, PALETTE["vermillion"], width=0.8))
    if choice is not None and choice.law is not None:
        start = fit_from(cfg)
        name = text(f"series.law.{choice.law.key}", lang, p=fmt(choice.law.p, lang))
        data.append(line(theme, name, x[start:], choice.law.curve, PALETTE["black"], dash="dash", markers=False))
        data[-1]["line"]["width"] *= 0.6
    if is_pinned(cfg):
        root = math.sqrt(cfg["d_model"])
        data.append(reference(theme, text("series.theory_post", lang, value=fmt(root, lang)), x, root))
    if show_peak:
        data.append(line(theme, text("series.max_abs", lang), x, max_abs, PALETTE["green"], dash="dot", width=0.7))
    overflowed = first_overflow(trace) is not None
    # The float16 limit matters once values come within 10x of it (and stays readable up to 1e3x); in bfloat16 the
    # format's own limit (about 3.4e38) is the one that overflows.
    if FLOAT16_MAX / 10 < peak < FLOAT16_MAX * 1e3 or (cfg["dtype"] == "float16" and overflowed):
        data.append(reference(theme, text("series.fp16_max", lang), x, FLOAT16_MAX, PALETTE["vermillion"]))
    limit = trace["summary"]["dtype_max"]
    if cfg["dtype"] == "bfloat16" and (peak > limit / 10 or overflowed):
        name = text("series.dtype_max", lang, dtype=cfg["dtype"], value=fmt(limit, lang))
        data.append(reference(theme, name, x, limit, PALETTE["vermillion"]))
    mark_overflow(theme, fig, x, [a if m is not None else None for a, m in zip(act, max_abs, strict=True)], lang)
    return finish(fig, theme)


def lead(cfg: Json, trace: Json, lang: str) -> list[str]:
    """What the placement does to the stream, before any number."""
    norm = VARIANTS["norm"][cfg["norm"]]
    name = norm.label_zh if lang == "zh" else norm.label
    where = text("caption.norms.where." + ("block" if cfg["residual"] == "none" else "add"), lang)
    plain = [text("caption.norms.plain", lang)] if cfg["residual"] == "none" else []
    if is_pinned(cfg):
        return [*plain, text("caption.norms.post", lang, norm=name, where=where), pinned(cfg, trace, lang)]
    if cfg["norm"] == "none":
        return plain or [text("caption.norms.other", lang)]
    if cfg["norm_position"] == "pre" and cfg["residual"] in ("identity", "dense"):
        return [text("caption.norms.pre", lang)]
    if cfg["norm_position"] == "pre" and cfg["residual"] != "none":
        shortcut = VARIANTS["residual"][cfg["residual"]]
        return [text("caption.norms.pre_mixed", lang, residual=shortcut.label_zh if lang == "zh" else shortcut.label)]
    if cfg["norm_position"] == "post":
        return [*plain, text("caption.norms.post_free", lang, norm=name, where=where)]
    return plain or [text("caption.norms.other", lang)]


def pin_deviation(trace: Json) -> float | None:
    """The largest relative deviation of a block's stream length from √d_model (None: a length overflowed)."""
    target = math.sqrt(trace["config"]["d_model"])
    lengths = finite([layer["act_norm"] for layer in trace["layers"]])
    if any(v is None for v in lengths):
        return None
    return max(abs(v / target - 1) for v in lengths if v is not None)


def pinned(cfg: Json, trace: Json, lang: str) -> str:
    target = math.sqrt(cfg["d_model"])
    worst = pin_deviation(trace)
    if worst is None:
        return ""
    percent = "0.01" if 100 * worst < 0.01 else fmt(100 * worst, lang)  # float32 rounding: never "within 0%"
    return text("caption.norms.pinned", lang, percent=percent, d=cfg["d_model"], value=fmt(target, lang))


def change(trace: Json, lang: str) -> str:
    """What the stream did from the embedding to the last layer, in the one direction rule (words.direction)."""
    cfg, act = trace["config"], finite(stream(trace, "act_norm"))
    went = direction(act)
    if went == "underflow":
        zero = next(layer for layer, v in enumerate(act) if v == 0)
        return text("caption.norms.underflow", lang, layer=zero, dtype=cfg["dtype"])
    if went == "overflow":
        return ""  # the overflow sentence says where
    end = ratio(act)
    values = {"ratio": fmt(end, lang), "depth": cfg["depth"], "flat": fmt(FLAT_WITHIN, lang)}
    if went == "shrank":
        step = end ** (1 / cfg["depth"]) if end else None
        return text("caption.norms.shrink", lang, step=fmt(step, lang), **values)
    return text(f"caption.norms.{went}", lang, **values)


def error_text(error: float, log: bool, lang: str) -> str:
    """An RMS error in the values' unit, or on a log scale as the factor it stands for."""
    return f"×{fmt(10**error, lang)}" if log else fmt(error, lang)


def law_sentences(trace: Json, choice: LawChoice | None, lang: str) -> list[str]:
    if choice is None:
        return []
    cfg, fit, rival = trace["config"], choice.law, choice.rival
    start = fit_from(cfg)
    told = [text("caption.norms.mix_from", lang, layer=start)] if start else []
    if choice.log:
        told.append(text("caption.norms.log_scale", lang, decades=3))
    if fit is None:
        best = min(choice.fits, key=lambda f: f.error)
        rival = min((f for f in choice.fits if f is not best), key=lambda f: f.error)
        values = {
            "law": law_name(best, lang, start),
            "error": error_text(best.error, choice.log, lang),
            "rival": law_name(rival, lang, start),
            "rival_error": error_text(rival.error, choice.log, lang),
            "spread": error_text(choice.spread, choice.log, lang),
            "share": fmt(100 * FIT_OF_RANGE, lang),
            "better": fmt(BETTER_BY, lang),
            "start": start,
        }
        return [*told, text("caption.norms.no_law", lang, **values)]
    key = fit.key
    if key == "power":
        key += "_slow" if (fit.p or 0) < 0.5 else "_fast" if (fit.p or 0) > 1 else "_between"
    factor = fmt(math.exp(fit.c), lang) if key == "exp" else ""  # c of a power is in its lifted unit
    why = text(f"caption.norms.why.{key}", lang, factor=factor)
    values = {
        "law": law_name(fit, lang, start),
        "why": why,
        "error": error_text(fit.error, choice.log, lang),
        "rival": law_name(rival, lang, start),
        "rival_error": error_text(rival.error, choice.log, lang),
        "start": start,
    }
    return [*told, text("caption.norms.law", lang, **values)]


def idle_controls(cfg: Json, lang: str) -> list[str]:
    """Controls this chart cannot show a change of, and why."""
    if cfg["norm"] == "none":
        return [text("caption.norms.no_norm", lang)]
    if not cfg["final_norm"]:
        return [text("caption.norms.final_norm", lang)]
    return []


def caption(trace: Json, lang: str, choice: LawChoice | None) -> str:
    cfg = trace["config"]
    first = first_overflow(trace)
    parts = [
        *lead(cfg, trace, lang),
        "" if is_pinned(cfg) else change(trace, lang),
        *law_sentences(trace, choice, lang),
        first is not None and text("caption.norms.overflow", lang, dtype=cfg["dtype"], layer=first),
        *idle_controls(cfg, lang),
    ]
    return sentences(parts, lang)


def claim(trace: Json, choice: LawChoice | None) -> Json:
    """The numbers the caption states, by name (the tests recompute each one from the trace)."""
    act = finite(stream(trace, "act_norm"))
    law = choice.law if choice is not None else None
    return {
        "direction": direction(act),
        "ratio": ratio(act),
        "pinned": is_pinned(trace["config"]),
        "fit_from": fit_from(trace["config"]),
        "law": None if law is None else {"key": law.key, "p": law.p, "c": law.c, "error": law.error},
        "fits": None if choice is None else {f.key: {"p": f.p, "error": f.error} for f in choice.fits},
        "log_scale": None if choice is None else choice.log,
        "spread": None if choice is None else choice.spread,
        "overflow_layer": first_overflow(trace),
    }


def rows(trace: Json, choice: LawChoice | None) -> list[Json]:
    """The drawn data per layer (layer 0 = the embedding), with the fitted law where one is drawn."""
    start = fit_from(trace["config"])
    curve: list[Any] = [None] * start + (choice.law.curve if choice is not None and choice.law is not None else [])
    layers = [trace["embedding"] | {"branch_norm": None}, *trace["layers"]]
    return [
        {
            "layer": k,
            "act_norm": layer["act_norm"],
            "branch_norm": layer["branch_norm"],
            "act_max_abs": layer["act_max_abs"],
            "law": curve[k] if k < len(curve) else None,
        }
        for k, layer in enumerate(layers)
    ]


CHART = ChartKind("norms", "trace", build, STRINGS)
