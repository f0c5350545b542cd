"""Real models: the LayerNorm's pinning, the snowball, and the massive activation beside the attention sink in two
pretrained Transformers (POST /api/real_trace, docs/models.md). The slides are in the deck only where both packaged
models are installed: a slide must never claim what this server cannot show. Every claim is checked on the default
sentence here and on every sentence of the built-in set (app/experiments/real_sentences.py) by the tests and
`make bench`."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from typing import Any

from ...config.real import DEFAULT_TEXT, RealTraceRequest
from ...models.real.sources import packaged_source
from ..real_trace import PINNED_SPREAD
from .build import chart, check, claim, const, op, panel, read, series, slide
from .claims import evaluate, failed_values
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
        "A real Post-LN model: LayerNorm sets every output",
        "真实的 Post-LN 模型：LayerNorm 决定每个块的输出",
    ),
    (
        "MiniLM is a BERT, and BERT is Post-LN (Devlin et al. 2019): every block ends in a LayerNorm, so the "
        "LayerNorm, not what went in, sets each block's output norm. In the first blocks it pins the tokens within "
        "1.5× of each other; in the last ones they spread again.",
        "MiniLM 属于 BERT 家族，而 BERT 是 Post-LN（Devlin 等 2019）：每个块都以 LayerNorm 结束，所以决定每个块输出范数的"
        "是 LayerNorm，而不是输入。在前几个块里，它把各词元固定在彼此 1.5 倍以内；在最后几个块里，它们又散开了。",
    ),
    (
        "A small correction to the usual table: BERT is sometimes listed with the Pre-LN models, but it is the "
        "textbook Post-LN model, x_{l+1} = LN(x_l + F(x_l)), like the original Transformer. The level is set by the "
        "learned gain γ, not √d = 19.6: a freshly initialised LayerNorm (γ = 1, β = 0) would give every token exactly √d. "
        "'Pinned' counts the text tokens only (neither [CLS]/[SEP] nor [UNK]): an [UNK] token ends far below the others. "
        "The same holds on every sentence of the built-in set (/models draws the set); this is a trained model, the "
        "stacks built in this deck were all at initialisation.",
        "对常见表格的一点小更正：BERT 有时被列在 Pre-LN 模型中，但它其实是典型的 Post-LN 模型，"
        "x_{l+1} = LN(x_l + F(x_l))，与最初的 Transformer 相同。范数的水平由学到的增益 γ 决定，而不是 √d = 19.6："
        "刚初始化的 LayerNorm（γ = 1、β = 0）会把每个词元的范数固定为恰好 √d。“固定”只计文本词元（不计 [CLS]/[SEP] 和 "
        "[UNK]）：[UNK] 词元的范数远低于其他词元。内置句子集中的每个句子都是如此（/models 画出了整个句子集）；"
        "这是训练过的模型，本课件自己搭建的网络都处于初始化状态。",
    ),
    chart(
        "layers",
        (
            "MiniLM-L6: the stream's norm, and the tokens' spread",
            "MiniLM-L6：逐块残差流范数，以及词元之间相差多少",
        ),
        [MINILM],
        "/models?model=minilm&compare=none",
        settings=SENTENCE,
        panels=[
            panel(("Mean ‖x_l‖ over tokens", "‖x_l‖ 的词元平均")),
            panel(("Max / min ‖x‖", "‖x‖ 最大 / 最小")),
        ],
        series=[
            series(0, "stream.mean", ("MiniLM-L6", "MiniLM-L6"), "vermillion"),
            series(
                0,
                "post_ln.text_token_spread_after_norm",
                ("After the norm: text tokens", "最后的归一化之后：文本词元"),
                "green",
                panel=1,
            ),
            series(
                0,
                "post_ln.token_spread_before_norm",
                ("Before it: all tokens", "归一化之前：所有词元"),
                "purple",
                dash="dash",
                panel=1,
            ),
        ],
        overlays=[
            {"type": "hline", "value": SQRT_384, "label": {"en": "√d = 19.6", "zh": "√d = 19.6"}, "color": "black"},
            {"type": "hline", "value": 1.5, "label": {"en": "1.5×", "zh": "1.5 倍"}, "color": "green", "panel": 1},
        ],
    ),
    claim(
        (
            "Every block's output has a mean norm between {low} and {high} (√384 = {sqrtd|3}). Tokens up to {before|2}× "
            "apart before a block's last norm end within {pin|2}× of each other after it in blocks 1–{k|0}; from "
            "block {over|0} on they spread to {spread|2}×. {unk|0} of {tokens|0} tokens are [UNK].",
            "每个块输出的平均范数都在 {low} 与 {high} 之间（√384 = {sqrtd|3}）。在块的最后一个归一化之前相差可达 "
            "{before|2} 倍的词元，在第 1–{k|0} 块的归一化之后彼此相差不超过 {pin|2} 倍；从第 {over|0} 块起又散开到 "
            "{spread|2} 倍。{tokens|0} 个词元中有 {unk|0} 个是 [UNK]。",
        ),
        {
            "outputs": read(0, "stream.mean[1:]"),
            "low": op("min", "outputs"),
            "high": op("max", "outputs"),
            "sqrtd": const(SQRT_384),
            "befores": read(0, "post_ln.token_spread_before_norm"),
            "before": op("max", "befores"),
            "spreads": read(0, "post_ln.text_token_spread_after_norm"),  # entry b - 1: block b, text tokens only
            "over": op("first_over", "spreads", bound=PINNED_SPREAD),
            "one": const(1),
            "back": const(-1),
            "k": op("add", ["over", "back"]),
            "pinned": op("slice", "spreads", start="one", stop="k"),  # blocks 1..k: every one of them pinned
            "pin": op("max", "pinned"),
            "rest": op("slice", "spreads", start="over"),  # blocks over..6: every one of them spread
            "spread": op("max", "rest"),
            "unk": read(0, "unknown_tokens"),
            "tokens": read(0, "summary.tokens"),
        },
        [
            check("high", "<", SQRT_384),
            check("before", ">", 10.0),
            check("pinned", "between", [1.0, PINNED_SPREAD]),
            check("rest", ">", PINNED_SPREAD),
            check("k", ">", 1),
        ],
    ),
    departs=departs(
        "a pretrained MiniLM-L6 (BERT, Post-LN), not built here",
        "预训练的 MiniLM-L6（BERT 家族，Post-LN），不是这里搭建的模型",
    ),
)

SNOWBALL = slide(
    "real-snowball",
    ("A real pre-norm model: the stream snowballs", "真实的 Pre-norm 模型：残差流滚雪球"),
    (
        "SmolLM2 is a Llama: pre-norm, nothing normalises the stream itself. Without the first token, the stream grows "
        "about tenfold over 30 blocks, but not at a steady rate: some blocks grow it by half, others barely change it.",
        "SmolLM2 属于 Llama 家族：Pre-norm，残差流本身从不被归一化。不计第一个词元，残差流在 30 个块中增长约十倍，"
        "但增长并不均匀：有的块让它变大一半，有的块几乎不改变它。",
    ),
    (
        "Read with hooks on each block, before the final norm: the hidden_states a library returns last already have "
        "the final norm applied. The weights are a 4-bit approximation of SmolLM2-135M-Instruct. This is a trained model; "
        "the snowball slides showed a model at initialisation. The caption's 'per block on average' is the geometric mean "
        "of very different factors: the first blocks grow the stream by half, some barely change it (on some sentences "
        "a block shrinks it), the later ones add 3 to 16 %. Over the sixteen sentences of the built-in set the stream "
        "grows ×10.7 to ×17.6; this sentence gives the smallest. Heimersheim & Turner 2023 measured about ×1.045 per "
        "block in GPT-2 XL, a trained model of another family.",
        "用挂在每个块上的钩子在最终归一化之前读取：库返回的最后一个 hidden_states 已经做过最终归一化。权重是 "
        "SmolLM2-135M-Instruct 的 4 位近似值。这是训练过的模型；“滚雪球”两页展示的是初始化时的模型。说明文字中的“平均每块”"
        "是几何平均，背后的因子相差很大：最初几块让残差流变大一半，有几块几乎不改变它（在某些句子上某一块会让它变小），"
        "后面的块每块增加 3% 到 16%。在内置句子集的十六个句子上，残差流增长 10.7 到 17.6 倍；本页的句子最小。"
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
        series=[series(0, "stream.mean_without_first", ("SmolLM2 (pre-norm)", "SmolLM2（Pre-norm）"), "blue")],
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
            check("low", "<", 1.05),  # some blocks barely change the stream: not a constant factor
            check("high", ">", 1.3),
        ],
    ),
    departs=departs(
        "a pretrained SmolLM2-135M (Llama, Pre-RMSNorm), not built here",
        "预训练的 SmolLM2-135M（Llama 家族，Pre-RMSNorm），不是这里搭建的模型",
    ),
)

SINK = slide(
    "real-sink",
    ("The massive activation and the attention sink", "巨大激活与注意力汇聚"),
    (
        "At one block the first token's stream jumps to more than a hundred times the others' mean, stays there for a "
        "few blocks and then shrinks: a massive activation. The attention every query puts on that token is another "
        "curve: it dips at the block where the massive activation appears and is high again in every block after.",
        "在某一块，第一个词元的残差流突然跳到其他词元平均值的一百多倍，保持几块后逐渐变小：这就是巨大激活。"
        "每个查询放在这个词元上的注意力是另一条曲线：它在巨大激活出现的那一块骤降，之后的每一块又都很高。",
    ),
    (
        "Sun et al. 2024 call these massive activations and link them to attention resting on the first token (Xiao "
        "et al. 2023's attention sink). Drawn side by side they are related, not the same thing: the attention rests on "
        "the first token in most blocks before the massive activation appears, drops to its lowest exactly at the "
        "block that writes it (block 12's MLP writes dimension 507, /models draws that coordinate), and stays high "
        "after the norm ratio has fallen back. Setting that coordinate to its mean over a set of sentences barely "
        "changes the next-token loss; setting it to 0 raises it by about 14 nats, as Sun et al. found in LLaMA2 "
        "(/models, the intervention chart). Every statement here holds on every sentence of the built-in set.",
        "Sun 等 2024 称之为巨大激活（massive activations），并把它与注意力停在第一个词元上（Xiao 等 2023 的 attention "
        "sink）联系起来。并排画出来，两者相关，但不是一回事：在巨大激活出现之前，大多数块的注意力已经停在第一个词元上；"
        "恰好在写入它的那一块（第 12 块的 MLP 写入第 507 维，/models 画出了这个分量）注意力降到最低；范数比回落之后，"
        "注意力仍然很高。把这个分量设为它在一组句子上的均值，下一词元损失几乎不变；设为 0，损失增加约 14 奈特，"
        "与 Sun 等在 LLaMA2 中的发现一致（/models 的干预图）。本页的每个结论在内置句子集的每个句子上都成立。",
    ),
    chart(
        "layers",
        ("SmolLM2-135M: attention on the first token, and its norm", "SmolLM2-135M：第一个词元上的注意力及其范数"),
        [SMOLLM2],
        "/models?model=smollm2&compare=none",
        settings=QUANTISED,
        x={"en": "Block", "zh": "块"},
        panels=[
            # zh: short enough for one line beside a 250-px panel (the summary's row says 首个词元 too)
            panel(("Attention on token 1", "首个词元上的注意力"), range=[0, 1]),
            panel(("First token ‖x‖ ÷ others'", "首个词元 ‖x‖ ÷ 其他"), log=True),
        ],
        series=[
            series(0, "attention.mass", ("Attention on token 1", "第一个词元上的注意力"), "blue"),
            series(0, "summary.first_token_ratio", ("Norm ratio", "范数比"), "vermillion", panel=1),
        ],
        overlays=[
            {
                "type": "hline",
                "path": "attention.uniform",
                "source": 0,
                "color": "black",
                "label": {"en": "uniform", "zh": "均匀"},  # short: right of the block-12 dip on a 720p stage
            },
            {
                "type": "hline",
                "value": 100.0,
                "label": {"en": "100×", "zh": "100 倍"},
                "color": "vermillion",
                "panel": 1,
            },
        ],
    ),
    claim(
        (
            "The first token's norm is over 100× the others' in blocks {jump|0}–{last|0} (at most {top|3}), {end|2} at "
            "block 30. The attention on it: {dip|2} at block {jump|0} (uniform: {uniform|2}), then "
            "{after_low|2}–{after_high|2} in every later block (≥ {gap|2}× the dip).",
            "第一个词元的范数在第 {jump|0}–{last|0} 块超过其他词元的 100 倍（最高 {top|3}），第 30 块为 {end|2}。"
            "它上面的注意力：第 {jump|0} 块为 {dip|2}（均匀：{uniform|2}），之后每一块都在 {after_low|2}–{after_high|2} 之间（≥ 该处的 {gap|2} 倍）。",
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
            "mass": read(0, "attention.mass"),  # entry k: block k
            "uniform": read(0, "attention.uniform"),
            "dips": op("slice", "mass", start="jump", stop="jump"),
            "dip": op("min", "dips"),
            "dip_vs": op("ratio", ["dip", "uniform"]),
            "after": op("slice", "mass", start="jump", shift=1),  # every block after the jump
            "after_low": op("min", "after"),
            "after_high": op("max", "after"),
            "after_vs": op("ratio", ["after", "uniform"]),
            "gap": op("ratio", ["after_low", "dip"]),
        },
        [
            check("above", ">", 100.0),  # every block of the range the caption names
            check("rest", "<", 100.0),
            check("end", "<", 30.0),
            check("peak", ">", 10000.0),
            check("last", "<", 30),
            check("dip_vs", "<", 1.0),  # below the uniform share where the massive activation appears
            check("after_vs", ">", 2.0),  # every later block: at least twice the uniform share
            check("gap", ">", 3.0),  # the dip is a dip: every later block holds at least 3x as much
        ],
    ),
    departs=departs(
        "a pretrained SmolLM2-135M (Llama, Pre-RMSNorm), not built here",
        "预训练的 SmolLM2-135M（Llama 家族，Pre-RMSNorm），不是这里搭建的模型",
    ),
)


def failures_on(text: str, trace: Callable[[str, str], dict[str, Any]]) -> dict[str, list[str]]:
    """Each real-model slide's claim on another sentence: its sources read `text` instead of the default sentence
    (trace(model, text) answers as POST /api/real_trace does), and the names of the values whose checks fail."""
    out = {}
    for s in (PINNED, SNOWBALL, SINK):
        answers = [trace(source["body"]["model"], text) for source in s["chart"]["sources"]]
        out[s["id"]] = failed_values(s["claim"], evaluate(s["claim"], answers))
    return out


def available() -> bool:
    """Both packaged models and the [models] extra are installed (found without importing anything)."""
    models = packaged_source("minilm") is not None and packaged_source("smollm2") is not None
    return models and importlib.util.find_spec("transformers") is not None


SLIDES = [PINNED, SNOWBALL, SINK] if available() else []
