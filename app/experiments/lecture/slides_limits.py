"""The summaries after the first: where the norm sits and what warm-up does (the learning-rate × warm-up grid's
recorded losses), then the two walls. Each cell re-sends its own slide's requests and shows that slide's value with
its digits (slides_overview.summary_cells), so a summary cannot disagree with the slide it summarizes."""

from __future__ import annotations

from typing import Any

from .build import chart, check, claim, pair, slide
from .reference import departs
from .slides_overview import Origin, summary_cells

MEASURED = [{"label": pair("Measured", "实测")}]

PLACEMENT_CELLS: list[tuple[tuple[str, str], list[Origin]]] = [
    (("Post-LN: gradient, block 1 ÷ block 96", "Post-LN：梯度，第 1 块 ÷ 第 96 块"), [("post-vs-pre-grad", "post")]),
    (("Pre-LN: gradient, block 1 ÷ block 96", "Pre-LN：梯度，第 1 块 ÷ 第 96 块"), [("post-vs-pre-grad", "pre")]),
    (("Post-LN, lr 0.001, no warm-up: loss", "Post-LN，学习率 0.001，不预热：损失"), [("lr-warmup", "post_cold")]),
    (
        ("Post-LN, lr 0.001, with warm-up: loss", "Post-LN，学习率 0.001，预热后：损失"),
        [("lr-warmup", ("warm_low", "warm_high"))],
    ),
    (("Pre-LN, lr ≥ 0.001: loss, at most", "Pre-LN，学习率 ≥ 0.001：损失至多"), [("lr-warmup", "pre_high")]),
]
WALLS_CELLS: list[tuple[tuple[str, str], list[Origin]]] = [
    (("float16, no norm: the block that overflows", "float16、无归一化：溢出的块"), [("float16", "layer")]),
    (("Softmax at s = 316: the top weight", "s = 316 时的 softmax：最大权重"), [("softmax", "pL")]),
    (
        ("Softmax at s = 316: ‖J‖ (the gradient through it)", "s = 316 时的 softmax：‖J‖（穿过它的梯度）"),
        [("softmax", "jL")],
    ),
]

# Where the real models are installed (slides_real): the massive activation beside the attention sink, a row copied
# from slide real-sink (the last summary before the references).
REAL_CELL: tuple[tuple[str, str], list[Origin]] = (
    (
        "SmolLM2: attention on token 1, later blocks ÷ the massive activation's block, at least",
        "SmolLM2：首个词元上的注意力，之后各块 ÷ 巨大激活那一块，至少",
    ),
    [("real-sink", "gap")],
)
REAL_STATEMENT = (
    " SmolLM2: later blocks put ≥ {r3c0|2}× the attention on token 1 that the massive activation's block does: "
    "related curves, not one.",
    "SmolLM2：之后各块放在首个词元上的注意力 ≥ 巨大激活那一块的 {r3c0|2} 倍：两条曲线相关，但不是同一条。",
)

REAL_LEAD = (
    " The last row is a real model, SmolLM2: at the block where its massive activation appears, the attention on "
    "the first token drops.",
    "最后一行来自真实模型 SmolLM2：在它的巨大激活出现的那一块，首个词元上的注意力骤降。",
)


def limits_slide(slides: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the norm sits (gradients at initialisation) and warm-up (losses after training, recorded)."""
    copier, cells = summary_cells(slides, PLACEMENT_CELLS)
    return slide(
        "summary-limits",
        ("Summary: where the norm sits, and warm-up", "总结：归一化的位置与预热"),
        (
            "What the table shows: with the norm after the add (Post-LN) the gradient fades on its way down, and in "
            "training warm-up rescues Post-LN only partly; with the norm before the branch (Pre-LN) the gradient "
            "arrives, and the model learns.",
            "表格显示：归一化放在相加之后（Post-LN）时，梯度在向下传的途中衰减，训练时预热只能部分地救回它；"
            "放在分支之前（Pre-LN）时，梯度能传到底，模型学得会。",
        ),
        (
            "Each number is the one its slide showed, from the same requests: slide {slide:post-vs-pre-grad} for the "
            "gradients (the 2017 recipe, 96 blocks, at initialisation), slide {slide:lr-warmup} for the losses after "
            "300 steps (12 blocks; recorded ahead of time by tools/lr_warmup_grid.py, not trained now: live training "
            "is on slides {slide:train-shortcut} and {slide:post-vs-pre-train}, when you press T). The two walls follow.",
            "每个数字都来自对应页面的同一组请求：梯度见第 {slide:post-vs-pre-grad} 页（2017 配方，96 块，初始化时），"
            "300 步后的损失见第 {slide:lr-warmup} 页（12 块；由 tools/lr_warmup_grid.py 事先记录，不是现在训练的："
            "现场训练在第 {slide:train-shortcut}、{slide:post-vs-pre-train} 页，按 T 时进行）。两堵墙在下一页。",
        ),
        chart(
            "table",
            ("Where the norm sits, and warm-up (losses recorded)", "归一化的位置与预热（损失为记录值）"),
            copier.sources,
            "/compare?variants=post_ln,pre_ln_2017&depth=96",
            rows=[pair(*label) for label, _ in PLACEMENT_CELLS],
            columns=MEASURED,
            cells=cells,
        ),
        claim(
            (
                "Gradient at block 1 ÷ 96: Post-LN {r0c0|3}, Pre-LN {r1c0|3}. Loss after 300 steps at lr 0.001, "
                "recorded: Post-LN {r2c0|3} without warm-up, {r3c0|3} to {r3c0u|3} with it; Pre-LN at most {r4c0|2}.",
                "第 1 块 ÷ 第 96 块的梯度：Post-LN 为 {r0c0|3}，Pre-LN 为 {r1c0|3}。学习率 0.001 时 300 步后的损失"
                "（记录值）：Post-LN 不预热为 {r2c0|3}，预热后为 {r3c0|3} 到 {r3c0u|3}；Pre-LN 至多为 {r4c0|2}。",
            ),
            copier.values,
            [
                check("r0c0", "<", 0.5),
                check("r1c0", "between", [0.5, 10.0]),
                check("r2c0", ">", 2.5),  # no warm-up: at the uniform guess (ln 15 = 2.71)
                check("r3c0u", "<", 2.2),  # warm-up helps ...
                check("r3c0", ">", 1.0),  # ... partly
                check("r4c0", "<", 0.05),
            ],
        ),
        departs=departs(
            "the 2017 recipe, 96 blocks (gradients) and 12 blocks (losses).",
            "2017 配方，96 块（梯度）与 12 块（损失）。",
        ),
    )


def walls_slide(slides: list[dict[str, Any]]) -> dict[str, Any]:
    """The two walls an unnormalized stream runs into, each cell re-sending its slide's requests; a line on the real
    models' attention sink where the deck has their slides."""
    sink = next((s for s in slides if s["id"] == "real-sink"), None)
    rows = WALLS_CELLS + ([REAL_CELL] if sink is not None else [])
    copier, cells = summary_cells(slides, rows)
    softmax = next(s for s in slides if s["id"] == "softmax")
    copier.copy(softmax, "s_last", "s_last")  # the rows name s = 316: the softmax slide's largest scale
    statement = (
        "float16 overflows at block {r0c0|0}. At s = 316 softmax's top weight is {r1c0|6} and ‖J‖ = {r2c0|3}.",
        "float16 在第 {r0c0|0} 块溢出。s = 316 时 softmax 的最大权重为 {r1c0|6}，‖J‖ = {r2c0|3}。",
    )
    checks = [
        check("r0c0", "between", [1, 96]),
        check("r1c0", ">", 0.999999),
        check("r2c0", "<", 1e-100),
        check("s_last", "close", 10**2.5, rel=1e-6),
    ]
    if sink is not None:
        statement = (statement[0] + REAL_STATEMENT[0], statement[1] + REAL_STATEMENT[1])
        checks.append(check("r3c0", ">", 3.0))  # the same requests and value as slide real-sink shows
    return slide(
        "summary-walls",
        ("Summary: the two walls", "总结：两堵墙"),
        (
            "What the table shows: without a norm the stream overflows float16 within a few dozen blocks, and a large "
            "scale saturates softmax so that no gradient passes through it."
            + (REAL_LEAD[0] if sink is not None else ""),
            "表格显示：没有归一化时，残差流在几十块之内就超出 float16 的范围；缩放很大时 softmax 饱和，梯度无法穿过它。"
            + (REAL_LEAD[1] if sink is not None else ""),
        ),
        (
            "Each number is the one its slide showed, from the same requests: slide {slide:float16} for float16 (48 "
            "blocks, GELU, no norm), slide {slide:softmax} for softmax (a row of logits, scaled).",
            "每个数字都来自对应页面的同一组请求：float16 见第 {slide:float16} 页（48 块、GELU、无归一化），softmax 见第 "
            "{slide:softmax} 页（一组放大的 logits）。",
        ),
        chart(
            "table",
            ("The two walls", "两堵墙"),
            copier.sources,
            "/precision",
            rows=[pair(*label) for label, _ in rows],
            columns=MEASURED,
            cells=cells,
        ),
        claim(statement, copier.values, checks),
        departs=departs(
            "each row its own slide's model: a no-norm stack (float16), logits (softmax)"
            + ("; the last row: pretrained SmolLM2." if sink is not None else "."),
            "每一行用它所在页面的模型：无归一化的网络（float16）、一组 logits（softmax）"
            + ("；最后一行：预训练的 SmolLM2。" if sink is not None else "。"),
        ),
    )
