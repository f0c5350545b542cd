"""What the snowball runs into: drift inside one vector, 16-bit overflow, softmax saturation."""

from __future__ import annotations

from ..lessons.precision import SNOWBALL_DEFAULTS
from ..lessons.softmax import SWEEP_SCALES
from . import sources as src
from .build import chart, check, claim, op, panel, read, series, slide
from .reference import departs

SNOW = src.model(**SNOWBALL_DEFAULTS)  # no norm, identity shortcut, Xavier, 48 blocks: /precision's stack, in float32
DRIFT = slide(
    "drift",
    ("Drift inside one vector", "同一个向量内部的漂移"),
    (
        "The stream without a norm, seen from inside one token vector: its largest and its smallest "
        "|component| grow together, by about ten decades over 48 blocks. On the log axis the two lines stay parallel: what "
        "drifts is the whole scale, not the spread inside the vector.",
        "从一个词元向量的内部看没有归一化的残差流：它绝对值最大和最小的分量一起变大，48 块里增长了约十个数量级。"
        "在对数坐标轴上两条线保持平行：漂移的是整个尺度，而不是向量内部的差距。",
    ),
    (
        "Per block: the mean over tokens of the largest and of the smallest |component| of a token vector. Honest "
        "reading: at initialisation the two lines stay about two decades apart (the spread of 64 random numbers); what "
        "drifts is the scale. The lesson's '10000 next to 0.001' inside one vector is what trained models develop "
        "(a few 'massive activations', Sun et al. 2024), not what a fresh model shows.",
        "每块：一个词元向量中绝对值最大和最小的分量，对所有词元取平均。诚实地读：初始化时两条线大约相差两个数量级"
        "（64 个随机数的自然分布）；漂移的是整体尺度。讲义里说的同一向量中“10000 挨着 0.001”，是训练后的模型才会出现的"
        "（少数“巨大激活”，Sun 等 2024），刚初始化的模型看不到。",
    ),
    chart(
        "layers",
        ("Largest and smallest |component| per block", "每块绝对值最大与最小的分量"),
        [src.trace(SNOW)],
        src.trace_link("/norms", SNOW, norm_scale="log"),
        panels=[panel(("Mean over tokens of |x_i|", "|x_i| 对词元的平均"), log=True)],
        series=[
            series(0, "token_max_abs", ("Largest |component|", "绝对值最大的分量"), "vermillion"),
            series(0, "token_min_abs", ("Smallest |component|", "绝对值最小的分量"), "blue"),
        ],
        overlays=[{"type": "hline", "value": 65504.0, "label": {"key": "series.fp16_max"}, "color": "vermillion"}],
    ),
    claim(
        (
            "Largest |component|: {max0|3} at the embedding, {maxL|3} at block 48 (past 10⁴ from block {past|0}); "
            "smallest: {min0|3} → {minL|3}. Their ratio stays between {low|2} and {high|2} on every block.",
            "绝对值最大的分量：嵌入层为 {max0|3}，第 48 块为 {maxL|3}（从第 {past|0} 块起超过 10⁴）；"
            "绝对值最小的分量：{min0|3} → {minL|3}。每一块上两者之比都保持在 {low|2} 到 {high|2} 之间。",
        ),
        {
            "max0": read(0, "embedding.token_max_abs"),
            "min0": read(0, "embedding.token_min_abs"),
            "maxL": read(0, "layers[-1].token_max_abs"),
            "minL": read(0, "layers[-1].token_min_abs"),
            "maxes": read(0, "layers[*].token_max_abs"),
            "mins": read(0, "layers[*].token_min_abs"),
            "past": op("first_over", "maxes", bound=1e4),
            "spread": op("ratio", ["maxes", "mins"]),
            "low": op("min", "spread"),
            "high": op("max", "spread"),
            "growth": op("ratio", ["maxL", "max0"]),
            "drift_of_spread": op("ratio", ["high", "low"]),
        },
        [
            check("growth", "between", [1e9, 1e11]),  # "about ten decades"
            check("spread", "between", [30.0, 1000.0]),
            check("drift_of_spread", "<", 20.0),  # "parallel": the spread moves by far less than the scale
            check("past", "between", [1, 48]),
        ],
    ),
    departs=departs(
        "48 blocks, GELU, shortcut, no norm: the /precision page's stack.",
        "48 块、GELU、有捷径、无归一化：“精度”页的网络。",
    ),
)

FLOAT16 = slide(
    "float16",
    ("Wall 1: 16-bit numbers", "第一堵墙：16 位浮点数"),
    (
        "float16 holds at most 65504 and about three significant digits. A growing stream overflows to infinity, "
        "and a small update next to a large number is simply lost.",
        "float16 最大只能存 65504，有效数字约三位。不断变大的残差流会溢出成无穷大，而加到大数上的小更新会被舍入掉。",
    ),
    (
        "The same weights run twice, in float16 and in float32, on this CPU: the overflow really happens. bfloat16 "
        "keeps float32's range but has even fewer digits: it cannot even store 10000 (the nearest value is 9984) and rounds "
        "the update away too. This is why mixed-precision "
        "training keeps a float32 master copy of the weights and why the stream must not snowball.",
        "相同的权重在本机 CPU 上分别用 float16 和 float32 运行：溢出是真实发生的。bfloat16 保留了 float32 的范围，但有效"
        "数字更少：它连 10000 都存不下（最接近的值是 9984），更新同样会被舍入掉。这就是混合精度训练要保留一份 float32 主权重、残差流不能滚雪球的原因。",
    ),
    chart(
        "precision",
        ("Largest |component| per block: float16 vs float32", "每块绝对值最大的分量：float16 对比 float32"),
        [src.precision()],
        "/precision",
    ),
    claim(
        (
            "In float16 this stack overflows at block {layer|0}; in float32 its largest |component| passes 65504 at block "
            "{f32|0}. 10000 + 0.001 gives {f16|6} in float16, {bf16|6} in bfloat16 and {f32sum|10} in float32.",
            "以 float16 运行时，这个网络在第 {layer|0} 块溢出；float32 下绝对值最大的分量在第 {f32|0} 块超过 65504。"
            "10000 + 0.001 在 float16 中得 {f16|6}，bfloat16 中得 {bf16|6}，float32 中得 {f32sum|10}。",
        ),
        {
            "layer": read(0, "snowball.overflow_layer"),
            "f32": read(0, "snowball.float32_exceeds_float16_max_at"),
            "f16": read(0, "formats[2].sum"),
            "bf16": read(0, "formats[1].sum"),
            "f32sum": read(0, "formats[0].sum"),
            "lost16": read(0, "formats[2].update_lost"),
        },
        [
            check("layer", "between", [1, 48]),
            check("f32", "between", [1, 48]),
            check("f16", "==", 10000.0),
            check("lost16", "==", True),
            check("bf16", "==", 9984.0),
            check("f32sum", ">", 10000.0),
        ],
    ),
    equation="10000 + 0.001 = 10000   (float16)",
    predict=(
        "Predict first: in float16, what is 10000 + 0.001? And in bfloat16?",
        "先预测：在 float16 中 10000 + 0.001 等于多少？在 bfloat16 中呢？",
    ),
    departs=departs(
        "48 blocks, GELU, shortcut, no norm, run in float16.",
        "48 块、GELU、有捷径、无归一化，以 float16 运行。",
    ),
)

SOFTMAX = slide(
    "softmax",
    ("Wall 2: softmax saturates", "第二堵墙：softmax 饱和"),
    (
        "Attention weights are softmax(s·z). When activations grow, the scale s grows with them: the weights turn one-hot "
        "and the softmax Jacobian, which carries the gradient back, goes to zero.",
        "注意力权重是 softmax(s·z)。激活变大时缩放 s 也随之变大：权重变成独热分布，负责把梯度传回去的 softmax 雅可比矩阵趋于零。",
    ),
    (
        "J = diag(p) − p pᵀ; its spectral norm is the most a gradient can be amplified on the way back to the scores. "
        "Attention then stares at one token and stops learning which token to look at. Transformers divide q·k by √d for "
        "exactly this reason (Vaswani et al. 2017, eq. 1).",
        "J = diag(p) − p pᵀ；它的谱范数是梯度反向传回分数时最多能被放大的倍数。此时注意力只盯着一个词元，也不再学习该看哪个"
        "词元。Transformer 把 q·k 除以 √d 正是为此（Vaswani 等 2017，式 1）。",
    ),
    chart(
        "softmax",
        ("Softmax of s·z as the scale s grows", "缩放 s 增大时的 softmax(s·z)"),
        [src.softmax(logits=[2.0, 1.0, 0.5, 0.0, -1.0], scale=1.0, scales=list(SWEEP_SCALES))],
        "/softmax",
    ),
    claim(
        (
            "Logits [2, 1, 0.5, 0, −1]. At s = 1 the top weight is {p1|3} and ‖J‖ = {j1|3}; at s = {s_last|3} the top "
            "weight is {pL|6} and ‖J‖ = {jL|3}: no gradient gets through.",
            "logits 为 [2, 1, 0.5, 0, −1]。s = 1 时最大权重为 {p1|3}，‖J‖ = {j1|3}；s = {s_last|3} 时最大权重为 {pL|6}，"
            "‖J‖ = {jL|3}：梯度几乎无法回传。",
        ),
        {
            "p1": read(0, "max_prob"),
            "j1": read(0, "jacobian_norm"),
            "s_last": read(0, "sweep[-1].scale"),
            "pL": read(0, "sweep[-1].max_prob"),
            "jL": read(0, "sweep[-1].jacobian_norm"),
        },
        [check("p1", "<", 0.7), check("j1", ">", 0.1), check("pL", ">", 0.999999), check("jL", "<", 1e-100)],
    ),
    equation="p = softmax(s·z)\nJ = diag(p) − p pᵀ",
)

SLIDES = [DRIFT, FLOAT16, SOFTMAX]
