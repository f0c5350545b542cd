"""The slides on the reference model (reference.py): the live chain product, the norm alone, the snowball and why
it is not exactly √l. The summary slide re-sends these requests and shows these very values (SUMMARY_CELLS)."""

from __future__ import annotations

from typing import Any

from ...config import TraceConfig
from . import sources as src
from .build import TRY_DEPTHS, chart, check, claim, op, option, panel, read, series, slide, try_it
from .reference import COLORS, NAMES, SEEDS, reference, request

GRAD_Y = ("Gradient ‖∂loss/∂xₗ‖", "梯度 ‖∂loss/∂xₗ‖")
STREAM_Y = ("Stream norm ‖xₗ‖", "残差流范数 ‖xₗ‖")
COSINE_Y = ("Cosine between tokens", "词元间余弦相似度")  # one line: it sits in the gap between the panels
# "Both" on every seed: the colour of "both" for seed 0, its neighbours for the others (dashes tell them apart).
SEED_COLORS = ("blue", "sky", "sky", "sky")
SEED_DASHES = ("solid", "dot", "dash", "dashdot")


def seed_label(seed: int) -> tuple[str, str]:
    """Seed 0 by name, the other seeds under one legend entry (the deck draws a name once): a legend row per seed
    crowds a phone's chart and a 1080p slide's second y title."""
    rest = f"{SEEDS[1]}–{SEEDS[-1]}"
    return (f"Seed {seed}", f"种子 {seed}") if seed == SEEDS[0] else (f"Seeds {rest}", f"种子 {rest}")


SEED_LIST = ", ".join(str(s) for s in SEEDS)
SEED_SPAN = f"{SEEDS[0]}–{SEEDS[-1]}"
LIVE_SOURCES = [request("neither"), request("shortcut")]
OVERFLOWS_FROM = 48  # the no-norm stack's gradient overflows float32 from this depth on (checked per option)


def _at_depth(setting: str, depth: int) -> dict[str, Any]:
    return src.trace(TraceConfig(**{**reference(setting).model_dump(), "depth": depth}))


def live_chart(depth: int) -> dict[str, Any]:
    sources = LIVE_SOURCES if depth == 96 else [_at_depth("neither", depth), _at_depth("shortcut", depth)]
    return chart(
        "layers",
        ("Gradient (left) and stream norm (right), no norm", "梯度（左）与残差流范数（右）：无归一化"),
        sources,
        f"/gradients?depth={depth}&norm=none&residual=none&activation=tanh&init=xavier",
        panels=[panel(GRAD_Y, log=True), panel(STREAM_Y, log=True)],
        series=[
            series(0, "grad_norm", NAMES["neither"], COLORS["neither"]),
            series(1, "grad_norm", NAMES["shortcut"], COLORS["shortcut"]),
            series(0, "act_norm", NAMES["neither"], COLORS["neither"], panel=1),
            series(1, "act_norm", NAMES["shortcut"], COLORS["shortcut"], panel=1),
        ],
    )


def live_option(depth: int) -> dict[str, Any]:
    """The live slide at another depth: the chain product without the shortcut, the explosion with it."""
    overflows = depth >= OVERFLOWS_FROM
    short_en = (
        "the gradient overflows float32 on its way down ({g_short})"
        if overflows
        else "block 1 gets {g_short|3}× the gradient: it explodes"
    )
    short_zh = (
        "梯度在回传途中超出 float32 的范围（{g_short}）"
        if overflows
        else "第 1 块的梯度是顶部的 {g_short|3} 倍：爆炸了"
    )
    return option(
        str(depth),
        (str(depth), str(depth)),  # the control's label names the unit
        live_chart(depth),
        claim(
            (
                f"No shortcut: block 1 gets {{plain|3}}× block {depth}'s gradient, ×{{factor|3}} per block. "
                f"Shortcut, no norm: the stream grows ×{{n_short|3}} and {short_en}.",
                f"无捷径：第 1 块的梯度是第 {depth} 块的 {{plain|3}} 倍，每块乘以 {{factor|3}}。"
                f"有捷径、无归一化：残差流变为 {{n_short|3}} 倍，{short_zh}。",
            ),
            {
                "plain": read(0, "summary.grad_survival"),
                "factor": op("root", "plain", n=depth - 1),
                "g_short": read(1, "summary.grad_survival"),
                "n_short": read(1, "summary.norm_growth"),
            },
            [
                check("plain", "<", 0.05),
                check("factor", "between", [0.5, 0.95]),
                check("n_short", ">", 10.0),
                check("g_short", "null") if overflows else check("g_short", ">", 1e4),
            ],
        ),
    )


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
        "(the stream's size): slide {slide:norm-collapse} adds the norm alone, and both together, once LayerNorm is taught. Seeds 1–3 tell the same story "
        "(block 1 gets 4.5×10⁻¹² to 4.2×10⁻¹¹ of the gradient without the shortcut; with it the stream grows "
        "×1.1×10¹⁴ to ×6.6×10¹⁴). GPT-2 avoids the explosion without a norm "
        "in the stream by starting every branch small; with small branches (DeepNorm's initialisation) the shortcut "
        "alone keeps the gradient near 1 (try it in the explorer: init = deepnorm).",
        "从右往左读左图。捷径修好了一种失效（梯度消失），却暴露出另一种（残差流的大小）：讲完 LayerNorm 之后，第 {slide:norm-collapse} 页只加归一化，并与两者都加的情形对比。"
        "种子 1–3 的结论相同（没有捷径时第 1 块的梯度只剩 4.5×10⁻¹² 到 4.2×10⁻¹¹；有捷径时残差流变为 1.1×10¹⁴ 到 6.6×10¹⁴ 倍）。"
        "GPT-2 让每个分支从很小的值开始，以此避免爆炸；分支初始很小时（DeepNorm 的初始化），只靠捷径也能让梯度保持在 1 附近"
        "（可在探索器中试：init = deepnorm）。",
    ),
    live_chart(96),
    claim(
        (
            "No shortcut: block 1 gets {plain|3}× block 96's gradient (×{factor|3} a block), the stream "
            "×{n_plain|3}. Shortcut, no norm: the stream grows ×{n_short|3}; block 1's gradient: {g_short} in "
            "float32. Both: tokens aligned (cosine {c_plain|3}, {c_short|3}).",
            "无捷径：第 1 块的梯度是第 96 块的 {plain|3} 倍（每块乘以 {factor|3}），残差流变为 {n_plain|3} 倍。"
            "有捷径、无归一化：残差流变为 {n_short|3} 倍；第 1 块的梯度在 float32 中{g_short}。"
            "两者的词元都对齐了（余弦相似度 {c_plain|3}、{c_short|3}）。",
        ),
        {
            "plain": read(0, "summary.grad_survival"),
            "factor": op("root", "plain", n=95),
            "n_plain": read(0, "summary.norm_growth"),
            "g_short": read(1, "summary.grad_survival"),
            "n_short": read(1, "summary.norm_growth"),
            "c_plain": read(0, "layers[-1].token_cosine"),
            "c_short": read(1, "layers[-1].token_cosine"),
        },
        [
            check("plain", "<", 1e-9),
            check("factor", "between", [0.5, 0.95]),
            check("n_plain", "<", 1e-6),
            check("g_short", "null"),
            check("n_short", ">", 1e6),
            check("c_plain", ">", 0.999),
            check("c_short", ">", 0.999),
        ],
    ),
    predict=(
        "Predict first: 96 blocks with the shortcut and no norm. At block 1, does the gradient vanish, stay near "
        "block 96's, or blow up?",
        "先预测：96 块、有捷径、无归一化。第 1 块的梯度会消失、与第 96 块相近，还是变得极大？",
    ),
)
# Try it: the same two stacks at other depths, each with a claim of its own (the default, 96, is the slide's own).
LIVE["try_it"] = try_it(
    ("Blocks", "块数"),
    [live_option(depth) for depth in TRY_DEPTHS[:-1]] + [option("96", ("96", "96"), LIVE["chart"], LIVE["claim"])],
    "96",
)

COLLAPSE_SOURCES = [*(request("norm", seed) for seed in SEEDS), request("both")]
BOTH = len(SEEDS)  # the source of "both", after the seeds of "norm"
COLLAPSE = slide(
    "norm-collapse",
    ("A norm in every block is not enough", "每块都有归一化，还不够"),
    (
        "A LayerNorm in front of every block, no shortcut: x ← f(LN(x)). Four random seeds. The gradient no longer "
        "vanishes, but whether it grows or shrinks toward the input depends on the seed. What fails on every seed: all "
        "tokens end up pointing the same way, so the model can no longer tell them apart.",
        "每块前面都有一个 LayerNorm、没有捷径：x ← f(LN(x))。四个随机种子。梯度不再消失，但越靠近输入是变大还是变小，"
        "取决于随机种子。每个种子都出现的失效是：所有词元最后都指向同一个方向，模型再也分不清它们。",
    ),
    (
        "Claim only what holds on every seed: the direction of the gradient does not (seed 0 shrinks it, seed 2 grows "
        "it), the collapse does. This is not Pre-LN: Pre-LN is x + f(LN(x)), with the shortcut. The norm does hold the "
        "stream's size here (the caption's range), and still the tokens collapse. Token collapse (rank collapse): Dong "
        "et al. 2021, 'Attention is not all you need'. Slide {slide:train-shortcut} shows the consequence: such a model does not learn.",
        "只讲对每个种子都成立的结论：梯度的方向不成立（种子 0 让它变小，种子 2 让它变大），坍缩成立。这不是 Pre-LN："
        "Pre-LN 是带捷径的 x + f(LN(x))。这里归一化确实管住了残差流的大小（见说明文字中的范围），词元却照样坍缩。"
        "词元坍缩（秩坍缩）：Dong 等 2021，《Attention is not all you need》。第 {slide:train-shortcut} 页展示后果：这样的模型学不会。",
    ),
    chart(
        "layers",
        ("Gradient (left) and token similarity (right)", "梯度（左）与词元相似度（右）"),
        COLLAPSE_SOURCES,
        "/gradients?depth=96&residual=none&activation=tanh&init=xavier",
        panels=[panel(GRAD_Y, log=True), panel(COSINE_Y, range=[0, 1.05])],
        series=[
            *(
                series(
                    i,
                    field,
                    # one legend entry for the four seeds (the deck draws a name once): five rows crowd a 720p slide
                    (f"{NAMES['norm'][0]}, seeds {SEED_SPAN}", f"{NAMES['norm'][1]}，种子 {SEED_SPAN}"),
                    COLORS["norm"],
                    dash,
                    panel=p,
                )
                for p, field in enumerate(("grad_norm", "token_cosine"))
                for i, (s, dash) in enumerate(zip(SEEDS, ("solid", "dash", "dot", "dashdot"), strict=True))
            ),
            series(BOTH, "grad_norm", (f"{NAMES['both'][0]}, seed 0", f"{NAMES['both'][1]}，种子 0"), COLORS["both"]),
            series(
                BOTH,
                "token_cosine",
                (f"{NAMES['both'][0]}, seed 0", f"{NAMES['both'][1]}，种子 0"),
                COLORS["both"],
                panel=1,
            ),
        ],
    ),
    claim(
        (
            "No shortcut, seeds 0–3: block 1's gradient is {g_low|3}× to {g_high|3}× block 96's; the stream stays "
            "within ×{n_low|2} to ×{n_high|2} of block 1; tokens collapse (cosine > 0.9999 from block 16 on, "
            "{c_norm|4} at 96). With the shortcut: cosine {c_both|3}, gradient ×{g_both|3}.",
            "有 LayerNorm、无捷径，种子 0–3：第 1 块的梯度是第 96 块的 {g_low|3} 到 {g_high|3} 倍；"
            "残差流保持在第 1 块的 {n_low|2} 到 {n_high|2} 倍之间；词元坍缩（从第 16 块起余弦相似度都超过 0.9999，"
            "第 96 块为 {c_norm|4}）。有捷径时：余弦相似度 {c_both|3}，梯度比为 {g_both|3}。",
        ),
        {
            **{f"g{i}": read(i, "summary.grad_survival") for i in range(len(SEEDS))},
            "grads": {"sources": list(range(len(SEEDS))), "path": "summary.grad_survival"},
            "g_low": op("min", "grads"),
            "g_high": op("max", "grads"),
            "growths": {"sources": list(range(len(SEEDS))), "path": "summary.norm_growth"},
            "n_low": op("min", "growths"),
            "n_high": op("max", "growths"),
            "after": {"sources": list(range(len(SEEDS))), "path": "layers[15:].token_cosine"},
            "collapsed": op("min", "after"),
            "gap": op("one_minus", "collapsed"),
            "c_norm": read(0, "layers[-1].token_cosine"),
            "c_both": read(BOTH, "layers[-1].token_cosine"),
            "g_both": read(BOTH, "summary.grad_survival"),
        },
        [
            check("grads", "between", [1e-3, 1e3]),
            check("growths", "between", [0.5, 2.0]),
            check("after", ">", 0.9999),  # every block from 16 on, every seed
            check("c_both", "<", 0.9),
            check("g_both", "between", [1.0, 10.0]),
        ],
    ),
)

BOTH_SOURCES = [request("both", seed) for seed in SEEDS]
# The laws fitted on the server to each seed's stream (POST /api/laws, app/experiments/laws.py), after the traces.
LAW_SOURCES = [src.laws(reference("both", seed)) for seed in SEEDS]
FIRST_LAW = len(BOTH_SOURCES)
LAW_INDICES = list(range(FIRST_LAW, FIRST_LAW + len(SEEDS)))
# Drawn for seed 0, each from ‖x₀‖: Xiong et al.'s √(‖x₀‖² + c·l), a line, the best power, and nothing fitted.
FIT_LAWS = ("sqrt", "line", "power", "independent")


def _law_values(seed_index: int) -> dict[str, Any]:
    """The error of each law fitted to one seed's stream, the best power's p, and the unfitted curve's error."""
    at = FIRST_LAW + seed_index
    return {
        **{f"e_{law}{seed_index}": read(at, f"fits.{law}.error") for law in ("sqrt", "line", "power")},
        f"p{seed_index}": read(at, "fits.power.p"),
        f"e_independent{seed_index}": read(at, "independent.error"),
    }


SNOWBALL = slide(
    "snowball",
    ("The snowball: every block adds to the stream", "滚雪球：每个块都往残差流上叠加"),
    (
        "With the shortcut and a LayerNorm in front of each branch (Pre-LN), nothing shrinks the stream: every block "
        "adds its output on top. How fast does it grow? Every curve starts at the embedding's ‖x₀‖: √(‖x₀‖² + c·l), "
        "a line, the best power, and one with nothing fitted.",
        "有捷径、每个分支前有 LayerNorm（Pre-LN）时，没有东西让残差流变小：每个块都把输出叠加上去。它长得有多快？"
        "每条曲线都从嵌入层的 ‖x₀‖ 出发：√(‖x₀‖² + c·l)、直线、最佳幂律，以及一条什么都不拟合的曲线。",
    ),
    (
        "Pre-LN at initialisation (Xiong et al. 2020, lemma 2) predicts ‖xₗ‖² ≈ ‖x₀‖² + c·l if every update is "
        "independent of the stream: the black dashed curve, its one constant c fitted. This is a model at "
        "initialisation. The green dotted curve fits nothing: it adds the squares of the blocks' own measured outputs, "
        "√(‖x₀‖² + Σ‖fₗ‖²), as if they were independent; slide {slide:increments} shows how far that assumption holds. "
        "'Nearer ½ than 1' is about the exponent p of the best power (‖x₀‖^(1/p) + c·l)^p: say 'a power with p "
        "about 0.5 to 0.65', not 'exactly √l'. Every fit starts at ‖x₀‖, so no curve dips below the embedding.",
        "初始化时的 Pre-LN（Xiong 等 2020，引理 2）在每次更新都与残差流无关时预测 ‖xₗ‖² ≈ ‖x₀‖² + c·l：黑色虚线，"
        "只拟合一个常数 c。这是初始化时的模型。绿色点线什么都不拟合：它把各块实测输出的平方加起来，"
        "√(‖x₀‖² + Σ‖fₗ‖²)，就好像它们彼此独立；第 {slide:increments} 页说明这个假设在多大程度上成立。"
        "“更接近 ½ 而不是 1”说的是最佳幂律 (‖x₀‖^(1/p) + c·l)^p 的指数 p：应该说“指数约为 0.5 到 0.65 的幂律”，"
        "而不是“恰好是 √l”。每条拟合曲线都从 ‖x₀‖ 出发，所以没有曲线会低于嵌入层。",
    ),
    chart(
        "layers",
        ("Stream norm, LayerNorm + shortcut", "残差流范数：LayerNorm + 捷径"),
        [*BOTH_SOURCES, *LAW_SOURCES],
        "/norms?depth=96&activation=tanh&init=xavier",
        panels=[panel(STREAM_Y)],
        series=[
            series(i, "act_norm", seed_label(s), color, dash)
            for i, (s, color, dash) in enumerate(zip(SEEDS, SEED_COLORS, SEED_DASHES, strict=True))
        ],
        overlays=[{"type": "law_fit", "source": FIRST_LAW, "law": law} for law in FIT_LAWS],
    ),
    claim(
        (
            "Seed 0: ×{growth0|3} from block 1 to 96. Error: √(‖x₀‖² + c·l) {e_sqrt0|3}, line {e_line0|3}, best "
            "power p = {p0|2}: {e_power0|3}; nothing fitted, √(‖x₀‖² + Σ‖fₗ‖²): {e_independent0|3}. Seeds 0–3: √ "
            "beats the line; best p {p_low|2}–{p_high|2}, nearer ½ than 1.",
            "种子 0：从第 1 块到第 96 块变为 {growth0|3} 倍。误差：√(‖x₀‖² + c·l) 为 {e_sqrt0|3}，直线为 {e_line0|3}，"
            "最佳幂律 p = {p0|2} 时为 {e_power0|3}；什么都不拟合的 √(‖x₀‖² + Σ‖fₗ‖²) 为 {e_independent0|3}。"
            "种子 0–3：√ 都胜过直线；最佳 p 为 {p_low|2}–{p_high|2}，更接近 ½ 而不是 1。",
        ),
        {
            "growth0": read(0, "summary.norm_growth"),
            **{name: spec for i in range(len(SEEDS)) for name, spec in _law_values(i).items()},
            "ps": {"sources": LAW_INDICES, "path": "fits.power.p"},
            "p_low": op("min", "ps"),
            "p_high": op("max", "ps"),
            "e_sqrts": {"sources": LAW_INDICES, "path": "fits.sqrt.error"},
            "e_lines": {"sources": LAW_INDICES, "path": "fits.line.error"},
            "e_unfitted": {"sources": LAW_INDICES, "path": "independent.error"},
            "sqrt_wins": op("ratio", ["e_lines", "e_sqrts"]),
            "unfitted_wins": op("ratio", ["e_lines", "e_unfitted"]),
        },
        [
            check("growth0", "between", [3.0, 30.0]),
            check("ps", "between", [0.25, 0.75]),  # nearer ½ than 1, on every seed
            check("sqrt_wins", ">", 1.0),  # √(‖x₀‖² + c·l) beats the line, on every seed
            check("unfitted_wins", ">", 1.0),  # the curve with nothing fitted beats the fitted line, on every seed
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
        "A model at initialisation. Each branch sees a normalized input, so every ‖fₗ‖ stays within a factor of two "
        "from block 1 to 96 on every seed: the sum of squares grows like l, which is why the stream grows like a power "
        "and not exponentially (compare the shortcut without a norm). The ratio ≠ 1 is the cross terms 2⟨fⱼ, fₖ⟩ "
        "between one token's own increments (and with x₀): they add or remove up to about 15% of ‖x₉₆‖², with a "
        "sign that changes from seed to seed. That is why the best exponent is near ½ but not ½. The right panel "
        "shows another alignment, between different tokens: it grows too, but it is not what the ratio measures.",
        "这是初始化时的模型。每个分支看到的是归一化后的输入，所以每个种子从第 1 块到第 96 块每个 ‖fₗ‖ 的大小都在两倍范围之内："
        "平方和按 l 增长，这就是残差流按幂律而不是指数增长的原因（对比没有归一化的捷径）。比值不等于 1 来自交叉项 2⟨fⱼ, fₖ⟩："
        "同一个词元自己的各个增量之间（以及与 x₀ 之间）并不独立，它们让 ‖x₉₆‖² 增加或减少约 15%，正负随种子而变。"
        "所以最佳指数接近 ½ 却不等于 ½。右图是另一种对齐，发生在不同词元之间：它也在增长，但不是这个比值所度量的东西。",
    ),
    chart(
        "layers",
        ("Increment size ‖fₗ‖ (left) and token similarity (right)", "增量大小 ‖fₗ‖（左）与词元相似度（右）"),
        BOTH_SOURCES,
        "/norms?depth=96&activation=tanh&init=xavier",
        panels=[panel(("Increment ‖fₗ‖", "增量 ‖fₗ‖"), range=[0, 12]), panel(COSINE_Y, range=[0, 1.05])],
        series=[
            series(i, field, seed_label(s), color, dash, panel=p)
            for p, field in enumerate(("branch_norm", "token_cosine"))
            for i, (s, color, dash) in enumerate(zip(SEEDS, SEED_COLORS, SEED_DASHES, strict=True))
        ],
    ),
    claim(
        (
            "Seed 0: ‖x₉₆‖² = {actual0|4} against ‖x₀‖² + Σ‖fₗ‖² = {independent0|4}, ratio {r0|3}; seeds 1–3: "
            "{r1|3}, {r2|3}, {r3|3}. Every ‖fₗ‖ on every seed is between {f_low|2} and {f_high|2}. Between tokens: "
            "cosine {cos1|2} at block 1, {cos96|2} at block 96.",
            "种子 0：‖x₉₆‖² = {actual0|4}，而 ‖x₀‖² + Σ‖fₗ‖² = {independent0|4}，比值 {r0|3}；种子 1–3：{r1|3}、"
            "{r2|3}、{r3|3}。每个种子的每个 ‖fₗ‖ 都在 {f_low|2} 到 {f_high|2} 之间。不同词元之间：余弦相似度第 1 块为 "
            "{cos1|2}，第 96 块为 {cos96|2}。",
        ),
        {
            **{name: spec for i in range(len(SEEDS)) for name, spec in _energy_values(i).items()},
            "f_all": {"sources": list(range(len(SEEDS))), "path": "layers[*].branch_norm"},
            "f_low": op("min", "f_all"),
            "f_high": op("max", "f_all"),
            "f_spread": op("ratio", ["f_high", "f_low"]),
            "cos1": read(0, "layers[0].token_cosine"),
            "cos96": read(0, "layers[-1].token_cosine"),
        },
        [
            *(check(f"r{i}", "between", [0.75, 1.33]) for i in range(len(SEEDS))),
            check("f_low", ">", 4.0),
            check("f_high", "<", 16.0),
            check("f_spread", "<", 2.0),  # "within a factor of two", on every seed
            check("cos96", ">", 0.5),
        ],
    ),
)

SLIDES = [LIVE, COLLAPSE]
SNOWBALL_SLIDES = [SNOWBALL, ENERGY]
