"""The opening slides: the gradient's trip down 96 blocks, and the first stabilizer, the shortcut."""

from __future__ import annotations

import math
from typing import Any

from . import slides_reference
from . import sources as src
from .build import TRY_DEPTHS, chart, check, claim, const, option, panel, qa, read, series, slide, try_it
from .reference import departs

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
        "(GPT-2: Pre-LN, small initial branches; Radford et al. 2019), freshly initialised, one backward pass. The next "
        "slides take it apart to see why the gradient survives the trip.",
        "从右往左读这张图：梯度从顶部出发往回传。这是现代配方（GPT-2：Pre-LN，分支初始很小；Radford 等 2019），刚初始化，做一次反向传播。"
        "接下来几页把它拆开，看梯度为什么能走完这趟路。",
    ),
    chart(
        "layers",
        ("Gradient per block, 96 blocks, GPT-2 recipe", "每块的梯度：96 块，GPT-2 配方"),
        [src.trace(GPT2_96)],
        src.trace_link("/gradients", GPT2_96),
        panels=[panel(GRAD_Y, log=True)],
        series=[series(0, "grad_norm", ("GPT-2 recipe", "GPT-2 配方"), "blue")],
    ),
    claim(
        (
            "At initialisation the loss is {loss|3} nats, a uniform guess over 128 tokens (ln 128 = {uniform|3}). "
            "Block 1 receives {survival|3}× the gradient of block 96.",
            "初始化时损失为 {loss|3} 奈特，相当于在 128 个词元中均匀猜测（ln 128 = {uniform|3}）。"
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
    departs=departs(
        "GPT-2's recipe (GELU, small initial branches), the model the deck ends at.",
        "GPT-2 配方（GELU，分支初始很小），也就是本课件最后讲到的模型。",
    ),
)

SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def chain_chart(depth: int) -> dict[str, Any]:
    return chart(
        "chain",
        ("Product of the per-layer factors, layer by layer", "逐层的因子连乘积"),
        [src.chain(0.9, depth), src.chain(1.1, depth)],
        f"/chain?derivative=0.9&depth={depth}",
        series=[
            series(0, "plain", ("g = 0.9: 0.9ˡ", "g = 0.9：0.9ˡ"), "vermillion"),
            series(1, "plain", ("g = 1.1: 1.1ˡ", "g = 1.1：1.1ˡ"), "purple"),
        ],
    )


def chain_claim(depth: int) -> dict[str, Any]:
    power = str(depth).translate(SUPERSCRIPT)
    return claim(
        (
            f"Computed in float64: 0.9{power} = {{vanish|6}} and 1.1{power} = {{explode|6}}.",
            f"用 float64 计算：0.9{power} = {{vanish|6}}，1.1{power} = {{explode|6}}。",
        ),
        {"vanish": read(0, "plain_final"), "explode": read(1, "plain_final")},
        [check("vanish", "close", 0.9**depth, rel=1e-9), check("explode", "close", 1.1**depth, rel=1e-9)],
    )


def chain_option(depth: int) -> dict[str, Any]:
    return option(str(depth), (str(depth), str(depth)), chain_chart(depth), chain_claim(depth))


CHAIN = slide(
    "chain",
    ("The chain product", "链式乘积"),
    (
        "Backpropagation multiplies one factor per layer, the layer's derivative f′. Factors a little below 1 vanish "
        "over 96 layers; factors a little above 1 explode.",
        "反向传播每经过一层就乘上一个因子，也就是该层的导数 f′。略小于 1 的因子乘上 96 层会消失，略大于 1 的会爆炸。",
    ),
    (
        'Exact values, computed in float64: 0.9⁹⁶ ≈ 4.05×10⁻⁵, about 0.4 in 10,000 (the original lesson\'s "0.6 in 10,000" '
        'is a rounding slip), and 1.1⁹⁶ ≈ 9412 (not "≈ 12000"). The point stands: a per-layer factor a little off 1 '
        "is a disaster after 96 layers.",
        "用 float64 算出的精确值：0.9⁹⁶ ≈ 4.05×10⁻⁵，约为万分之 0.4（原讲义中的“万分之 0.6”是舍入笔误）；"
        "1.1⁹⁶ ≈ 9412（不是“≈ 12000”）。结论不变：每层的因子只要稍微偏离 1，乘过 96 层就是灾难。",
    ),
    chain_chart(96),
    chain_claim(96),
    try_it=try_it(("Layers", "层数"), [chain_option(depth) for depth in TRY_DEPTHS], "96"),
    equation="∂L/∂x₁ = ∂L/∂x₉₆\n· f′₉₆ · f′₉₅ · … · f′₂",
    predict=(
        "Predict first: multiply 0.9 by itself 96 times. Is the result nearer 0.1, 0.001 or 10⁻⁵?",
        "先预测：0.9 自乘 96 次，结果更接近 0.1、0.001 还是 10⁻⁵？",
    ),
)

SHORTCUT = slide(
    "shortcut",
    ("The shortcut: y = f(x) + x", "捷径：y = f(x) + x"),
    (
        "Add the layer's input to its output. Its derivative becomes 1 + f′: even a tiny f′ leaves a factor near 1, "
        "so the product cannot vanish.",
        "把这一层的输入加到它的输出上。导数变成 1 + f′：即使 f′ 很小，因子也接近 1，乘积就不会消失。",
    ),
    (
        "He et al. 2016 (ResNet), and eq. 5 of 'Identity Mappings in Deep Residual Networks'. x and f(x) need the same "
        "shape (else a linear projection on the shortcut). The git analogy: every layer "
        "commits a diff on top of the untouched original; the original version is always there to go back to, and so is "
        "the gradient's path to it.",
        "He 等 2016（ResNet），以及《Identity Mappings in Deep Residual Networks》的式 5。x 和 f(x) 的形状必须相同"
        "（否则在捷径上加一个线性投影）。类比 git：每一层都在原封不动的"
        "原始版本上提交一个 diff；原始版本随时可以找回，梯度通往它的路也一直在。",
    ),
    chart(
        "chain",
        ("f′ = 0.01: with and without the shortcut", "f′ = 0.01：有捷径与无捷径"),
        [src.chain(0.01, 96)],
        "/chain?derivative=0.01&depth=96",
        series=[
            series(0, "plain", ("No shortcut: 0.01ˡ", "无捷径：0.01ˡ"), "vermillion"),
            series(0, "residual", ("Shortcut: 1.01ˡ", "有捷径：1.01ˡ"), "blue"),
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
        ("Each layer outputs its input plus a correction.", "每一层输出“输入 + 修正量”。"),
        "x = x + layer(x)",
        ("One addition per layer.", "每层多做一次向量相加。"),
    ),
    aside=(
        "Like git: each layer commits a diff on top of the unchanged original.",
        "像 git：每一层都在未改动的原始版本上提交一个 diff。",
    ),
)

TRAIN_KINDS = ["pre_ln_2017_no_shortcut", "pre_ln_2017"]
TRAIN_SHORTCUT = slide(
    "train-shortcut",
    ("Training: 12 blocks, with and without the shortcut", "训练：12 块，有捷径与无捷径"),
    (
        "A 12-block model with a LayerNorm in front of every branch, on one task: learn to copy a sequence. "
        "Press T to train both on this server.",
        "一个每个分支前都有 LayerNorm 的 12 块模型，一个任务：学习复制一个序列。按 T 在本服务器上训练这两个模型。",
    ),
    (
        "About 20 seconds on a laptop core. The task: a b c SEP → a b c, scored on the answer half. A loss of ln 15 is a "
        "uniform guess over the 15 symbols. The model without the shortcut stays there: its tokens have collapsed "
        "(slide {slide:norm-collapse}), so it cannot even see which symbol to copy."
        " The caption's checks hold on seeds 1–3 too: those runs are trained ahead of time and recorded with the "
        "command that made them, and a test checks every claim on the recording.",
        "在笔记本的一个核上约 20 秒。任务：a b c SEP → a b c，只在答案那一半计分。损失 ln 15 等于在 15 个符号中均匀猜测。"
        "没有捷径的模型一直停在那里：它的词元已经坍缩（第 {slide:norm-collapse} 页），连该复制哪个符号都看不出来。"
        "说明文字的每项核对在种子 1–3 上也成立：这些种子的训练事先完成并连同生成它的命令一起记录下来，测试在记录上逐条核对。",
    ),
    chart(
        "train",
        ("Training loss, copy task, 12 blocks", "训练损失：复制任务，12 块"),
        [src.train(TRAIN_KINDS)],
        src.train_link(TRAIN_KINDS),
        labels=[
            # both have a LayerNorm in front of every branch (the slide's text says so): the names say what differs
            ("no shortcut", "无捷径"),
            ("shortcut (Pre-LN)", "有捷径（Pre-LN）"),
        ],
    ),
    claim(
        (
            "After {steps} steps: without the shortcut the loss is {plain|3}, the uniform guess ln 15 = {uniform|3}; "
            "with it {shortcut|2}. Whole answers right: {plain_whole|2} vs {shortcut_whole|2}.",
            "{steps} 步之后：无捷径的损失为 {plain|3}，等于均匀猜测 ln 15 = {uniform|3}；有捷径为 {shortcut|2}。"
            "整句全对的比例：{plain_whole|2} 对 {shortcut_whole|2}。",
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
    departs=departs(
        "12 blocks of the 2017 recipe (ReLU), trained on a copy task.",
        "12 块、2017 配方（ReLU），在复制任务上训练。",
    ),
)

SLIDES = [MODEL, CHAIN, SHORTCUT, *slides_reference.SLIDES, TRAIN_SHORTCUT, *slides_reference.SNOWBALL_SLIDES]
