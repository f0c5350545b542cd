"""The slides on the reference model (reference.py): the live chain product, the norm alone, the snowball and why
it is not exactly √l. The summary slide re-sends these requests and shows these very values (SUMMARY_CELLS)."""

from __future__ import annotations

from typing import Any

from .build import chart, check, claim, op, panel, read, series, slide
from .reference import SEEDS, request

GRAD_Y = ("Gradient ‖∂loss/∂xₗ‖", "梯度 ‖∂loss/∂xₗ‖")
STREAM_Y = ("Stream length ‖xₗ‖", "残差流长度 ‖xₗ‖")
COSINE_Y = ("Cosine between tokens", "词元间余弦相似度")  # one line: it sits in the gap between the panels
SEED_COLORS = ("blue", "green", "orange")
LIVE_SOURCES = [request("neither"), request("shortcut")]
LIVE = slide(
    "live-gradient",
    ("Live: 96 blocks without a norm", "实测：96 块、没有归一化"),
    (
        "The reference model with no normalization. Without the shortcut every block multiplies the gradient by a "
        "factor below 1: the chain product, live. With the shortcut nothing multiplies it down any more, but nothing "
        "holds the stream's size either: it explodes, and the gradient with it.",
        "不做归一化的参考模型。没有捷径时，每一块都给梯度乘上一个小于 1 的因子：这就是实测的链式乘积。"
        "有了捷径，梯度不再被逐块乘小，但也没有任何东西管住残差流的大小：它爆炸了，梯度也随之爆炸。",
    ),
    (
        "Read the left panel from right to left. The shortcut fixes one failure (vanishing) and exposes the other "
        "(the stream's size): the next slide adds the norm alone, and both together. GPT-2 avoids the explosion without a norm "
        "in the stream by starting every branch small; with small branches (DeepNorm's initialisation) the shortcut "
        "alone keeps the gradient near 1 (try it in the explorer: init = deepnorm).",
        "从右往左读左图。捷径修好了一种失效（梯度消失），却暴露出另一种（残差流的大小）：下一页只加归一化，并与两者都加的情形对比。"
        "GPT-2 让每个分支从很小的值开始，以此避免爆炸；分支初始很小时（DeepNorm 的初始化），只靠捷径也能让梯度保持在 1 附近"
        "（可在探索器中试：init = deepnorm）。",
    ),
    chart(
        "layers",
        ("Gradient (left) and stream length (right), no norm", "梯度（左）与残差流长度（右）：无归一化"),
        LIVE_SOURCES,
        "/gradients?depth=96&norm=none&residual=none&activation=tanh&init=xavier",
        panels=[panel(GRAD_Y, log=True), panel(STREAM_Y, log=True)],
        series=[
            series(0, "grad_norm", ("No shortcut", "无捷径"), "vermillion"),
            series(1, "grad_norm", ("Shortcut", "有捷径"), "blue"),
            series(0, "act_norm", ("No shortcut", "无捷径"), "vermillion", panel=1),
            series(1, "act_norm", ("Shortcut", "有捷径"), "blue", panel=1),
        ],
    ),
    claim(
        (
            "No shortcut: block 1 gets {plain|3}× block 96's gradient, ×{factor|3} per block. Shortcut, no norm: the "
            "stream grows ×{n_short|3} and the gradient overflows float32 on its way down (block 1 ÷ block 96: "
            "{g_short}).",
            "无捷径：第 1 块的梯度是第 96 块的 {plain|3} 倍，每块 ×{factor|3}。有捷径、无归一化：残差流变为 {n_short|3} 倍，"
            "梯度在回传途中超出 float32 的范围（第 1 块 ÷ 第 96 块：{g_short}）。",
        ),
        {
            "plain": read(0, "summary.grad_survival"),
            "factor": op("root", "plain", n=95),
            "g_short": read(1, "summary.grad_survival"),
            "n_short": read(1, "summary.norm_growth"),
        },
        [
            check("plain", "<", 1e-9),
            check("factor", "between", [0.5, 0.95]),
            check("g_short", "null"),
            check("n_short", ">", 1e6),
        ],
    ),
)

COLLAPSE_SOURCES = [*(request("norm", seed) for seed in SEEDS), request("both")]
COLLAPSE = slide(
    "norm-collapse",
    ("A norm in every block is not enough", "每块都有归一化，还不够"),
    (
        "A Pre-LN LayerNorm in every block, no shortcut, three random seeds. The gradient no longer vanishes, but "
        "whether it grows or shrinks toward the input depends on the seed. What fails on every seed: all tokens end up "
        "pointing the same way, so the model can no longer tell them apart.",
        "每块都有 Pre-LN LayerNorm、没有捷径，三个随机种子。梯度不再消失，但越靠近输入是变大还是变小，取决于随机种子。"
        "每个种子都出现的失效是：所有词元最后都指向同一个方向，模型再也分不清它们。",
    ),
    (
        "Claim only what holds on every seed: the direction of the gradient does not (seed 0 shrinks it, seed 2 grows "
        "it), the collapse does. Token collapse (rank collapse): Dong et al. 2021, 'Attention is not all you need'. "
        "The next slide shows the consequence: such a model does not learn.",
        "只讲对每个种子都成立的结论：梯度的方向不成立（种子 0 让它变小，种子 2 让它变大），坍缩成立。"
        "词元坍缩（秩坍缩）：Dong 等 2021，《Attention is not all you need》。下一页展示后果：这样的模型学不会。",
    ),
    chart(
        "layers",
        ("Gradient (left) and token similarity (right)", "梯度（左）与词元相似度（右）"),
        COLLAPSE_SOURCES,
        "/gradients?depth=96&residual=none&activation=tanh&init=xavier",
        panels=[panel(GRAD_Y, log=True), panel(COSINE_Y, range=[0, 1.05])],
        series=[
            *(
                series(i, field, (f"No shortcut, seed {s}", f"无捷径，种子 {s}"), "vermillion", dash, panel=p)
                for p, field in enumerate(("grad_norm", "token_cosine"))
                for i, (s, dash) in enumerate(zip(SEEDS, ("solid", "dash", "dot"), strict=True))
            ),
            series(3, "grad_norm", ("Shortcut, seed 0", "有捷径，种子 0"), "blue"),
            series(3, "token_cosine", ("Shortcut, seed 0", "有捷径，种子 0"), "blue", panel=1),
        ],
    ),
    claim(
        (
            "No shortcut, seeds 0, 1, 2: block 1 gets {g0|3}×, {g1|3}× and {g2|3}× block 96's gradient. On every seed "
            "the tokens collapse: mean cosine similarity above 0.9999 from block 16 on (1 − cosine at most {gap|2}; "
            "{c_norm|4} at block 96, seed 0). With the shortcut: cosine {c_both|3} at block 96, gradient ×{g_both|3}.",
            "无捷径，种子 0、1、2：第 1 块的梯度分别是第 96 块的 {g0|3}、{g1|3} 和 {g2|3} 倍。每个种子的词元都坍缩了："
            "从第 16 块起平均余弦相似度都已超过 0.9999（1 − 余弦至多为 {gap|2}；种子 0 第 96 块为 {c_norm|4}）。有捷径时：第 96 块余弦相似度为 "
            "{c_both|3}，梯度 ×{g_both|3}。",
        ),
        {
            **{f"g{i}": read(i, "summary.grad_survival") for i in range(3)},
            "after": {"sources": [0, 1, 2], "path": "layers[15:].token_cosine"},
            "collapsed": op("min", "after"),
            "gap": op("one_minus", "collapsed"),
            "c_norm": read(0, "layers[-1].token_cosine"),
            "c_both": read(3, "layers[-1].token_cosine"),
            "g_both": read(3, "summary.grad_survival"),
        },
        [
            *(check(f"g{i}", "between", [1e-3, 1e3]) for i in range(3)),
            check("collapsed", ">", 0.9999),
            check("c_both", "<", 0.9),
            check("g_both", "between", [1.0, 10.0]),
        ],
    ),
)

BOTH_SOURCES = [request("both", seed) for seed in SEEDS]
FIT_LAWS = ("sqrt", "line", "power")


def _law_values(source: int) -> dict[str, Any]:
    """‖xₗ‖ of one seed and the error of each law fitted to it, plus the best power."""
    norms = f"norms{source}"
    return {
        norms: read(source, "layers[*].act_norm"),
        **{f"e_{law}{source}": op("law", norms, law=law, out="error") for law in FIT_LAWS},
        f"p{source}": op("law", norms, law="power", out="p"),
    }


SNOWBALL = slide(
    "snowball",
    ("The snowball: xₗ₊₁ = xₗ + f(xₗ)", "滚雪球：xₗ₊₁ = xₗ + f(xₗ)"),
    (
        "With the shortcut and a Pre-LN norm, nothing shrinks the stream: every block adds its output on top. "
        "How fast does it grow? Fit (a + c·l)ᵖ and compare √l, a straight line and the best power p.",
        "有捷径和 Pre-LN 归一化时，没有东西让残差流变小：每个块都把输出叠加上去。它长得有多快？"
        "拟合 (a + c·l)ᵖ，比较 √l、直线和最佳幂次 p。",
    ),
    (
        "Pre-LN at initialisation (Xiong et al. 2020, lemma 2) predicts ‖xₗ‖² ≈ ‖x₀‖² + c·l, that is √l, if every "
        "update is independent of the stream. The dashed curves are the three fits to seed 0; the caption gives each "
        "fit's root-mean-square error. The best power differs from seed to seed, always between √l and a line and "
        "closer to √l: say 'a power near √l', not '√l'. The next slide shows why.",
        "初始化时的 Pre-LN（Xiong 等 2020，引理 2）在每次更新都与残差流无关时预测 ‖xₗ‖² ≈ ‖x₀‖² + c·l，即 √l。"
        "虚线是对种子 0 的三种拟合；说明文字给出每种拟合的均方根误差。最佳幂次随种子而变，总在 √l 与直线之间、更接近 √l："
        "应该说“接近 √l 的幂律”，而不是“√l”。下一页说明原因。",
    ),
    chart(
        "layers",
        ("Stream length per layer, both stabilizers", "每层残差流长度：两种机制都有"),
        BOTH_SOURCES,
        "/norms?depth=96&activation=tanh&init=xavier",
        panels=[panel(STREAM_Y)],
        series=[
            series(i, "act_norm", (f"Seed {s}", f"种子 {s}"), color, "solid" if i == 0 else "dot")
            for i, (s, color) in enumerate(zip(SEEDS, SEED_COLORS, strict=True))
        ],
        overlays=[{"type": "law_fit", "series": 0, "law": law} for law in FIT_LAWS],
    ),
    claim(
        (
            "Seed 0: ‖x‖ grows ×{growth0|3} from block 1 to 96. Error of (a + c·l)ᵖ: √l {e_sqrt0|2}, line {e_line0|2}, "
            "best power p = {p0|2}: {e_power0|2}. Seeds 1 and 2: p = {p1|2} and {p2|2}. A power between √l and a "
            "line, nearer √l; no single law fits every seed.",
            "种子 0：‖x‖ 从第 1 块到第 96 块变为 {growth0|3} 倍。(a + c·l)ᵖ 的拟合误差：√l 为 {e_sqrt0|2}，直线为 "
            "{e_line0|2}，最佳幂次 p = {p0|2} 时为 {e_power0|2}。种子 1 和 2：p = {p1|2} 和 {p2|2}。"
            "增长是介于 √l 与直线之间、更接近 √l 的幂律；没有哪一条定律对每个种子都成立。",
        ),
        {
            "growth0": read(0, "summary.norm_growth"),
            **_law_values(0),
            **_law_values(1),
            **_law_values(2),
        },
        [
            check("growth0", "between", [3.0, 30.0]),
            *(check(f"p{i}", "between", [0.4, 0.75]) for i in range(3)),
        ],
    ),
)


def _energy_values(source: int) -> dict[str, Any]:
    """‖x₉₆‖² against ‖x₀‖² + Σ‖fₗ‖², the square it would have if the increments were independent."""
    s = str(source)
    return {
        f"x0_{s}": read(source, "embedding.act_norm"),
        f"x96_{s}": read(source, "layers[-1].act_norm"),
        f"f_{s}": read(source, "layers[*].branch_norm"),
        f"x0sq{s}": op("sumsq", f"x0_{s}"),
        f"fsq{s}": op("sumsq", f"f_{s}"),
        f"actual{s}": op("sumsq", f"x96_{s}"),
        f"independent{s}": op("add", [f"x0sq{s}", f"fsq{s}"]),
        f"r{s}": op("ratio", [f"actual{s}", f"independent{s}"]),
    }


ENERGY = slide(
    "increments",
    ("Why not exactly √l: the increments add up", "为什么不正好是 √l：增量的累加"),
    (
        "x₉₆ = x₀ + f₁ + … + f₉₆. If the increments fₗ were independent, their squares would add: "
        "‖x₉₆‖² = ‖x₀‖² + Σ‖fₗ‖², and with equal-sized fₗ that is √l. The cross terms decide the rest.",
        "x₉₆ = x₀ + f₁ + … + f₉₆。若各增量 fₗ 相互独立，它们按平方累加：‖x₉₆‖² = ‖x₀‖² + Σ‖fₗ‖²；"
        "fₗ 大小相同时，这正是 √l。其余由交叉项决定。",
    ),
    (
        "Two facts hold on every seed. Each branch sees a normalized input, so every ‖fₗ‖ stays within a factor of two "
        "from block 1 to 96: the sum of squares grows like l, which is why the stream grows like a power and not "
        "exponentially (compare the shortcut without a norm). And the tokens align as the stream grows (right), so the "
        "increments are not independent: their cross terms add or remove up to about 15% of ‖x₉₆‖², with a sign that "
        "changes from seed to seed. That is why the best power is near ½ but not ½, and differs between seeds.",
        "有两件事对每个种子都成立。每个分支看到的是归一化后的输入，所以从第 1 块到第 96 块每个 ‖fₗ‖ 的大小都在两倍范围之内：平方和按 l 增长，"
        "这就是残差流按幂律而不是指数增长的原因（对比没有归一化的捷径）。同时，随着残差流增长词元逐渐对齐（右图），"
        "增量并不独立：它们的交叉项让 ‖x₉₆‖² 增加或减少约 15%，正负随种子而变。所以最佳幂次接近 ½ 却不等于 ½，且因种子而异。",
    ),
    chart(
        "layers",
        ("Increment size ‖fₗ‖ (left) and token similarity (right)", "增量大小 ‖fₗ‖（左）与词元相似度（右）"),
        BOTH_SOURCES,
        "/norms?depth=96&activation=tanh&init=xavier",
        panels=[panel(("Increment ‖fₗ‖", "增量 ‖fₗ‖"), range=[0, 12]), panel(COSINE_Y, range=[0, 1.05])],
        series=[
            *(
                series(i, "branch_norm", (f"Seed {s}", f"种子 {s}"), color, "solid" if i == 0 else "dot")
                for i, (s, color) in enumerate(zip(SEEDS, SEED_COLORS, strict=True))
            ),
            *(
                series(i, "token_cosine", (f"Seed {s}", f"种子 {s}"), color, "solid" if i == 0 else "dot", panel=1)
                for i, (s, color) in enumerate(zip(SEEDS, SEED_COLORS, strict=True))
            ),
        ],
    ),
    claim(
        (
            "Seed 0: ‖x₉₆‖² = {actual0|4} against ‖x₀‖² + Σ‖fₗ‖² = {independent0|4}, ratio {r0|3}; seeds 1 and 2: "
            "{r1|3} and {r2|3}. Every ‖fₗ‖ is between {f_low|2} and {f_high|2}. The tokens align: cosine {cos1|2} at "
            "block 1, {cos96|2} at block 96.",
            "种子 0：‖x₉₆‖² = {actual0|4}，而 ‖x₀‖² + Σ‖fₗ‖² = {independent0|4}，比值 {r0|3}；种子 1 和 2：{r1|3} 和 "
            "{r2|3}。每个 ‖fₗ‖ 都在 {f_low|2} 到 {f_high|2} 之间。词元逐渐对齐：余弦相似度第 1 块为 {cos1|2}，第 96 块为 "
            "{cos96|2}。",
        ),
        {
            **_energy_values(0),
            **_energy_values(1),
            **_energy_values(2),
            "f_all": {"sources": [0, 1, 2], "path": "layers[*].branch_norm"},
            "f_low": op("min", "f_all"),
            "f_high": op("max", "f_all"),
            "cos1": read(0, "layers[0].token_cosine"),
            "cos96": read(0, "layers[-1].token_cosine"),
        },
        [
            *(check(f"r{i}", "between", [0.75, 1.33]) for i in range(3)),
            check("f_low", ">", 4.0),
            check("f_high", "<", 16.0),
            check("cos96", ">", 0.5),
        ],
    ),
)

SLIDES = [LIVE, COLLAPSE]
SNOWBALL_SLIDES = [SNOWBALL, ENERGY]

# The summary table: (row label, cells per column); a cell names the slide and the value it shows, and the summary
# re-sends that slide's request and shows the same value with the same digits. None: no slide shows it, left blank.
SUMMARY_CELLS: list[tuple[tuple[str, str], list[tuple[str, str] | None]]] = [
    (("Neither", "都没有"), [("live-gradient", "plain"), None, None]),
    (("Shortcut only", "只有捷径"), [("live-gradient", "g_short"), ("live-gradient", "n_short"), None]),
    (("Norm only (Pre-LN)", "只有归一化（Pre-LN）"), [("norm-collapse", "g0"), None, ("norm-collapse", "c_norm")]),
    (
        ("Both (Pre-LN)", "两者都有（Pre-LN）"),
        [("norm-collapse", "g_both"), ("snowball", "growth0"), ("norm-collapse", "c_both")],
    ),
]
