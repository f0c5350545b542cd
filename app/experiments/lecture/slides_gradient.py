"""Slides 2-8: the gradient's trip down 96 blocks, and the first stabilizer, the shortcut."""

from __future__ import annotations

import math

from . import sources as src
from .build import chart, check, claim, const, op, panel, qa, read, series, slide

GRAD_Y = ("Gradient ‖∂loss/∂x_l‖", "梯度 ‖∂loss/∂x_l‖")

GPT2_96 = src.model("pre_ln", depth=96)
MODEL = slide(
    "model",
    ("A 96-block model: the loss is at the top", "96 块的模型：损失在最顶端"),
    (
        "The loss is computed after block 96. Training needs a gradient at every block, so backpropagation carries it "
        "down, block by block, to block 1.",
        "损失在第 96 块之后计算。训练需要每一块都拿到梯度，所以反向传播把它一块一块地往下传，直到第 1 块。",
    ),
    (
        "Read the chart from right to left: the gradient starts at the top and travels back. This is the modern recipe "
        "(GPT-2: Pre-LN, small initial branches), freshly initialised, one backward pass. The next slides take it apart to "
        "see why the gradient survives the trip.",
        "从右往左读这张图：梯度从顶部出发往回传。这是现代配方（GPT-2：Pre-LN，分支初始很小），刚初始化，做一次反向传播。"
        "接下来几页把它拆开，看梯度为什么能走完这趟路。",
    ),
    chart(
        "layers",
        ("Gradient per layer, 96 blocks, GPT-2 recipe", "每层的梯度：96 块，GPT-2 配方"),
        [src.trace(GPT2_96)],
        src.trace_link("/gradients", GPT2_96),
        panels=[panel(GRAD_Y, log=True)],
        series=[series(0, "grad_norm", ("GPT-2 recipe (Pre-LN)", "GPT-2 配方（Pre-LN）"), "blue")],
    ),
    claim(
        (
            "At initialisation the loss is {loss|3} nats, a uniform guess over 128 tokens (ln 128 = {uniform|3}). "
            "Block 1 receives {survival|3}× the gradient of block 96.",
            "初始化时损失为 {loss|3} 纳特，相当于在 128 个词元中均匀猜测（ln 128 = {uniform|3}）。"
            "第 1 块收到的梯度是第 96 块的 {survival|3} 倍。",
        ),
        {
            "loss": read(0, "loss"),
            "uniform": const(math.log(128)),
            "survival": read(0, "summary.grad_survival"),
            "grads": read(0, "layers[*].grad_norm"),
        },
        [
            check("loss", "close", math.log(128), abs=0.1),
            check("survival", "between", [0.5, 2.0]),
            check("grads", ">", 0.0),
        ],
    ),
)

CHAIN = slide(
    "chain",
    ("The chain product", "链式乘积"),
    (
        "Backpropagation multiplies one factor per layer, the layer's derivative f′. Factors a little below 1 vanish "
        "over 96 layers; factors a little above 1 explode.",
        "反向传播每经过一层就乘上一个因子，也就是该层的导数 f′。略小于 1 的因子乘上 96 层会消失，略大于 1 的会爆炸。",
    ),
    (
        'Exact values, computed in float64: 0.9^96 ≈ 4.05e-5, about 0.4 in 10,000 (the original lesson\'s "0.6 in 10,000" '
        'is a rounding slip), and 1.1^96 ≈ 9412 (not "≈ 12000"). The point stands: a per-layer factor a little off 1 '
        "is a disaster after 96 layers.",
        "用 float64 算出的精确值：0.9^96 ≈ 4.05e-5，约为万分之 0.4（原讲义中的“万分之 0.6”是舍入笔误）；"
        "1.1^96 ≈ 9412（不是“≈ 12000”）。结论不变：每层的因子只要稍微偏离 1，乘过 96 层就是灾难。",
    ),
    chart(
        "chain",
        ("Product of the per-layer factors, layer by layer", "逐层的因子连乘积"),
        [src.chain(0.9, 96), src.chain(1.1, 96)],
        "/chain?derivative=0.9&depth=96",
        series=[
            series(0, "plain", ("g = 0.9: 0.9^l", "g = 0.9：0.9^l"), "vermillion"),
            series(1, "plain", ("g = 1.1: 1.1^l", "g = 1.1：1.1^l"), "purple"),
        ],
    ),
    claim(
        (
            "Computed in float64: 0.9⁹⁶ = {vanish|6} and 1.1⁹⁶ = {explode|6}.",
            "用 float64 计算：0.9⁹⁶ = {vanish|6}，1.1⁹⁶ = {explode|6}。",
        ),
        {"vanish": read(0, "plain_final"), "explode": read(1, "plain_final")},
        [check("vanish", "close", 0.9**96, rel=1e-9), check("explode", "close", 1.1**96, rel=1e-9)],
    ),
    equation="∂L/∂x₁ = ∂L/∂x₉₆ · f′₉₆ · f′₉₅ · … · f′₂",
)

SHORTCUT = slide(
    "shortcut",
    ("The shortcut: y = f(x) + x", "捷径：y = f(x) + x"),
    (
        "Add the block's input to its output. Its derivative becomes 1 + f′: even a tiny f′ leaves a factor near 1, "
        "so the product cannot vanish. x and f(x) need the same shape (else a linear projection on the shortcut).",
        "把块的输入加到它的输出上。导数变成 1 + f′：即使 f′ 很小，因子也接近 1，乘积就不会消失。"
        "x 和 f(x) 的形状必须相同（否则在捷径上加一个线性投影）。",
    ),
    (
        "He et al. 2016 (ResNet), and eq. 5 of 'Identity Mappings in Deep Residual Networks'. The git analogy: every block "
        "commits a diff on top of the untouched original; the original version is always there to go back to, and so is "
        "the gradient's path to it.",
        "He 等 2016（ResNet），以及《Identity Mappings in Deep Residual Networks》的式 5。类比 git：每个块都在原封不动的"
        "原始版本上提交一个 diff；原始版本随时可以找回，梯度通往它的路也一直在。",
    ),
    chart(
        "chain",
        ("f′ = 0.01: with and without the shortcut", "f′ = 0.01：有捷径与无捷径"),
        [src.chain(0.01, 96)],
        "/chain?derivative=0.01&depth=96",
        series=[
            series(0, "plain", ("No shortcut: 0.01^l", "无捷径：0.01^l"), "vermillion"),
            series(0, "residual", ("Shortcut: 1.01^l", "有捷径：1.01^l"), "blue"),
        ],
    ),
    claim(
        (
            "With f′ = 0.01 over 96 layers: {plain|3} without the shortcut, {residual|6} with it.",
            "f′ = 0.01，经过 96 层：没有捷径为 {plain|3}，有捷径为 {residual|6}。",
        ),
        {"plain": read(0, "plain_final"), "residual": read(0, "residual_final")},
        [check("residual", "close", 1.01**96, rel=1e-9), check("plain", "close", 0.01**96, rel=1e-9)],
    ),
    equation="∂y/∂x = 1 + f′(x)",
    qa=qa(
        ("The product of the f′ vanishes with depth.", "f′ 的连乘积随深度消失。"),
        ("Each block outputs its input plus a correction.", "每个块输出“输入 + 修正量”。"),
        "x = x + block(x)",
        ("One addition per block.", "每块一次加法。"),
    ),
    aside=(
        "Like git: each block commits a diff on top of the unchanged original.",
        "像 git：每个块都在未改动的原始版本上提交一个 diff。",
    ),
)

PLAIN_96 = src.model("plain", depth=96)  # tanh, Xavier, no norm, no shortcut
SMALL_96 = src.model("plain", depth=96, init="deepnorm")  # the same, branches initialised small
SHORT_96 = src.model("plain", depth=96, init="deepnorm", residual="identity")
LIVE = slide(
    "live-gradient",
    ("Live: 96 blocks without a norm", "实测：96 块、没有归一化"),
    (
        "A real 96-block Transformer with no normalization. Without the shortcut every block shrinks the gradient; "
        "with small initial branches f′ is tiny and the gradient is gone within a few blocks. With the shortcut it arrives intact.",
        "一个真实的 96 块 Transformer，不做归一化。没有捷径时每一块都让梯度变小；分支初始很小时 f′ 极小，几块之内梯度就没了。"
        "有捷径时梯度完整到达。",
    ),
    (
        "Settings: tanh, no norm (the 'plain deep net' preset); 'small branches' is DeepNorm's initialisation, branch "
        "weights × (8L)^(-1/4). Be honest about the flip side: with Xavier-sized branches, a shortcut and no norm, the "
        "stream snowballs until it overflows (last slide). The shortcut alone is not enough.",
        "设置：tanh、无归一化（“普通深层网络”预设）；“小分支”指 DeepNorm 的初始化，分支权重 × (8L)^(-1/4)。"
        "也要诚实地讲另一面：分支按 Xavier 初始化、有捷径但没有归一化时，残差流会滚雪球直到溢出（见最后一页）。只有捷径还不够。",
    ),
    chart(
        "layers",
        ("Gradient per layer, 96 blocks, no norm", "每层的梯度：96 块，无归一化"),
        [src.trace(PLAIN_96), src.trace(SMALL_96), src.trace(SHORT_96)],
        src.trace_link("/gradients", SHORT_96),
        panels=[panel(GRAD_Y, log=True)],
        series=[
            series(0, "grad_norm", ("No shortcut, Xavier branches", "无捷径，Xavier 分支"), "vermillion"),
            series(1, "grad_norm", ("No shortcut, small branches", "无捷径，小分支"), "orange", "dot"),
            series(2, "grad_norm", ("Shortcut, small branches", "有捷径，小分支"), "blue"),
        ],
    ),
    claim(
        (
            "Gradient at block 1 ÷ block 96: {plain|3} without the shortcut (×{factor|3} per block, the live 0.9⁹⁶); "
            "{small|3} with small branches (underflowed to 0); {shortcut|3} with the shortcut.",
            "第 1 块梯度 ÷ 第 96 块梯度：无捷径为 {plain|3}（每块 ×{factor|3}，就是实测版的 0.9⁹⁶）；"
            "小分支为 {small|3}（下溢为 0）；有捷径为 {shortcut|3}。",
        ),
        {
            "plain": read(0, "summary.grad_survival"),
            "factor": op("root", "plain", n=95),
            "small": read(1, "summary.grad_survival"),
            "shortcut": read(2, "summary.grad_survival"),
        },
        [
            check("plain", "<", 1e-9),
            check("factor", "between", [0.5, 0.95]),
            check("small", "<", 1e-30),
            check("shortcut", "between", [0.5, 2.0]),
        ],
    ),
)

NORMED_PLAIN_96 = src.model(depth=96, residual="none")  # /gradients' defaults: Pre-LN, LayerNorm, GELU, Xavier
NORMED_96 = src.model(depth=96)
COLLAPSE = slide(
    "norm-collapse",
    ("A norm in every block is not enough", "每块都有归一化，还不够"),
    (
        "With a LayerNorm in every block but no shortcut, the gradient does not vanish: each norm rescales it, and it even "
        "grows toward the input. What breaks instead: all tokens end up pointing the same way, so the model can no longer "
        "tell them apart.",
        "每块都有 LayerNorm 但没有捷径时，梯度不会消失：每个归一化都会重新缩放它，它甚至朝输入方向变大。"
        "坏掉的是另一件事：所有词元最后都指向同一个方向，模型再也分不清它们。",
    ),
    (
        "This is why /gradients at its defaults shows the plain stack's gradient growing, not vanishing. Token collapse "
        "(rank collapse): Dong et al. 2021, 'Attention is not all you need'. The next slide shows the consequence: such a "
        "model does not learn.",
        "这就是为什么“梯度”页在默认设置下显示普通堆叠的梯度在变大而不是消失。词元坍缩（秩坍缩）：Dong 等 2021，"
        "《Attention is not all you need》。下一页展示后果：这样的模型学不会。",
    ),
    chart(
        "layers",
        ("Gradient (left) and token similarity (right)", "梯度（左）与词元相似度（右）"),
        [src.trace(NORMED_PLAIN_96), src.trace(NORMED_96)],
        src.trace_link("/gradients", NORMED_PLAIN_96),
        panels=[
            panel(("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"), log=True),
            panel(("Mean cosine between tokens", "词元之间的平均余弦"), range=[0, 1.05]),
        ],
        series=[
            series(0, "grad_norm", ("No shortcut", "无捷径"), "vermillion"),
            series(1, "grad_norm", ("Shortcut", "有捷径"), "blue"),
            series(0, "token_cosine", ("No shortcut", "无捷径"), "vermillion", panel=1),
            series(1, "token_cosine", ("Shortcut", "有捷径"), "blue", panel=1),
        ],
    ),
    claim(
        (
            "No shortcut: block 1 gets {grow|3}× block 96's gradient, yet the mean cosine between tokens is at least "
            "{collapsed|4} from block 16 on: every token looks the same. With the shortcut: {kept|3} at block 16.",
            "无捷径：第 1 块的梯度是第 96 块的 {grow|3} 倍，但从第 16 块起词元之间的平均余弦至少为 {collapsed|4}："
            "所有词元都一样了。有捷径：第 16 块为 {kept|3}。",
        ),
        {
            "grow": read(0, "summary.grad_survival"),
            "after": read(0, "layers[15:].token_cosine"),
            "collapsed": op("min", "after"),
            "kept": read(1, "layers[15].token_cosine"),
        },
        [check("grow", ">", 1.0), check("after", ">", 0.999), check("kept", "<", 0.8)],
    ),
)

TRAIN_KINDS = ["pre_ln_2017_no_shortcut", "pre_ln_2017"]
TRAIN_SHORTCUT = slide(
    "train-shortcut",
    ("Training: 12 blocks, with and without the shortcut", "训练：12 块，有捷径与无捷径"),
    (
        "The same 12-block model with a norm in every block, the same data: learn to copy a sequence. "
        "Press T to train both on this server.",
        "同一个每块都有归一化的 12 块模型、同样的数据：学习复制一个序列。按 T 在本服务器上训练这两个模型。",
    ),
    (
        "About 20 seconds on a laptop core. The task: a b c SEP → a b c, scored on the answer half. A loss of ln 15 is a "
        "uniform guess over the 15 symbols. The model without the shortcut stays there: its tokens have collapsed "
        "(previous slide), so it cannot even see which symbol to copy.",
        "在笔记本的一个核上约 20 秒。任务：a b c SEP → a b c，只在答案那一半计分。损失 ln 15 等于在 15 个符号中均匀猜测。"
        "没有捷径的模型一直停在那里：它的词元已经坍缩（上一页），连该复制哪个符号都看不出来。",
    ),
    chart(
        "train",
        ("Training loss, copy task, 12 blocks", "训练损失：复制任务，12 块"),
        [src.train(TRAIN_KINDS)],
        src.train_link(TRAIN_KINDS),
        labels=[("Without the shortcut", "无捷径"), ("With the shortcut", "有捷径")],
    ),
    claim(
        (
            "After {steps} steps: without the shortcut the loss is {plain|3}, the uniform guess ln 15 = {uniform|3}; "
            "with it {shortcut|2}. Whole answers right: {plain_whole|2} vs {shortcut_whole|2}.",
            "{steps} 步之后：无捷径的损失为 {plain|3}，等于均匀猜测 ln 15 = {uniform|3}；有捷径为 {shortcut|2}。"
            "完全正确的答案比例：{plain_whole|2} 对 {shortcut_whole|2}。",
        ),
        {
            "steps": read(0, "steps"),
            "uniform": const(math.log(15)),
            "plain": read(0, "runs[0].done.final_loss"),
            "shortcut": read(0, "runs[1].done.final_loss"),
            "plain_whole": read(0, "runs[0].done.sequence_accuracy"),
            "shortcut_whole": read(0, "runs[1].done.sequence_accuracy"),
        },
        [
            check("plain", "close", math.log(15), abs=0.1),
            check("shortcut", "<", 0.05),
            check("plain_whole", "<", 0.01),
            check("shortcut_whole", ">", 0.99),
        ],
    ),
)

SNOWBALL = slide(
    "snowball",
    ("The snowball: xₗ₊₁ = xₗ + f(xₗ)", "滚雪球：xₗ₊₁ = xₗ + f(xₗ)"),
    (
        "With the shortcut nothing shrinks the stream: every block adds its output on top. Roughly independent additions "
        "add up in the square, ‖x_l‖² ≈ ‖x₀‖² + c·l, so the stream's length grows like √l.",
        "有了捷径，就没有东西让残差流变小：每个块都把输出叠加上去。大致独立的加法在平方上累加，‖x_l‖² ≈ ‖x₀‖² + c·l，"
        "所以残差流的长度按 √l 增长。",
    ),
    (
        "Pre-LN at initialisation (Xiong et al. 2020, lemma 2). The dashed curve is √(‖x₀‖² + c·l) with c fitted to this "
        "trace by least squares, as on /norms. The measured stream starts below the curve and ends above it: deep in the "
        "stack the tokens align (slide 6), so late updates are no longer independent and add up faster than √l. Harmless "
        "at 96 blocks in float32; the next slides show where it hurts.",
        "初始化时的 Pre-LN（Xiong 等 2020，引理 2）。虚线是 √(‖x₀‖² + c·l)，c 由本次数据用最小二乘拟合，与“范数”页相同。"
        "实测曲线先低于虚线、最后高于虚线：网络深处词元逐渐对齐（第 6 页），后面的更新不再相互独立，增长得比 √l 快。在 float32 下 96 块还无害；"
        "接下来几页展示它在哪里造成伤害。",
    ),
    chart(
        "layers",
        ("Stream length per layer, Pre-LN", "每层残差流长度：Pre-LN"),
        [src.trace(NORMED_96)],
        src.trace_link("/norms", NORMED_96),
        panels=[panel(("Stream length ‖x_l‖", "残差流长度 ‖x_l‖"))],
        series=[series(0, "act_norm", ("Residual stream ‖x_l‖", "残差流 ‖x_l‖"), "blue")],
        overlays=[{"type": "sqrt_fit", "series": 0}],
    ),
    claim(
        (
            "‖x‖ grows ×{growth|3} from block 1 to block 96: close to √96 = {root|3}, far from linear growth (×96). "
            "Dashed: √(‖x₀‖² + c·l), c fitted to these numbers.",
            "‖x‖ 从第 1 块到第 96 块变为 {growth|3} 倍：接近 √96 = {root|3}，远小于线性增长（96 倍）。"
            "虚线：√(‖x₀‖² + c·l)，c 由这些数字拟合。",
        ),
        {
            "growth": read(0, "summary.norm_growth"),
            "root": const(math.sqrt(96)),
            "against_root": op("ratio", ["growth", "root"]),
        },
        [check("against_root", "between", [0.7, 1.3])],
    ),
)

SLIDES = [MODEL, CHAIN, SHORTCUT, LIVE, COLLAPSE, TRAIN_SHORTCUT, SNOWBALL]
