"""Real models: the band of norms, the snowball and the first token's massive activation in two pretrained Transformers (POST
/api/real_trace, docs/models.md). The slides are in the deck only where both packaged models are installed: a
slide must never claim what this server cannot show."""

from __future__ import annotations

import importlib.util
import math
from typing import Any

from ...config.real import DEFAULT_TEXT, RealTraceRequest
from ...models.pretrained.sources import packaged_source
from .build import chart, check, claim, const, op, panel, read, series, slide
from .reference import departs


def real_trace(model: str, text: str = DEFAULT_TEXT) -> dict[str, Any]:
    """A source for POST /api/real_trace, validated by the API's own request model."""
    return {"api": "real_trace", "body": RealTraceRequest(model=model, text=text, gradients=True).model_dump()}


MINILM, SMOLLM2 = real_trace("minilm"), real_trace("smollm2")
SENTENCE = {
    "en": f"Pretrained weights, offline · the sentence “{DEFAULT_TEXT}”",
    "zh": f"预训练权重，离线 · 句子“{DEFAULT_TEXT}”",
}
QUANTISED = {
    "en": SENTENCE["en"] + " · 4-bit weights (Q4_1), computed in float32",
    "zh": SENTENCE["zh"] + " · 4 位权重（Q4_1），以 float32 计算",
}
SQRT_384 = math.sqrt(384)

PINNED = slide(
    "real-pinned",
    (
        "A real Post-LN model: every block's output in a narrow band",
        "真实的 Post-LN 模型：每个块输出的范数都固定在一个范围内",
    ),
    (
        "MiniLM is a BERT, and BERT is Post-LN (Devlin et al. 2019): every block ends in a LayerNorm, so every "
        "block's output has the norm the LayerNorm gives it, whatever went in.",
        "MiniLM 属于 BERT 家族，而 BERT 是 Post-LN（Devlin 等 2019）：每个块都以 LayerNorm 结束，所以无论输入是什么，"
        "每个块输出的范数都由 LayerNorm 决定。",
    ),
    (
        "A small correction to the usual table: BERT is sometimes listed with the Pre-LN models, but it is the "
        "textbook Post-LN model, x_{l+1} = LN(x_l + F(x_l)), like the original Transformer. The level is set by the "
        "learned gain γ, not √d = 19.6: a freshly initialised LayerNorm (γ = 1, β = 0) would give every token exactly √d. "
        "This is a trained model; the stacks built in this deck were all at initialisation.",
        "对常见表格的一点小更正：BERT 有时被列在 Pre-LN 模型中，但它其实是典型的 Post-LN 模型，"
        "x_{l+1} = LN(x_l + F(x_l))，与最初的 Transformer 相同。范数的水平由学到的增益 γ 决定，而不是 √d = 19.6："
        "刚初始化的 LayerNorm（γ = 1、β = 0）会把每个词元的范数固定为恰好 √d。这是训练过的模型；本课件自己搭建的网络都处于初始化状态。",
    ),
    chart(
        "layers",
        ("MiniLM-L6: stream norm per block", "MiniLM-L6：逐块残差流范数"),
        [MINILM],
        "/models?model=minilm&compare=none",
        settings=SENTENCE,
        panels=[panel(("Mean ‖x_l‖ over tokens", "‖x_l‖ 的词元平均"))],
        series=[series(0, "stream.mean", ("MiniLM-L6 (Post-LN)", "MiniLM-L6（Post-LN）"), "blue")],
        overlays=[
            {"type": "hline", "value": SQRT_384, "label": {"en": "√d = 19.6", "zh": "√d = 19.6"}, "color": "black"}
        ],
    ),
    claim(
        (
            "Every block's output stays between {low} and {high} (√384 = {sqrtd|3}); tokens up to {before|2}× apart "
            "before a block's last norm are within {after|2}× after it.",
            "每个块的输出都保持在 {low} 与 {high} 之间（√384 = {sqrtd|3}）；在块的最后一个归一化之前相差可达 {before|2} 倍"
            "的词元，归一化之后相差不超过 {after|2} 倍。",
        ),
        {
            "outputs": read(0, "stream.mean[1:]"),
            "low": op("min", "outputs"),
            "high": op("max", "outputs"),
            "band": op("ratio", ["high", "low"]),
            "sqrtd": const(SQRT_384),
            "befores": read(0, "post_ln.token_spread_before_norm"),
            "afters": read(0, "post_ln.token_spread_after_norm"),
            "before": op("max", "befores"),
            "after": op("max", "afters"),
        },
        [check("high", "<", SQRT_384), check("band", "<", 1.5), check("after", "<", 2.0), check("before", ">", 10.0)],
    ),
    departs=departs(
        "a pretrained MiniLM-L6 (BERT family, Post-LN), not a stack built here",
        "预训练的 MiniLM-L6（BERT 家族，Post-LN），不是这里搭建的模型",
    ),
)

SNOWBALL = slide(
    "real-snowball",
    ("A real pre-norm model: the stream snowballs", "真实的 Pre-norm 模型：残差流滚雪球"),
    (
        "SmolLM2 is a Llama: pre-norm, nothing normalises the stream itself. Without the first token, the stream grows "
        "about tenfold over 30 blocks, but not at a steady rate: some blocks grow it by half, some shrink it.",
        "SmolLM2 属于 Llama 家族：Pre-norm，残差流本身从不被归一化。不计第一个词元，残差流在 30 个块中增长约十倍，"
        "但增长并不均匀：有的块让它变大一半，有的块让它变小。",
    ),
    (
        "Read with hooks on each block, before the final norm: the hidden_states a library returns last already have "
        "the final norm applied. The weights are a 4-bit approximation of SmolLM2-135M-Instruct. This is a trained model; "
        "the snowball slides showed a model at initialisation. The caption's 'per block on average' is the geometric mean "
        "of very different factors: the first blocks grow the stream by half, a few shrink it, the later ones add 3 to "
        "16 %. Heimersheim & Turner 2023 measured about ×1.045 per block in GPT-2 XL, a trained model of another family.",
        "用挂在每个块上的钩子在最终归一化之前读取：库返回的最后一个 hidden_states 已经做过最终归一化。权重是 "
        "SmolLM2-135M-Instruct 的 4 位近似值。这是训练过的模型；“滚雪球”两页展示的是初始化时的模型。说明文字中的“平均每块”"
        "是几何平均，背后的因子相差很大：最初几块让残差流变大一半，有几块让它变小，后面的块每块增加 3% 到 16%。"
        "Heimersheim 与 Turner 2023 在 GPT-2 XL（另一个家族的训练过的模型）中测得每块约乘以 1.045。",
    ),
    chart(
        "layers",
        (
            "SmolLM2-135M: stream norm per block, without the first token",
            "SmolLM2-135M：逐块残差流范数（不计第一个词元）",
        ),
        [SMOLLM2],
        "/models?model=smollm2&compare=minilm",
        settings=QUANTISED,
        panels=[panel(("Mean ‖x_l‖ over tokens 2…T", "第 2…T 个词元的 ‖x_l‖ 平均"), log=True)],
        series=[series(0, "stream.mean_without_first", ("SmolLM2 (pre-norm)", "SmolLM2（Pre-norm）"), "vermillion")],
    ),
    claim(
        (
            "{start} after block 1, {end} after block 30: ×{over|3} over 29 blocks, ×{per|3} per block on average. "
            "Block by block the factor runs from ×{low|2} to ×{high|2}.",
            "第 1 块后为 {start}，第 30 块后为 {end}：29 个块共变为 {over|3} 倍，平均每块乘以 {per|3}。"
            "逐块看，这个因子从 {low|2} 到 {high|2} 不等。",
        ),
        {
            "start": read(0, "stream.mean_without_first[1]"),
            "end": read(0, "stream.mean_without_first[-1]"),
            "over": op("ratio", ["end", "start"]),
            "per": op("root", "over", n=29),
            "after": read(0, "stream.mean_without_first[2:]"),
            "before": read(0, "stream.mean_without_first[1:-1]"),
            "factors": op("ratio", ["after", "before"]),
            "low": op("min", "factors"),
            "high": op("max", "factors"),
        },
        [
            check("over", "between", [5.0, 20.0]),
            check("per", "between", [1.05, 1.12]),
            check("low", "<", 0.95),  # some blocks shrink the stream: not a constant factor
            check("high", ">", 1.3),
        ],
    ),
    departs=departs(
        "a pretrained SmolLM2-135M (Llama family, Pre-RMSNorm), not a stack built here",
        "预训练的 SmolLM2-135M（Llama 家族，Pre-RMSNorm），不是这里搭建的模型",
    ),
)

SINK = slide(
    "real-sink",
    ("One token carries a massive activation", "一个词元携带巨大的激活值"),
    (
        "At one block the first token's stream jumps to more than a hundred times the others' mean, stays there for a "
        "few blocks and then falls back: a massive activation. The other tokens' norms are not like it.",
        "在某一块，第一个词元的残差流突然跳到其他词元平均值的一百多倍，保持几块后又回落：这就是巨大激活。"
        "其他词元的范数都不是这样。",
    ),
    (
        "Sun et al. 2024 call these massive activations. They link them to attention resting on the first token (Xiao "
        "et al. 2023's attention sink), but this slide measures only the stream's norm, not attention: it cannot show the "
        "sink. A pre-norm stream has no norm to stop one token from growing this large; the block's own norm still reads "
        "it at unit scale. Report means with and without the first token, or the first token alone sets the mean.",
        "Sun 等 2024 称之为巨大激活（massive activations），并把它与注意力停在第一个词元上（Xiao 等 2023 的 attention "
        "sink）联系起来；但本页只测量残差流的范数，不测量注意力，所以无法展示 attention sink。Pre-norm 的残差流"
        "没有归一化来阻止某个词元长得这么大；块自己的归一化仍以单位尺度读取它。报告平均值时要分别给出含与不含第一个词元的结果，"
        "否则平均值就由第一个词元决定。",
    ),
    chart(
        "layers",
        ("SmolLM2-135M: the first token against the others", "SmolLM2-135M：第一个词元与其他词元"),
        [SMOLLM2],
        "/models?model=smollm2&compare=none",
        settings=QUANTISED,
        panels=[panel(("‖x_l‖", "‖x_l‖"), log=True)],
        series=[
            series(0, "stream.first", ("First token", "第一个词元"), "vermillion"),
            series(0, "stream.mean_without_first", ("Mean of the others", "其他词元的平均"), "blue"),
        ],
    ),
    claim(
        (
            "The first token's norm reaches {peak|3}. Its ratio to the others' mean is above 100 from block {jump|0} to "
            "block {last|0} (at most {top|3}), then below 100, down to {end|2} at block 30.",
            "第一个词元的范数最高达到 {peak|3}。它与其他词元平均值之比从第 {jump|0} 块到第 {last|0} 块都超过 100"
            "（最高 {top|3}），此后低于 100，第 30 块降到 {end|2}。",
        ),
        {
            "firsts": read(0, "stream.first"),
            "peak": op("max", "firsts"),
            "ratios": read(0, "summary.first_token_ratio[1:]"),  # entry k: block k
            "jump": op("first_over", "ratios", bound=100.0),
            "last": op("last_over", "ratios", bound=100.0),
            "above": op("slice", "ratios", start="jump", stop="last"),
            "top": op("max", "above"),
            "rest": op("slice", "ratios", start="last", shift=1),
            "end": read(0, "summary.first_token_ratio[-1]"),
        },
        [
            check("above", ">", 100.0),  # every block of the range the caption names
            check("rest", "<", 100.0),
            check("end", "<", 30.0),
            check("peak", ">", 10000.0),
            check("last", "<", 30),
        ],
    ),
    departs=departs(
        "a pretrained SmolLM2-135M (Llama family, Pre-RMSNorm), not a stack built here",
        "预训练的 SmolLM2-135M（Llama 家族，Pre-RMSNorm），不是这里搭建的模型",
    ),
)


def available() -> bool:
    """Both packaged models and the [models] extra are installed (found without importing anything)."""
    models = packaged_source("minilm") is not None and packaged_source("smollm2") is not None
    return models and importlib.util.find_spec("transformers") is not None


SLIDES = [PINNED, SNOWBALL, SINK] if available() else []
