"""The unrolled residual stack (Veit et al. 2016): ∏(1 + f′ₗ) over L sublayers multiplied out is a sum over 2^L
paths, C(L, k) of them through k branches. What each length carries: the chain lesson's C(L, k)·g^k (exact), and the
reference model at 12 blocks, every path of a length summed exactly and single paths sampled as Veit et al. did
(app/experiments/paths.py). The "try it" control switches the model: LayerNorm + shortcut, or the shortcut alone.
"""

from __future__ import annotations

import math
from typing import Any

from . import sources as src
from .build import chart, check, claim, option, read, slide, try_it
from .reference import COLORS, NAMES, departs, reference

BLOCKS = 12
UNITS = 2 * BLOCKS  # attention and FFN: a residual sublayer each
G = 0.01  # the shortcut slide's per-layer derivative, over the model's 24 sublayers
MIDDLE = math.comb(UNITS, UNITS // 2)


def paths_chart(setting: str) -> dict[str, Any]:
    cfg = reference(setting).with_depth(BLOCKS)
    return chart(
        "paths",
        ("Paths by length, and what each length carries", "按路径长度统计的路径条数，以及每种路径长度携带的梯度"),
        [src.chain(G, UNITS), src.paths(cfg)],
        src.trace_link("/gradients", cfg),
        color=COLORS[setting],
    )


VALUES = {
    "total": read(1, "paths_total"),
    "middle": read(1, f"paths[{UNITS // 2}]"),
    "chain_total": read(0, "paths.total"),
    "chain_product": read(0, "residual_final"),
    "chain_most": read(0, "paths.summary.most"),
    "exact_half": read(1, "summary.exact.half"),
    "exact_most": read(1, "summary.exact.most"),
    "sampled_half": read(1, "summary.sampled.half"),
    "sampled_most": read(1, "summary.sampled.most"),
    "drawn": read(1, "sampled.fewest"),
    "sum_error": read(1, "sum_error"),
}
SHARED_CHECKS = [
    check("middle", "==", float(MIDDLE)),
    check("chain_total", "close", (1 + G) ** UNITS, rel=1e-12),  # C(L, k)·gᵏ summed is (1 + g)^L
    check("chain_product", "close", (1 + G) ** UNITS, rel=1e-12),
    check("chain_most", "<", 3),
]


def both_claim() -> dict[str, Any]:
    """With LayerNorm + shortcut the short paths carry the gradient: seeds 0-3 all give 90% by 6 sublayers (exact)
    and by 8 (sampled), while the most common path passes 12."""
    return claim(
        (
            "{middle|3} of the 2²⁴ = {total|3} paths pass 12 sublayers, yet paths through at most {exact_most|0} carry "
            "90% of the gradient (Veit's sampling: {sampled_most|0}; the chain with g = 0.01: {chain_most|0}).",
            "2²⁴ = {total|3} 条路径中有 {middle|3} 条经过 12 个子层，但经过不超过 {exact_most|0} 个子层的路径就携带了 90% "
            "的梯度（Veit 抽样：{sampled_most|0}；g = 0.01 的链：{chain_most|0}）。",
        ),
        VALUES,
        [
            *SHARED_CHECKS,
            check("exact_most", "between", [1, 8]),
            check("sampled_most", "between", [1, UNITS // 2 - 1]),
            check("sum_error", "<", 1e-4),
        ],
    )


def shortcut_claim() -> dict[str, Any]:
    """Without a norm the branches' derivatives are large: half the gradient needs paths of 8 to 10 sublayers on
    seeds 0-3 (exact), 90% of 11 to 13; float32's sum of huge terms agrees with autograd to about 10⁻³."""
    return claim(
        (
            "Without a norm long paths carry the gradient: half of it needs paths through up to {exact_half|0} of the "
            "24 sublayers, 90% up to {exact_most|0} (Veit's sampling: half by {sampled_half|0}; the chain with "
            "g = 0.01: {chain_most|0}).",
            "没有归一化时，梯度由长路径携带：经过 24 个子层中不超过 {exact_half|0} 个的路径才携带一半梯度，"
            "{exact_most|0} 个才到 90%（Veit 抽样：一半在 {sampled_half|0}；g = 0.01 的链：{chain_most|0}）。",
        ),
        VALUES,
        [
            *SHARED_CHECKS,
            check("exact_half", "between", [6, 14]),
            check("exact_most", "between", [10, 16]),
            check("sampled_half", "between", [6, 16]),
            check("sum_error", "<", 1e-2),
        ],
    )


PATHS = slide(
    "paths",
    ("The unrolled stack: 2ᴸ paths", "展开残差堆叠：2ᴸ 条路径"),
    (
        "Multiply out ∏(1 + f′ₗ) over L sublayers: 2ᴸ terms, one per path that passes some branches and goes round "
        "the others by the shortcut. C(L, k) paths pass k branches, most about L/2. A path carries the product of "
        "its k branch derivatives: how far the gradient travels depends on how large they are.",
        "把 L 个子层的 ∏(1 + f′ₗ) 乘开：共 2ᴸ 项，每项对应一条路径，它经过一部分分支，其余的由捷径绕过。经过 k 个分支"
        "的路径有 C(L, k) 条，大多数路径经过约 L/2 个分支。一条路径携带其 k 个分支导数的乘积：梯度走多远，取决于这些导数有多大。",
    ),
    (
        "Veit et al. 2016 unrolled a ResNet this way and found most of the gradient on short paths (in a 110-layer "
        "ResNet, paths 10-34 layers deep: reported there, not measured here). Here, on the reference model at 12 "
        "blocks: the grey bars count the paths, C(24, k). Right, on a log scale, what the paths of each length carry, "
        "divided by the gradient at the top (the path of length 0, the shortcut alone, carries exactly that): the "
        "dashed line is the chain of slide {slide:shortcut} with g = 0.01, C(24, k)·0.01ᵏ, computed exactly; the "
        "solid line sums every path of length k exactly (one vector-Jacobian product per length and sublayer, and "
        "the lengths add up to autograd's gradient); the dotted line is Veit's own measurement: single paths of "
        "each length, sampled, their mean size times their number. The dotted line lies above the solid one because "
        "it adds sizes, and paths of one length partly cancel. Switch to the shortcut alone: the branches' "
        "derivatives are large without a norm, long paths carry the gradient, and it explodes (slide "
        "{slide:live-gradient}).",
        "Veit 等 2016 这样展开了 ResNet，发现梯度大多走较短的路径（在 110 层的 ResNet 中是 10 到 34 层深的路径：这是该文的报告，"
        "不是这里的测量）。这里用参考模型的 12 块：灰色柱数的是路径条数 C(24, k)。右图（对数坐标轴）是每种路径长度的路径携带的"
        "梯度除以顶部的梯度（路径长度为 0 的路径，即只走捷径，正好携带这么多）：虚线是第 {slide:shortcut} 页 g = 0.01 的链，"
        "C(24, k)·0.01ᵏ，精确计算；实线把路径长度为 k 的所有路径精确求和（每种路径长度、每个子层一次向量-雅可比乘积，各路径长度之和"
        "等于自动求导的梯度）；点线是 Veit 自己的测量：每种路径长度抽样若干条路径，平均大小乘以条数。点线高于实线，因为它把"
        "大小相加，而同一路径长度的路径会部分抵消。切换到只有捷径：没有归一化时分支的导数很大，梯度由长路径携带，于是爆炸"
        "（第 {slide:live-gradient} 页）。",
    ),
    paths_chart("both"),
    both_claim(),
    try_it=try_it(
        ("Model", "模型"),
        [
            option("both", NAMES["both"], paths_chart("both"), both_claim()),
            option("shortcut", NAMES["shortcut"], paths_chart("shortcut"), shortcut_claim()),
        ],
        "both",
    ),
    equation="(1 + f′₁)⋯(1 + f′₂₄)\n= 1 + Σ f′ₗ + Σ f′ₗ f′ₘ + ⋯\nf′ₗ = g:  (1 + g)²⁴ = Σₖ C(24, k)·gᵏ",
    departs=departs(
        "the reference model with 12 blocks (24 sublayers), one backward pass at initialisation.",
        "参考模型换成 12 块（24 个子层），初始化时一次反向传播。",
    ),
    predict=(
        "Predict first: 12 blocks have 2²⁴ ≈ 17 million paths, most of them through about 12 sublayers. Which paths "
        "carry most of the gradient: short, middle or long ones?",
        "先预测：12 块共有 2²⁴ ≈ 1700 万条路径，大多数经过约 12 个子层。哪些路径携带了大部分梯度：短的、中等的还是长的？",
    ),
)

SLIDES = [PATHS]
