"""The frame of the deck: the title slide, the alternatives (read from the registries) and the summary."""

from __future__ import annotations

import re
from typing import Any

from ... import i18n
from ...config import PRESETS
from . import sources as src
from .build import chart, check, claim, const, op, pair, read, slide
from .reference import departs, reference
from .slides_reference import SUMMARY_CELLS

ALTERNATIVES_DEPTH = 96
# Residual kinds that keep an ungated identity path from every block to the input (x + ..., x + a·f, DenseFormer's
# averages start as the identity); a gate (Highway) or no shortcut at all does not.
IDENTITY_PATHS = ("identity", "rezero", "dense")
EXTRA_LABELS = {
    "highway": ("Highway: gated shortcut", "Highway：带门控的捷径"),
    "dense": ("DenseFormer-style: weighted sum of all earlier blocks", "DenseFormer 式：之前所有块的加权和"),
    "parallel": ("Parallel block: attention and FFN side by side", "并行块：注意力与前馈并排"),
    "scalenorm": ("ScaleNorm: g·x/‖x‖", "ScaleNorm：g·x/‖x‖"),
    "batchnorm": ("BatchNorm instead of LayerNorm", "用 BatchNorm 代替 LayerNorm"),
    "groupnorm": ("GroupNorm instead of LayerNorm", "用 GroupNorm 代替 LayerNorm"),
}


def title_slide(count: int) -> dict[str, Any]:
    return slide(
        "title",
        ("Residual connections and normalization", "残差连接与归一化"),
        (
            "Why a 96-block Transformer trains at all: two stabilizers, each fixing one failure. One reference model "
            "throughout (96 blocks, d_model 64, tanh, Xavier, seed 0); only the shortcut and a Pre-LN LayerNorm switch on "
            "and off. Every chart is computed live by PyTorch.",
            "为什么 96 块的 Transformer 能训练起来：两种稳定机制，各自解决一种失效。全程使用同一个参考模型（96 块、d_model 64、"
            "tanh、Xavier、种子 0），只打开或关闭捷径和 Pre-LN LayerNorm。本课件的每张图都由 PyTorch 现场计算，每个结论都有测试检查。",
        ),
        (
            "Why this reference model: with tanh and Xavier weights the plain stack shows the chain product live "
            "(a factor a little below 1 per block, a tiny but nonzero gradient at block 1); GELU or ReLU with Xavier "
            "round it to exactly 0. Slides on other settings say so first, in orange, under their title. The plan: the "
            "problem (the chain product), the first stabilizer (the shortcut), the two walls it runs into, the second "
            "stabilizer (normalization) and where to put it, the alternatives, a summary whose numbers are the slides' own.",
            "为什么选这个参考模型：用 tanh 和 Xavier 权重时，普通堆叠能现场展示链式乘积（每块乘一个略小于 1 的因子，"
            "第 1 块的梯度极小但不为 0）；换成 GELU 或 ReLU 加 Xavier，它会被舍入为 0。使用其他设置的页面会在标题下方用橙色"
            "首先注明。安排：问题（链式乘积），第一种稳定机制（捷径），它遇到的两堵墙，第二种稳定机制（归一化）及其位置，"
            "其他方案，以及一页总结，其中的数字就是各页自己的数字。",
        ),
        None,
        claim(
            (
                "{slides|0} slides. Each claim below is checked by a test against the numbers the models produce.",
                "共 {slides|0} 页。之后每一页的结论，都由测试拿模型实际算出的数字来核对。",
            ),
            {"slides": const(count)},
            [check("slides", ">", 15)],
        ),
    )


def alternative_label(item: dict[str, Any]) -> dict[str, str]:
    if "preset" in item:
        preset = PRESETS[item["preset"]]
        return pair(preset["name"], preset["name_zh"])
    if item["key"] in EXTRA_LABELS:
        return pair(*EXTRA_LABELS[item["key"]])
    ((axis, value),) = item["patch"].items()
    en, zh = i18n.STRINGS.get(f"enum.{axis}.{value}", (str(value), str(value)))
    return pair(f"GPT-2 + {axis}: {en}", f"GPT-2 + {axis}：{zh}")


def alternatives_slide() -> dict[str, Any]:
    items = src.alternatives(ALTERNATIVES_DEPTH)
    kept = [i for i, item in enumerate(items) if item["config"].residual in IDENTITY_PATHS]
    lost = [i for i, item in enumerate(items) if item["config"].residual not in IDENTITY_PATHS]
    return slide(
        "alternatives",
        ("Alternatives", "其他方案"),
        (
            "Other ways to keep 96 blocks trainable: gate the shortcut (Highway), start every branch at zero (ReZero), "
            "up-weight the shortcut (DeepNorm), norms on both sides (Sandwich), a squashing function instead of a norm "
            "(DyT). What the ones that work share: an ungated identity path.",
            "让 96 块保持可训练的其他办法：给捷径加门控（Highway）、让每个分支从零开始（ReZero）、放大捷径（DeepNorm）、"
            "两侧都归一化（Sandwich）、用压缩函数代替归一化（DyT）。有效的方案有一个共同点：一条不带门控的恒等通路。",
        ),
        (
            "This list is read from the engine: every preset, plus every block, norm and shortcut kind the model builds "
            "(new ones appear here by themselves). Highway's gate starts mostly closed to the branch, but it also scales "
            "the carried x by 1 − T ≈ 0.73 per unit: over 192 units nothing is left. Srivastava et al. 2015 used a "
            "stronger negative gate bias for deep nets.",
            "这个列表从引擎读取：所有预设，加上模型能构建的每种块结构、归一化和捷径（新加入的会自动出现在这里）。"
            "Highway 的门控初始时大多关向分支，但它也把携带的 x 每个单元乘以 1 − T ≈ 0.73：经过 192 个单元就什么都不剩了。"
            "Srivastava 等 2015 对深层网络用了更负的门控偏置。",
        ),
        chart(
            "bars",
            ("Gradient at block 1 ÷ block 96, per variant", "第 1 块梯度 ÷ 第 96 块梯度：每种变体"),
            [src.trace(item["config"]) for item in items],
            src.compare_link(["pre_ln", "rezero", "deepnorm"], 96),
            field="summary.grad_survival",
            labels=[alternative_label(item) for item in items],
            keys=[item["key"] for item in items],
            x=pair("Gradient at block 1 ÷ block 96 (log)", "第 1 块梯度 ÷ 第 96 块梯度（对数）"),
        ),
        claim(
            (
                "With an ungated identity path ({kept_count|0} variants), block 1 gets between {low|2}× and {high|2}× "
                "block 96's gradient. With a gate or no shortcut ({lost_count|0}): at most {lost_high|2}×.",
                "有不带门控的恒等通路时（{kept_count|0} 种变体），第 1 块收到的梯度是第 96 块的 {low|2} 到 {high|2} 倍。"
                "带门控或没有捷径时（{lost_count|0} 种）：至多 {lost_high|2} 倍。",
            ),
            {
                "kept": {"sources": kept, "path": "summary.grad_survival"},
                "low": op("min", "kept"),
                "high": op("max", "kept"),
                "kept_count": const(len(kept)),
                "lost": {"sources": lost, "path": "summary.grad_survival"},
                "lost_high": op("max", "lost"),
                "lost_count": const(len(lost)),
            },
            [check("kept", "between", [0.05, 20.0]), check("lost", "<", 1e-6)],
        ),
        departs=departs(
            "every variant on GPT-2's recipe (GELU, small initial branches).",
            "所有变体都建在 GPT-2 配方（GELU，分支初始很小）之上。",
        ),
    )


SUMMARY_COLUMNS = [
    ("Gradient block 1 ÷ 96", "梯度\n第 1 块 ÷ 第 96 块"),
    ("Stream ‖x‖ block 96 ÷ 1", "残差流 ‖x‖\n第 96 块 ÷ 第 1 块"),
    ("Cosine similarity between tokens, block 96", "词元间余弦相似度\n（第 96 块）"),
]
PLACEHOLDER_DIGITS = re.compile(r"\{(\w+)(?:\|(\d+))?\}")


def shown_digits(source_slide: dict[str, Any], name: str) -> int:
    """How many digits a slide shows for one of its values: {name|k} in its statement (3 for a bare {name})."""
    for found, digits in PLACEHOLDER_DIGITS.findall(source_slide["claim"]["statement"]["en"]):
        if found == name:
            return int(digits) if digits else 3
    raise ValueError(f"{source_slide['id']} does not show {name}")


def summary_slide(slides: list[dict[str, Any]]) -> dict[str, Any]:
    """The table of SUMMARY_CELLS: each cell re-sends its slide's request and reads the same value, same digits."""
    by_id = {s["id"]: s for s in slides}
    sources: list[dict[str, Any]] = []
    values: dict[str, Any] = {}
    cells: list[list[dict[str, Any] | None]] = []
    for r, (_, row) in enumerate(SUMMARY_CELLS):
        cells.append([])
        for c, origin in enumerate(row):
            if origin is None:
                cells[-1].append(None)
                continue
            slide_id, name = origin
            spec = by_id[slide_id]["claim"]["values"][name]
            request = by_id[slide_id]["chart"]["sources"][spec["source"]]
            if request not in sources:
                sources.append(request)
            key = f"r{r}c{c}"
            values[key] = read(sources.index(request), spec["path"])
            digits = shown_digits(by_id[slide_id], name)
            cells[-1].append({"value": key, "digits": digits, "slide": slide_id, "name": name})
    return slide(
        "summary",
        ("Summary: two stabilizers", "总结：两种稳定机制"),
        (
            "The shortcut keeps the gradient's path open: its derivative is 1 + f′. The norm keeps the stream's size in "
            "check, so nothing overflows, saturates or collapses. A deep Transformer needs both.",
            "捷径让梯度的通路保持畅通：它的导数是 1 + f′。归一化管住残差流的大小，使数值不溢出、不饱和、不坍缩。"
            "深层 Transformer 两者都需要。",
        ),
        (
            "The reference model in all four rows (96 blocks, tanh, Xavier, seed 0); only the two stabilizers change. "
            "Every number is the one its slide showed (slides 5, 6 and 8), from the same request; a blank cell is one no "
            "slide showed. 'overflow' marks a value that became inf or NaN. The norm-only gradient's direction depends "
            "on the seed (slide 6): read that cell as 'does not vanish'.",
            "四行都是参考模型（96 块、tanh、Xavier、种子 0）；只改变两种稳定机制。每个数字都来自对应页面的同一个请求，"
            "与该页显示的数字相同（第 5、6、8 页）；空白格表示没有哪一页展示过它。“溢出”表示数值变成了 inf 或 NaN。"
            "只有归一化时梯度的方向取决于随机种子（第 6 页）：这一格应读作“不消失”。",
        ),
        chart(
            "table",
            ("What each stabilizer fixes: the reference model", "每种稳定机制解决了什么：参考模型"),
            sources,
            src.trace_link("/gradients", reference("both")),
            rows=[pair(*label) for label, _ in SUMMARY_CELLS],
            columns=[{"label": pair(*label)} for label in SUMMARY_COLUMNS],
            cells=cells,
        ),
        claim(
            (
                "Neither: the gradient keeps {r0c0|3} of itself. Shortcut only: the stream grows ×{r1c1|3}, the gradient: "
                "{r1c0}. Norm only: tokens collapse (cosine similarity {r2c2|4}). Both: gradient ×{r3c0|3}, stream "
                "×{r3c1|3}, cosine similarity {r3c2|3}.",
                "都没有：梯度只剩 {r0c0|3}。只有捷径：残差流变为 {r1c1|3} 倍，梯度：{r1c0}。只有归一化：词元坍缩"
                "（余弦相似度 {r2c2|4}）。两者都有：梯度 ×{r3c0|3}，残差流 ×{r3c1|3}，余弦相似度 {r3c2|3}。",
            ),
            values,
            [
                check("r0c0", "<", 1e-9),
                check("r1c0", "null"),
                check("r1c1", ">", 1e6),
                check("r2c2", ">", 0.999),
                check("r3c0", "between", [1.0, 10.0]),
                check("r3c1", "<", 20.0),
                check("r3c2", "<", 0.9),
            ],
        ),
    )
