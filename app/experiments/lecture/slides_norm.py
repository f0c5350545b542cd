"""The second stabilizer, normalization: LayerNorm by hand, where it sits (drawn, then measured), RMSNorm."""

from __future__ import annotations

import math
from typing import Any

from ...config import units_per_block
from . import sources as src
from .build import TRY_DEPTHS, chart, check, claim, const, op, option, pair, panel, qa, read, series, slide, try_it
from .diagram import norms_on_stream, pictures
from .reference import departs

X = [8.0, 2.0, 2.0, 4.0]
EPS = 1e-5
# By hand, independently of torch: mean 4, biased variance (16 + 4 + 4 + 0) / 4 = 6.
HAND_NORMALIZED = [(v - 4.0) / math.sqrt(6.0 + EPS) for v in X]
GAMMA, BETA = [2.0, 1.0, 1.0, 0.5], [1.0, 0.0, 0.0, -1.0]
HAND_OUTPUT = [g * v + b for g, v, b in zip(GAMMA, HAND_NORMALIZED, BETA, strict=True)]

LAYERNORM = slide(
    "layernorm",
    ("LayerNorm in three steps", "LayerNorm（层归一化）三步走"),
    (
        "One token, x = [8, 2, 2, 4]. 1: its mean μ. 2: its variance σ² (divide by n). 3: subtract μ, divide by σ.",
        "取一个词元向量 x = [8, 2, 2, 4]。第一步：求均值 μ。第二步：求方差 σ²（除以 n）。第三步：减去 μ、除以 σ。",
    ),
    (
        "Ba et al. 2016. Do the arithmetic with the class: (8+2+2+4)/4 = 4; (16+4+4+0)/4 = 6; 4/√6 = 1.633. The ε = 10⁻⁵ "
        "under the square root only matters for a constant vector. Every token is normalized on its own, over its d "
        "components, so it works the same for any batch size.",
        "Ba 等 2016。和学生一起算：(8+2+2+4)/4 = 4；(16+4+4+0)/4 = 6；4/√6 = 1.633。根号下的 ε = 10⁻⁵ 只在向量为常数时才起作用。"
        "每个词元在自己的 d 个分量上单独归一化，所以与批大小无关。",
    ),
    chart(
        "layernorm",
        ("x and its normalized x̂", "x 与归一化后的 x̂"),
        [src.layernorm(x=X)],
        "/layernorm",
        bars=["x", "normalized"],
    ),
    claim(
        (
            "Mean μ = {mean|6}, variance σ² = {variance|6}, x̂ = [{n0|4}, {n1|4}, {n2|4}, {n3|4}]: mean {nmean|2}, "
            "root mean square {nrms|4}. torch's own LayerNorm differs by {diff|2}.",
            "均值 μ = {mean|6}，方差 σ² = {variance|6}，x̂ = [{n0|4}, {n1|4}, {n2|4}, {n3|4}]：均值 {nmean|2}，"
            "均方根 {nrms|4}。与 torch 自带的 LayerNorm 相差 {diff|2}。",
        ),
        {
            "mean": read(0, "mean"),
            "variance": read(0, "variance"),
            **{f"n{i}": read(0, f"normalized[{i}]") for i in range(4)},
            "nmean": read(0, "normalized_mean"),
            "nrms": read(0, "normalized_rms"),
            "diff": read(0, "torch_check.max_abs_difference"),
        },
        [
            check("mean", "close", 4.0, abs=1e-12),
            check("variance", "close", 6.0, abs=1e-12),
            *[check(f"n{i}", "close", HAND_NORMALIZED[i], abs=1e-9) for i in range(4)],
            check("nmean", "close", 0.0, abs=1e-12),
            check("diff", "<", 1e-12),
        ],
    ),
    equation="x̂ = (x − μ) / √(σ² + ε)",
    qa=qa(
        ("The stream's size drifts from block to block.", "残差流的大小在块与块之间漂移。"),
        (
            "Each token to mean 0, variance 1; then a learned scale and shift (next slide).",
            "每个词元缩放到均值 0、方差 1，再做学到的缩放和偏移（下一页）。",
        ),
        "F.layer_norm(x, (d,), weight, bias)",
        ("A mean and a variance per token; 2·d parameters.", "每个词元算一次均值和方差；2·d 个参数。"),
    ),
)

GAMMA_BETA = slide(
    "gamma-beta",
    ("Then γ and β: a formatter with house rules", "然后是 γ 和 β：统一格式，再保留团队自己的配置"),
    (
        "After normalizing, LayerNorm multiplies by a learned γ and adds a learned β, one of each per component. Like a "
        "code formatter: everyone's code is brought to one standard, and the team keeps its own settings.",
        "归一化之后，LayerNorm 再乘以可学习的 γ、加上可学习的 β，每个分量各一个。就像代码格式化工具：所有人的代码都被"
        "统一成一个标准，而团队保留自己的配置。",
    ),
    (
        "γ = [2, 1, 1, 0.5] and β = [1, 0, 0, −1] here, chosen by hand; in a model they are learned, starting at γ = 1, "
        "β = 0. They give back a scale and an offset per component. They cannot undo the normalization: μ and σ change "
        "from token to token, while γ and β are the same for every token. (In BatchNorm, whose μ and σ are one per "
        "component, γ = σ and β = μ could undo it: Ioffe & Szegedy 2015.)",
        "这里的 γ = [2, 1, 1, 0.5]、β = [1, 0, 0, −1] 是手选的；模型里它们是学出来的，从 γ = 1、β = 0 开始。"
        "它们给每个分量找回一个尺度和一个偏移。它们无法撤销归一化：μ 和 σ 随词元而变，而 γ 和 β 对每个词元都相同。"
        "（BatchNorm 的 μ 和 σ 是每个分量各一个，γ = σ、β = μ 就能撤销它：Ioffe 与 Szegedy 2015。）",
    ),
    chart(
        "layernorm",
        ("x̂ and y = γ·x̂ + β", "x̂ 与 y = γ·x̂ + β"),
        [src.layernorm(x=X, gamma=GAMMA, beta=BETA)],
        "/layernorm",
        bars=["normalized", "output"],
        labelled=["output"],  # x̂'s values are the previous slide's; side by side the labels would touch
    ),
    claim(
        (
            "With γ = [2, 1, 1, 0.5] and β = [1, 0, 0, −1]: y = [{y0|4}, {y1|4}, {y2|4}, {y3|4}].",
            "γ = [2, 1, 1, 0.5]、β = [1, 0, 0, −1] 时：y = [{y0|4}, {y1|4}, {y2|4}, {y3|4}]。",
        ),
        {f"y{i}": read(0, f"output[{i}]") for i in range(4)},
        [check(f"y{i}", "close", HAND_OUTPUT[i], abs=1e-9) for i in range(4)],
    ),
    equation="y = γ ⊙ x̂ + β",
    aside=(
        "Format after writing, or agree on the style first? The next two slides.",
        "写完再格式化，还是先约定风格？见接下来两页。",
    ),
)

POST_96 = src.model("post_ln", depth=96)
SUBLAYERS_96 = POST_96.depth * units_per_block(POST_96)  # attention and FFN: a unit each

DIAGRAM = slide(
    "block-diagram",
    ("Where the norm sits, drawn", "归一化放在哪里：画出来看"),
    (
        "Follow the thick blue line, the shortcut, from input to output. In Post-LN it runs through the LayerNorm "
        "after the add, so every block's output passes a norm. In Pre-LN the norm sits on the branch only, and the "
        "shortcut runs unbroken from input to output.",
        "沿着粗蓝线（捷径）从输入走到输出。在 Post-LN 中，它在相加之后穿过 LayerNorm，所以每一块的输出都要经过一个"
        "归一化。在 Pre-LN 中，归一化只在分支上，捷径从输入到输出一路畅通。",
    ),
    (
        "Point at the orange box. In Post-LN it sits on the blue line: the gradient from the loss back to the first "
        "block passes one norm per sublayer, as many norms as sublayers, and slide {slide:post-vs-pre-grad} shows it "
        "fading on the way. In Pre-LN the blue line is an identity path: the last block's output is the first block's "
        "input plus every branch's output, so its derivative with respect to that input always contains the "
        "identity, whatever the branches do. A Transformer block has two such sublayers, attention and the FFN, each "
        "drawn like this one. Drawn bottom to top, as in Xiong et al. 2020, Figure 1.",
        "指着橙色的框。在 Post-LN 中它就在蓝线上：梯度从损失传回第一块，每个子层都要经过一个归一化，子层有多少个，"
        "归一化就有多少个；第 {slide:post-vs-pre-grad} 页显示它一路衰减。在 Pre-LN 中，蓝线是一条恒等通路："
        "最后一块的输出等于第一块的输入加上所有分支的输出，所以它对该输入的导数里总含有单位矩阵，与分支做什么无关。"
        "Transformer 的一个块有两个这样的子层：注意力和前馈，各自都像这里画的一样。与 Xiong 等 2020 的图 1 一样，"
        "从下往上画。",
    ),
    None,
    claim(
        (
            "In the {blocks|0} blocks of the next slides ({sublayers|0} sublayers), the stream passes {post|0} "
            "LayerNorms from the first block's input to the last block's output in Post-LN, and {pre|0} in Pre-LN.",
            "在接下来几页的 {blocks|0} 块中（共 {sublayers|0} 个子层），残差流从第一块的输入到最后一块的输出，"
            "在 Post-LN 中要经过 {post|0} 个 LayerNorm，在 Pre-LN 中经过 {pre|0} 个。",
        ),
        {
            "blocks": const(POST_96.depth),
            "sublayers": const(SUBLAYERS_96),
            "post": const(SUBLAYERS_96 * norms_on_stream("post")),
            "pre": const(SUBLAYERS_96 * norms_on_stream("pre")),
        },
        [],  # counted from the drawing, not measured: no ✓
    ),
    picture=pictures("block-diagram"),
)
PRE_96 = src.model("pre_ln_2017", depth=96)
POST_PRE = [src.trace(POST_96), src.trace(PRE_96)]
POST_PRE_LINK = src.compare_link(["post_ln", "pre_ln_2017"], 96)
POST_SERIES = ("Post-LN: LN(x + f(x))", "Post-LN：LN(x + f(x))")
PRE_SERIES = ("Pre-LN: x + f(LN(x))", "Pre-LN：x + f(LN(x))")

POSITION = slide(
    "post-vs-pre",
    ("Post-LN or Pre-LN: where the norm sits", "Post-LN 还是 Pre-LN：归一化放在哪里"),
    (
        "Post-LN (2017) normalizes after the add: format the code after writing it. Pre-LN normalizes only what enters "
        "the branch: agree on the style before writing, and leave the shortcut untouched.",
        "Post-LN（2017）在相加之后归一化：写完代码再格式化。Pre-LN 只归一化进入分支的部分：写代码前先约定风格，"
        "捷径则原封不动。",
    ),
    (
        "Post-LN is the original Transformer's (Vaswani et al. 2017); Pre-LN as analysed by Xiong et al. 2020. "
        "Same 2017 recipe for both (Xavier, ReLU), 96 blocks: only the norm's position differs. Post-LN fixes every token "
        "vector's norm at √d = 8 (width d = 64); Pre-LN lets the stream grow with depth. Here it grows faster than √l: "
        "fitted from ‖x₀‖ on the server, a line beats √(‖x₀‖² + c·l) and the best exponent is ¾ (the caption), more than "
        "the tanh model of slides {slide:snowball} and {slide:increments}, whose exponent is near ½. How fast a "
        "Pre-LN stream grows depends on the branch, not on Pre-LN alone.",
        "Post-LN 是原始 Transformer 的做法（Vaswani 等 2017）；Pre-LN 的分析见 Xiong 等 2020。"
        "两者都用 2017 配方（Xavier、ReLU），96 块：只有归一化的位置不同。Post-LN 把每个词元向量的范数固定为 √d = 8"
        "（宽度 d = 64）；Pre-LN 让残差流随深度增长。这里它比 √l 长得快：在服务器上从 ‖x₀‖ 出发拟合，直线胜过 "
        "√(‖x₀‖² + c·l)，最佳指数为 ¾（见说明文字），比第 {slide:snowball}、{slide:increments} 页 tanh 模型"
        "（指数接近 ½）更快。Pre-LN 残差流长得多快取决于分支，而不只取决于 Pre-LN 本身。",
    ),
    chart(
        "layers",
        ("Stream norm: Post-LN vs Pre-LN", "残差流范数：Post-LN 对比 Pre-LN"),
        [*POST_PRE, src.laws(PRE_96)],  # the laws fitted to Pre-LN's stream on the server (source 2)
        POST_PRE_LINK,
        panels=[panel(("Stream norm ‖xₗ‖", "残差流范数 ‖xₗ‖"))],
        series=[series(0, "act_norm", POST_SERIES, "vermillion"), series(1, "act_norm", PRE_SERIES, "blue")],
        overlays=[{"type": "hline", "value": 8.0, "label": {"key": "series.theory_post", "value": 8}, "below": True}],
    ),
    claim(
        (
            "Post-LN: ‖x‖ is between {post_low|6} and {post_high|6} after every block, fixed at √64 = 8 (ε keeps it "
            "a hair below). Pre-LN: {pre1|3} after block 1, {pre96|3} after block 96, faster than √l: a line fits "
            "better ({e_line|2} against {e_sqrt|2}), best exponent p = {p|2}.",
            "Post-LN：每块之后 ‖x‖ 都在 {post_low|6} 到 {post_high|6} 之间，固定在 √64 = 8（ε 让它略低一点）。"
            "Pre-LN：第 1 块后为 {pre1|3}，第 96 块后为 {pre96|3}，比 √l 长得快：直线拟合得更好（直线的误差 {e_line|2}，"
            "√ 的误差 {e_sqrt|2}），最佳指数 p = {p|2}。",
        ),
        {
            "post": read(0, "layers[*].act_norm"),
            "post_low": op("min", "post"),
            "post_high": op("max", "post"),
            "pre1": read(1, "layers[0].act_norm"),
            "pre96": read(1, "layers[-1].act_norm"),
            "pre_growth": op("ratio", ["pre96", "pre1"]),
            "p": read(2, "fits.power.p"),
            "e_sqrt": read(2, "fits.sqrt.error"),
            "e_line": read(2, "fits.line.error"),
            "line_wins": op("ratio", ["e_line", "e_sqrt"]),
        },
        [
            check("post", "close", 8.0, rel=1e-3),
            check("pre_growth", ">", 3.0),
            check("p", ">", 0.7),  # faster than the tanh snowball's 0.48–0.64
            check("line_wins", "<", 1.0),
        ],
    ),
    equation="Post-LN: x ← LN(x + f(x))\nPre-LN:  x ← x + f(LN(x))",
    departs=departs(
        "the 2017 recipe (ReLU), with the norm after or before the branch.",
        "2017 配方（ReLU），归一化放在分支之后或之前。",
    ),
)


def position_grad_chart(depth: int) -> dict[str, Any]:
    post, pre = src.model("post_ln", depth=depth), src.model("pre_ln_2017", depth=depth)
    return chart(
        "layers",
        ("Gradient per block: Post-LN vs Pre-LN", "每块的梯度：Post-LN 对比 Pre-LN"),
        [src.trace(post), src.trace(pre)],
        src.compare_link(["post_ln", "pre_ln_2017"], depth),
        panels=[panel(("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"), log=True)],
        series=[series(0, "grad_norm", POST_SERIES, "vermillion"), series(1, "grad_norm", PRE_SERIES, "blue")],
    )


def position_grad_claim(depth: int) -> dict[str, Any]:
    return claim(
        (
            f"Gradient at block 1 ÷ block {depth}: Post-LN {{post|3}}, Pre-LN {{pre|3}}.",
            f"第 1 块梯度 ÷ 第 {depth} 块梯度：Post-LN 为 {{post|3}}，Pre-LN 为 {{pre|3}}。",
        ),
        {"post": read(0, "summary.grad_survival"), "pre": read(1, "summary.grad_survival")},
        # fades toward the input in Post-LN, grows in Pre-LN, at every depth the control offers (not monotone in
        # depth: 0.30, 0.13, 0.052, 0.083 at 12, 24, 48, 96 blocks, so the slide claims no trend)
        [check("post", "<", 0.5), check("pre", "between", [1.0, 10.0])],
    )


def position_grad_option(depth: int) -> dict[str, Any]:
    return option(str(depth), (str(depth), str(depth)), position_grad_chart(depth), position_grad_claim(depth))


POSITION_GRAD = slide(
    "post-vs-pre-grad",
    ("Their gradients", "它们的梯度"),
    (
        "In Post-LN the gradient must pass through a norm at every block on its way down, and it fades toward the input. "
        "In Pre-LN the shortcut carries it past every norm.",
        "在 Post-LN 中，梯度往下传时每一块都要穿过一个归一化，越靠近输入越弱。在 Pre-LN 中，捷径带着它绕过所有归一化。",
    ),
    (
        "Xiong et al. 2020: at initialisation Post-LN's gradients near the output are large and those near the input "
        "small, which is why it needs a learning-rate warm-up. Pre-LN's gradient reaching block 1 is several times larger "
        "than at the top (the caption's ratio): along the shortcut every block adds to it, none multiplies it down.",
        "Xiong 等 2020：初始化时 Post-LN 靠近输出的梯度大、靠近输入的梯度小，所以它需要学习率预热。"
        "Pre-LN 传到第 1 块的梯度甚至是顶部的好几倍（见说明文字中的比值）：沿着捷径，每一块都在往上加，没有一块把它乘小。",
    ),
    position_grad_chart(96),
    position_grad_claim(96),
    try_it=try_it(("Blocks", "块数"), [position_grad_option(depth) for depth in TRY_DEPTHS], "96"),
    departs=departs(
        "the 2017 recipe (ReLU), as on the previous slide.",
        "2017 配方（ReLU），与上一页相同。",
    ),
    predict=(
        "Predict first: on its way down to block 1, in which placement does the gradient fade, Post-LN or Pre-LN?",
        "先预测：梯度传回第 1 块的路上，哪种位置会让它衰减，Post-LN 还是 Pre-LN？",
    ),
)

POST_KINDS = ["post_ln", "pre_ln_2017"]
POSITION_TRAIN = slide(
    "post-vs-pre-train",
    ("Training Post-LN: warm-up helps, partly", "训练 Post-LN：预热有帮助，但不够"),
    (
        "12 blocks, the same 2017 recipe, the same data. Without warm-up Post-LN barely moves from the uniform guess; ramping the "
        "learning rate up over 100 steps gets it moving, but it still lags far behind Pre-LN. Press T to train.",
        "12 块、同样的 2017 配方、同样的数据。没有预热时 Post-LN 几乎停在均匀猜测的水平；学习率在前 100 步线性升高后它动了起来，"
        "但仍远远落后于 Pre-LN。按 T 开始训练。",
    ),
    (
        "Three runs of 300 steps, under half a minute on two idle cores (Post-LN and Pre-LN train side by side; the progress bar shows how far). Adam at lr 0.001 from step 1 is too much for Post-LN's large top-layer "
        "gradients (Xiong et al. 2020); warm-up (Goyal et al. 2017) tames the first steps. DeepNorm and ReZero (the alternatives slide) are "
        "other ways to make Post-LN-like models train deep."
        " The caption's checks hold on seeds 1–3 too: those runs are trained ahead of time and recorded with the "
        "command that made them, and a test checks every claim on the recording.",
        "三个训练，各 300 步，在两个空闲的核上不到半分钟（Post-LN 与 Pre-LN 并排同时训练；进度条显示进展）。从第 1 步起就用学习率 0.001 的 Adam，对 Post-LN 顶层的大梯度来说太猛（Xiong 等 2020）；预热（Goyal 等 2017）"
        "驯服了最初几步。DeepNorm 和 ReZero（见“其他方案”一页）是让类 Post-LN 模型训练得很深的其他办法。"
        "说明文字的每项核对在种子 1–3 上也成立：这些种子的训练事先完成并连同生成它的命令一起记录下来，测试在记录上逐条核对。",
    ),
    chart(
        "train",
        ("Training loss, copy task, 12 blocks", "训练损失：复制任务，12 块"),
        [src.train(POST_KINDS), src.train(["post_ln"], warmup_steps=100)],
        src.train_link(POST_KINDS, warmup_steps=100),
        labels=[("Post-LN", "Post-LN"), ("Pre-LN", "Pre-LN"), ("Post-LN + warm-up", "Post-LN + 预热")],
    ),
    claim(
        (
            "After 300 steps: Post-LN {post|3} (uniform guess {uniform|3}); with warm-up {warm|3}, {warm_whole|2} of "
            "answers fully right; Pre-LN {pre|2}.",
            "300 步之后：Post-LN 为 {post|3}（均匀猜测为 {uniform|3}）；预热后为 {warm|3}，整句全对的比例为 {warm_whole|2}；"
            "Pre-LN 为 {pre|2}。",
        ),
        {
            "uniform": {"const": math.log(15)},
            "post": read(0, "runs[0].done.final_loss"),
            "pre": read(0, "runs[1].done.final_loss"),
            "warm": read(1, "runs[0].done.final_loss"),
            "warm_whole": read(1, "runs[0].done.sequence_accuracy"),
            "stall_gap": op("ratio", ["post", "warm"]),
        },
        [
            check("post", "between", [math.log(15) - 0.3, math.log(15) + 0.1]),  # "barely moves": within 0.3 nats
            check("stall_gap", ">", 1.3),  # and well above the warmed-up run
            check("warm", "between", [0.3, math.log(15) - 0.4]),
            check("warm_whole", "<", 0.5),
            check("pre", "<", 0.05),
        ],
    ),
    departs=departs(
        "12 blocks of the 2017 recipe (ReLU), trained on a copy task.",
        "12 块、2017 配方（ReLU），在复制任务上训练。",
    ),
)

LN_96, RMS_96 = src.model("pre_ln", depth=96), src.model("llama", depth=96)
RMSNORM = slide(
    "rmsnorm",
    ("RMSNorm: drop the mean", "RMSNorm：去掉均值"),
    (
        "RMSNorm skips the mean: it divides by the root mean square, and has no β. LLaMA uses it.",
        "RMSNorm 不减均值：只除以均方根，也没有 β。LLaMA 用的就是它。",
    ),
    (
        "Zhang & Sennrich 2019. Less arithmetic, and the same outcome in a deep Pre-norm stack (the caption). On "
        "[8, 2, 2, 4] the output's mean is not 0: RMSNorm only fixes the scale. Same sizes, "
        "seed and initialisation (GPT-2) for both stacks; only the norm differs.",
        "Zhang 与 Sennrich 2019。计算更少，在深层 Pre-norm 网络中效果相同（见说明文字）。对 [8, 2, 2, 4]，输出的均值不是 0：RMSNorm 只固定尺度。两个网络的尺寸、随机种子和初始化"
        "（GPT-2）都相同，只有归一化不同。",
    ),
    chart(
        "layers",
        ("Stream norm and gradient", "残差流范数与梯度"),
        [src.layernorm(x=X, kind="rmsnorm"), src.trace(LN_96), src.trace(RMS_96)],
        src.compare_link(["pre_ln", "llama"], 96),
        panels=[panel(("‖x_l‖", "‖x_l‖")), panel(("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"), log=True)],
        series=[
            series(1, "act_norm", ("LayerNorm", "LayerNorm"), "blue"),
            series(2, "act_norm", ("RMSNorm", "RMSNorm"), "orange", "dash"),
            series(1, "grad_norm", ("LayerNorm", "LayerNorm"), "blue", panel=1),
            series(2, "grad_norm", ("RMSNorm", "RMSNorm"), "orange", "dash", panel=1),
        ],
    ),
    claim(
        (
            "[8, 2, 2, 4]: RMS = {rms|5} (√22), output mean {out_mean|3}, not 0. In 96 blocks the stream grows ×{g_ln|3} "
            "with LayerNorm and ×{g_rms|3} with RMSNorm; block 1 gets {s_ln|3}× and {s_rms|3}× block 96's gradient.",
            "[8, 2, 2, 4]：RMS = {rms|5}（√22），输出均值 {out_mean|3}，不是 0。96 块中，残差流用 LayerNorm 变为 {g_ln|3} 倍，"
            "用 RMSNorm 变为 {g_rms|3} 倍；第 1 块的梯度分别是第 96 块的 {s_ln|3} 倍和 {s_rms|3} 倍。",
        ),
        {
            "rms": read(0, "rms"),
            "out_mean": read(0, "normalized_mean"),
            "g_ln": read(1, "summary.norm_growth"),
            "g_rms": read(2, "summary.norm_growth"),
            "s_ln": read(1, "summary.grad_survival"),
            "s_rms": read(2, "summary.grad_survival"),
            "same_growth": op("ratio", ["g_rms", "g_ln"]),
            "same_survival": op("ratio", ["s_rms", "s_ln"]),
        },
        [
            check("rms", "close", math.sqrt(22.0), rel=1e-9),
            check("out_mean", ">", 0.5),
            check("same_growth", "between", [0.95, 1.05]),
            check("same_survival", "between", [0.95, 1.05]),
        ],
    ),
    equation="RMSNorm(x) =\nγ ⊙ x / √(mean(x²) + ε)",
    qa=qa(
        ("LayerNorm's centring costs time and rarely matters.", "LayerNorm 的减均值费时，而且很少起作用。"),
        ("Divide by the root mean square; keep γ, drop β.", "除以均方根；保留 γ，去掉 β。"),
        "F.rms_norm(x, (d,), γ)",
        ("d parameters per norm instead of 2·d.", "每个归一化 d 个参数，而不是 2·d 个。"),
    ),
    departs=departs(
        "GPT-2's recipe (GELU, small initial branches).",
        "GPT-2 配方（GELU，分支初始很小）。",
    ),
)

PER_TOKEN = ("layernorm", "rmsnorm", "groupnorm")
BATCHNORM = slide(
    "batchnorm",
    ("BatchNorm: a sentence's output depends on its batch", "BatchNorm：一个句子的输出取决于同批的句子"),
    (
        "LayerNorm normalizes each token over its own d components. BatchNorm normalizes each channel over the whole "
        "batch, so the same sentence comes out differently beside other sentences, and training and eval mode "
        "disagree. That is why Transformers use LayerNorm or RMSNorm.",
        "LayerNorm 在每个词元自己的 d 个分量上归一化。BatchNorm 则在整个批上对每个通道归一化，所以同一个句子放在不同的句子"
        "旁边，输出就不一样，训练模式和评估模式也不一致。所以 Transformer 用 LayerNorm 或 RMSNorm。",
    ),
    (
        "Ioffe & Szegedy 2015 (their Algorithm 1: the mean and variance of each channel over the mini-batch); Shen et "
        "al. 2020 measured what batch statistics do to Transformers. Here the engine's own norm layers, in float64, on "
        "synthetic tokens (a channel mean, a per-sentence offset and noise; d = 16, 16 tokens a sentence): one fixed "
        "sentence among 8 sets of new batch mates. The per-token norms read one token's numbers only, so their change "
        "is exactly 0. Padding is worse still: zero vectors enter BatchNorm's means (the /batchnorm page).",
        "Ioffe 与 Szegedy 2015（其算法 1：每个通道在小批上的均值和方差）；Shen 等 2020 测量了批统计量对 Transformer 的影响。"
        "这里用本引擎自己的归一化层（float64），在合成词元上（通道均值、每个句子的偏移和噪声；d = 16，每句 16 个词元）："
        "一个固定的句子，换 8 次同批句子。逐词元的归一化只读一个词元自己的数，所以变化正好是 0。填充更糟：零向量会混进"
        " BatchNorm 的均值（见 /batchnorm 页面）。",
    ),
    chart(
        "batch",
        ("Same sentence, new batch mates: how much its output changes", "换掉同批句子后，输出变化多少"),
        [src.batch(norm=norm) for norm in ("batchnorm", *PER_TOKEN)],
        "/batchnorm",
    ),
    claim(
        (
            "In a batch of {batch|0}, new batch mates changed one sentence's BatchNorm output by {same|3} of its size "
            "on average (up to {max|3}); with 64 sentences still by {big|3}. Training and eval mode differ by "
            "{gap|3}. LayerNorm, RMSNorm and GroupNorm: {per_token|2}.",
            "批大小为 {batch|0} 时，换掉同批句子后，一个句子的 BatchNorm 输出平均变化了自身大小的 {same|3}（最多 "
            "{max|3}）；批大小为 64 时仍有 {big|3}。训练模式与评估模式相差 {gap|3}。LayerNorm、RMSNorm 和 GroupNorm："
            "{per_token|2}。",
        ),
        {
            "batch": read(0, "batch"),
            "same": read(0, "same_sequence_change"),
            "max": read(0, "same_sequence_change_max"),
            "big": read(0, "by_batch[-1].same_sequence_change"),
            "largest": read(0, "by_batch[-1].batch"),
            "gap": read(0, "train_eval_change"),
            "each": {"sources": [1, 2, 3], "path": "by_batch[*].same_sequence_change"},
            "per_token": op("max", "each"),
            "shrunk": op("ratio", ["big", "same"]),
        },
        [
            check("largest", "==", 64),
            check("same", ">", 0.1),
            check("shrunk", "between", [0.05, 0.9]),  # a bigger batch shrinks the change, and not to 0
            check("gap", ">", 0.05),
            check("per_token", "==", 0),
        ],
    ),
    equation="BatchNorm:  μᵢ = (1/BT) Σₙ,ₜ xₙₜᵢ\nLayerNorm:  μₙₜ = (1/d) Σᵢ xₙₜᵢ",
)

XIONG_Y = ("‖∂loss/∂θ‖, last block's FFN (log)", "‖∂loss/∂θ‖，最后一块的前馈（对数）")
XIONG = slide(
    "xiong",
    ("Xiong et al.'s theorem, measured", "Xiong 等人的定理：实测"),
    (
        "At initialisation the last block's FFN weight gradient does not depend on the depth L in Post-LN, and shrinks "
        "like 1/√L in Pre-LN (Xiong et al. 2020, theorem 1). Here it is measured at 6 to 96 blocks, on four seeds.",
        "初始化时，最后一块的前馈权重的梯度在 Post-LN 中与深度 L 无关，在 Pre-LN 中按 1/√L 缩小（Xiong 等 2020，"
        "定理 1）。这里在 6 到 96 块、四个随机种子上实测。",
    ),
    (
        "Solid: seed 0; dotted and dashed: seeds 1–3. What is measured: the norm of the gradient of all the last "
        "block's FFN parameters together (both weight "
        "matrices and their biases), one backward pass at initialisation; the theorem bounds one of those matrices. The "
        "exponent is the slope of a least-squares line through log(gradient) against log(depth), per seed. Post-LN's "
        "gradient near the output stays put while the depth grows, so with a fixed learning rate its top blocks take "
        "steps as large in a deep model as in a shallow one: one reason it needs a warm-up. Pre-LN's shrinks: a deep "
        "Pre-LN model tolerates a larger learning rate. Liu et al. 2020 report that a Post-LN model that does train "
        "can end better than Pre-LN; that is reported there, not measured here.",
        "实线为种子 0，点线和虚线为种子 1–3。测的是什么：最后一块的前馈所有参数（两个权重矩阵及其偏置）合在一起的梯度范数，初始化时一次反向传播；定理约束的是其中"
        "一个矩阵。指数是 log(梯度) 对 log(深度) 的最小二乘直线斜率，每个种子各算一次。Post-LN 靠近输出的梯度不随深度变化，"
        "学习率固定时，深模型顶部各块的步长和浅模型一样大：这是它需要预热的原因之一。Pre-LN 的梯度随深度缩小：深的 Pre-LN "
        "模型能承受更大的学习率。Liu 等 2020 报告说，能训练起来的 Post-LN 模型最终可能比 Pre-LN 更好；这是该文的报告，"
        "不是这里的测量。",
    ),
    chart(
        "layers",
        ("FFN gradient against depth, seeds 0–3", "前馈梯度随深度的变化（种子 0–3）"),
        [src.depth_scan()],
        POST_PRE_LINK,
        panels=[panel(XIONG_Y, log=True)],
        series=[
            series(0, f"{key}.seeds[{i}]", label, color, dash)
            for key, names, color in (
                ("post_ln", ("Post-LN", "Post-LN"), "vermillion"),
                ("pre_ln_2017", ("Pre-LN", "Pre-LN"), "blue"),
            )
            # one legend entry per placement (the deck names a label once): seed 0 solid, seeds 1-3 dotted and dashed
            for i, (label, dash) in enumerate((names, d) for d in ("solid", "dot", "dash", "dashdot"))
        ],
        x=pair("Depth L (blocks, log)", "深度 L（块数，对数）"),
        xlog=True,
    ),
    claim(
        (
            "Fitted exponent of the gradient against depth, seeds 0–3: Post-LN {post_low|2} to {post_high|2} (the "
            "theorem: 0), Pre-LN {pre_low|2} to {pre_high|2} (the theorem: −½).",
            "梯度对深度的拟合指数，种子 0–3：Post-LN 为 {post_low|2} 到 {post_high|2}（定理：0），Pre-LN 为 "
            "{pre_low|2} 到 {pre_high|2}（定理：−½）。",
        ),
        {
            "post": read(0, "post_ln.exponents"),
            "pre": read(0, "pre_ln_2017.exponents"),
            "post_low": op("min", "post"),
            "post_high": op("max", "post"),
            "pre_low": op("min", "pre"),
            "pre_high": op("max", "pre"),
        },
        [
            check("post", "between", [-0.15, 0.15]),  # independent of the depth, on every seed
            check("pre", "between", [-0.65, -0.35]),  # near −½, on every seed
        ],
    ),
    departs=departs(
        "the 2017 recipe (ReLU) at 6 to 96 blocks, seeds 0–3.",
        "2017 配方（ReLU），6 到 96 块，种子 0–3。",
    ),
)

SLIDES = [LAYERNORM, GAMMA_BETA, DIAGRAM, POSITION, POSITION_GRAD, XIONG, POSITION_TRAIN, RMSNORM, BATCHNORM]
