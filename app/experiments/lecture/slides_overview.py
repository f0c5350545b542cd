"""The frame of the deck: the title slide, the alternatives (read from the registries) and the summary."""

from __future__ import annotations

import re
from typing import Any

from ...config import PRESETS
from . import sources as src
from .build import chart, check, claim, const, op, pair, slide
from .describe import option_label
from .reference import NAMES, departs, reference

ALTERNATIVES_DEPTH = 96
# Residual kinds that keep an ungated identity path from every block to the input (x + ..., x + a·f, DenseFormer's
# averages start as the identity); a gate (Highway) or no shortcut at all does not.
IDENTITY_PATHS = ("identity", "rezero", "dense")
# Placements that put a norm on that path itself, after the add (Post-LN everywhere, Mix-LN in its first blocks): the
# gradient then passes through a norm at every such block (the post-vs-pre slides).
NORM_ON_PATH = ("post", "mix")


# Each group in its own colour, named so in the caption: the bars tell the three groups apart at a glance.
GROUP_COLORS = {"clear": "blue", "normed": "orange", "lost": "vermillion"}


def _group(config: Any) -> str:
    """clear: an identity path no norm interrupts; normed: a norm sits on it; lost: a gate or no shortcut."""
    if config.residual not in IDENTITY_PATHS:
        return "lost"
    return "normed" if config.norm != "none" and config.norm_position in NORM_ON_PATH else "clear"


EXTRA_LABELS = {
    "highway": ("Highway: gated shortcut", "Highway：带门控的捷径"),
    "dense": ("DenseFormer (dense shortcuts)", "DenseFormer（密集捷径）"),
    "parallel": ("Parallel attention and FFN", "注意力与前馈并行"),
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
            "throughout (96 blocks, width 64, tanh, Xavier, seed 0); only the shortcut and a LayerNorm in front of each "
            "branch switch on and off. Every chart is computed live by PyTorch.",
            "为什么 96 块的 Transformer 能训练起来：两种稳定机制，各自解决一种失效。全程使用同一个参考模型（96 块、宽度 64、"
            "tanh、Xavier、种子 0），只打开或关闭捷径和每个分支前的 LayerNorm。本课件的每张图都由 PyTorch 现场计算。",
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
                "{slides|0} slides. Each slide's claim is checked against the numbers its chart shows (✓ in its footer).",
                "共 {slides|0} 页。每一页的结论都用该页图表显示的数字来核对（页脚的 ✓）。",
            ),
            {"slides": const(count)},
            [],  # nothing measured here: no ✓ on the title (a slide count is no claim)
        ),
        offline_text=(
            "Why a 96-block Transformer trains at all: two stabilizers, each fixing one failure. One reference model "
            "throughout (96 blocks, width 64, tanh, Xavier, seed 0); only the shortcut and a LayerNorm in front of each "
            "branch switch on and off. This file's charts were recorded by PyTorch when it was exported, not computed "
            "now.",
            "为什么 96 块的 Transformer 能训练起来：两种稳定机制，各自解决一种失效。全程使用同一个参考模型（96 块、宽度 64、"
            "tanh、Xavier、种子 0），只打开或关闭捷径和每个分支前的 LayerNorm。本文件中的图表是导出时由 PyTorch "
            "记录下来的，不是现在计算的。",
        ),
    )


def alternative_label(item: dict[str, Any]) -> dict[str, str]:
    if "preset" in item:
        preset = PRESETS[item["preset"]]
        return pair(preset["name"], preset["name_zh"])
    if item["key"] in EXTRA_LABELS:
        return pair(*EXTRA_LABELS[item["key"]])
    ((axis, value),) = item["patch"].items()
    en, zh = option_label(axis, value)
    return pair(f"GPT-2 + {en}", f"GPT-2 + {zh}")


def alternatives_slide() -> dict[str, Any]:
    items = src.alternatives(ALTERNATIVES_DEPTH)
    groups = {
        g: [i for i, item in enumerate(items) if _group(item["config"]) == g] for g in ("clear", "normed", "lost")
    }
    kept, normed, lost = groups["clear"], groups["normed"], groups["lost"]
    return slide(
        "alternatives",
        ("Alternatives", "其他方案"),
        (
            "Block 1's gradient ÷ block 96's, for every variant the engine builds. What keeps it near 1: an identity "
            "path that no gate closes and no norm interrupts.",
            "第 1 块的梯度 ÷ 第 96 块的梯度：引擎能构建的每种变体。让它接近 1 的，是一条既没有门控、也没有被归一化打断的恒等通路。",
        ),
        (
            "The other ways to keep 96 blocks trainable: gate the shortcut (Highway), start each branch at zero (ReZero), "
            "up-weight the shortcut (DeepNorm), norms on both sides (Sandwich), a squashing function for the norm "
            "(DyT). Post-LN puts a norm on that path; DeepNorm up-weights the shortcut to make up for it. This list is read "
            "from the engine: every preset, plus every block, norm and shortcut kind the model builds "
            "(new ones appear here by themselves). Highway's gate starts mostly closed to the branch, but it also scales "
            "the carried x by 1 − T ≈ 0.73 per unit: over 192 units nothing is left. Srivastava et al. 2015 used a "
            "stronger negative gate bias for deep nets. The papers: ReZero (Bachlechner et al. 2021), DeepNorm (Wang et "
            "al. 2022), Sandwich (Ding et al. 2021) and Peri-LN (Kim et al. 2025), Mix-LN (Li et al. 2024), DyT (Zhu et "
            "al. 2025), DenseFormer (Pagliardini et al. 2024), ScaleNorm (Nguyen & Salazar 2019), GroupNorm (Wu & He "
            "2018), BatchNorm (Ioffe & Szegedy 2015), RMSNorm (Zhang & Sennrich 2019), LayerNorm without bias (Chowdhery et al. 2022, PaLM).",
            "让 96 块保持可训练的其他办法：给捷径加门控（Highway）、让每个分支从零开始（ReZero）、放大捷径（DeepNorm）、"
            "两侧都归一化（Sandwich）、用压缩函数代替归一化（DyT）。Post-LN 把归一化放在这条通路上；DeepNorm 放大捷径来弥补。这个列表从引擎读取：所有预设，加上模型能构建的每种块结构、归一化和捷径（新加入的会自动出现在这里）。"
            "Highway 的门控初始时大多关向分支，但它也把携带的 x 每个单元乘以 1 − T ≈ 0.73：经过 192 个单元就什么都不剩了。"
            "Srivastava 等 2015 对深层网络用了更负的门控偏置。论文：ReZero（Bachlechner 等 2021）、DeepNorm（Wang 等 2022）、"
            "Sandwich（Ding 等 2021）与 Peri-LN（Kim 等 2025）、Mix-LN（Li 等 2024）、DyT（Zhu 等 2025）、DenseFormer"
            "（Pagliardini 等 2024）、ScaleNorm（Nguyen 与 Salazar 2019）、GroupNorm（Wu 与 He 2018）、BatchNorm（Ioffe 与 Szegedy 2015）、RMSNorm（Zhang 与 Sennrich 2019）、无偏置的 LayerNorm"
            "（Chowdhery 等 2022，PaLM）。",
        ),
        chart(
            "bars",
            ("Gradient at block 1 ÷ block 96, per variant", "第 1 块梯度 ÷ 第 96 块梯度：每种变体"),
            [src.trace(item["config"]) for item in items],
            src.compare_link(["pre_ln", "rezero", "deepnorm"], 96),
            field="summary.grad_survival",
            labels=[alternative_label(item) for item in items],
            keys=[item["key"] for item in items],
            colors=[GROUP_COLORS[_group(item["config"])] for item in items],
            x=pair("", ""),  # the chart's title names the ratio; one bar a row needs the axis title's height
        ),
        claim(
            (
                "An open identity path (blue, {kept_count|0} variants): block 1 gets {low|2}× to {high|2}× block 96's "
                "gradient. A norm on the path (orange, {normed_count|0}: Post-LN, DeepNorm, Mix-LN): {normed_low|2}× "
                "to {normed_high|2}×. A gate or no shortcut (red, {lost_count|0}): at most {lost_high|2}×.",
                "有既无门控、也不被归一化打断的恒等通路时（蓝色，{kept_count|0} 种变体），第 1 块收到的梯度是第 96 块的 "
                "{low|2} 到 {high|2} 倍。通路上有归一化时（橙色，{normed_count|0} 种：Post-LN、DeepNorm、Mix-LN）："
                "{normed_low|2} 到 {normed_high|2} 倍。带门控或没有捷径时（红色，{lost_count|0} 种）：至多 {lost_high|2} 倍。",
            ),
            {
                "kept": {"sources": kept, "path": "summary.grad_survival"},
                "low": op("min", "kept"),
                "high": op("max", "kept"),
                "kept_count": const(len(kept)),
                "normed": {"sources": normed, "path": "summary.grad_survival"},
                "normed_low": op("min", "normed"),
                "normed_high": op("max", "normed"),
                "normed_count": const(len(normed)),
                "lost": {"sources": lost, "path": "summary.grad_survival"},
                "lost_high": op("max", "lost"),
                "lost_count": const(len(lost)),
            },
            [
                check("kept", "between", [0.5, 20.0]),
                check("normed_low", "<", 0.2),  # Post-LN fades the gradient (post-vs-pre-grad)
                check("lost", "<", 1e-6),
            ],
        ),
        departs=departs(
            "each preset on its own recipe, every other kind on GPT-2's.",
            "每个预设用它自己的配方，其他结构用 GPT-2 配方。",
        ),
        caption_beside=True,
    )


SUMMARY_COLUMNS = [
    ("Gradient\nblock 1 ÷ 96", "梯度\n第 1 块 ÷ 第 96 块"),
    ("Stream ‖x‖\nblock 96 ÷ 1", "残差流范数\n第 96 块 ÷ 第 1 块"),
    ("Token cosine\nblock 96", "词元间余弦相似度\n第 96 块"),
]
Origin = tuple[str, str] | tuple[str, tuple[str, str]]  # (slide id, value) or (slide id, (low, high)): a seed range
# The summary table: (row label, one origin per column). Every cell is a value its slide shows; the summary re-sends
# that slide's requests and computes the same value, with the same digits. A range: where the seeds disagree.
SUMMARY_CELLS: list[tuple[tuple[str, str], list[Origin]]] = [
    (NAMES["neither"], [("live-gradient", "plain"), ("live-gradient", "n_plain"), ("live-gradient", "c_plain")]),
    (NAMES["shortcut"], [("live-gradient", "g_short"), ("live-gradient", "n_short"), ("live-gradient", "c_short")]),
    (
        (f"{NAMES['norm'][0]} (seeds 0–3)", f"{NAMES['norm'][1]}（种子 0–3）"),
        [("norm-collapse", ("g_low", "g_high")), ("norm-collapse", ("n_low", "n_high")), ("norm-collapse", "c_norm")],
    ),
    (NAMES["both"], [("norm-collapse", "g_both"), ("snowball", "growth0"), ("norm-collapse", "c_both")]),
]
PLACEHOLDER_DIGITS = re.compile(r"\{(\w+)(?:\|(\d+))?\}")


def shown_digits(source_slide: dict[str, Any], name: str) -> int:
    """How many digits a slide shows for one of its values: {name|k} in its statement (3 for a bare {name})."""
    for found, digits in PLACEHOLDER_DIGITS.findall(source_slide["claim"]["statement"]["en"]):
        if found == name:
            return int(digits) if digits else 3
    raise ValueError(f"{source_slide['id']} does not show {name}")


class _Copier:
    """Copies a slide's value (and every value it is computed from) into the summary's claim, its sources re-sent."""

    def __init__(self) -> None:
        self.sources: list[dict[str, Any]] = []
        self.values: dict[str, Any] = {}

    def source(self, request: dict[str, Any]) -> int:
        if request not in self.sources:
            self.sources.append(request)
        return self.sources.index(request)

    def copy(self, origin: dict[str, Any], name: str, key: str) -> str:
        spec = dict(origin["claim"]["values"][name])
        requests = origin["chart"]["sources"]
        if "source" in spec:
            spec["source"] = self.source(requests[spec["source"]])
        elif "sources" in spec:
            spec["sources"] = [self.source(requests[i]) for i in spec["sources"]]
        elif "of" in spec:
            of = spec["of"]
            spec["of"] = (
                [self.copy(origin, n, f"{key}_{n}") for n in of]
                if isinstance(of, list)
                else self.copy(origin, of, f"{key}_{of}")
            )
            for field in ("start", "stop"):
                if field in spec:
                    spec[field] = self.copy(origin, spec[field], f"{key}_{spec[field]}")
        self.values[key] = spec
        return key


def summary_cells(
    slides: list[dict[str, Any]], table: list[tuple[tuple[str, str], list[Origin]]] | None = None
) -> tuple[_Copier, list[list[dict[str, Any]]]]:
    by_id = {s["id"]: s for s in slides}
    copier = _Copier()
    cells: list[list[dict[str, Any]]] = []
    for r, (_, row) in enumerate(SUMMARY_CELLS if table is None else table):
        cells.append([])
        for c, (slide_id, name) in enumerate(row):
            names: tuple[str, ...] = name if isinstance(name, tuple) else (name,)
            keys = [copier.copy(by_id[slide_id], n, f"r{r}c{c}{'u' * k}") for k, n in enumerate(names)]
            digits = shown_digits(by_id[slide_id], names[0])
            cell = {"value": keys[0], "digits": digits, "slide": slide_id, "name": names[0]}
            if len(keys) == 2:  # a seed range: low – high
                cell |= {"upto": keys[-1], "name_upto": names[-1]}
            cells[-1].append(cell)
    return copier, cells


def summary_slide(slides: list[dict[str, Any]]) -> dict[str, Any]:
    """The table of SUMMARY_CELLS: each cell re-sends its slide's requests and computes the same value, same digits."""
    copier, cells = summary_cells(slides)
    return slide(
        "summary",
        ("Summary: two stabilizers", "总结：两种稳定机制"),
        (
            "What the table shows: the shortcut alone keeps the gradient's path open but lets the stream explode; a "
            "LayerNorm alone holds the stream's size, but the tokens collapse; only the two together keep the gradient, "
            "a moderate stream and tokens apart.",
            "表格显示：只有捷径时梯度的通路畅通，但残差流爆炸；只有 LayerNorm 时残差流的大小被管住，词元却坍缩了；"
            "只有两者同时存在，梯度才能保住、残差流增长适中、词元彼此分开。",
        ),
        (
            "The reference model in every row (96 blocks, tanh, Xavier; seed 0 where the seeds agree, the range over "
            "seeds 0–3 where they do not). Every number is the one its slide showed, from the same requests. "
            "'overflow' marks a value that became inf or NaN. Where the norm sits and warm-up are on the next "
            "slide ({slide:summary-limits}), the two walls after it ({slide:summary-walls}); training is on slides "
            "{slide:train-shortcut} and {slide:post-vs-pre-train}, measured when you press T there.",
            "每一行都是参考模型（96 块、tanh、Xavier；各种子结论一致时用种子 0，不一致时给出种子 0–3 的范围）。"
            "每个数字都来自对应页面的同一组请求，与该页显示的数字相同。“溢出”表示数值变成了 inf 或 NaN。"
            "归一化的位置与预热见下一页（第 {slide:summary-limits} 页），两堵墙见第 {slide:summary-walls} 页；训练见第 {slide:train-shortcut}、"
            "{slide:post-vs-pre-train} 页，在那里按 T 时实测。",
        ),
        chart(
            "table",
            ("What each stabilizer fixes", "每种稳定机制解决了什么"),
            copier.sources,
            src.trace_link("/gradients", reference("both")),
            rows=[pair(*label) for label, _ in SUMMARY_CELLS],
            columns=[{"label": pair(*label)} for label in SUMMARY_COLUMNS],
            cells=cells,
        ),
        claim(
            (
                "No shortcut: the gradient vanishes ({r0c0|3}); the shortcut alone: it overflows, the stream grows "
                "×{r1c1|3}. LayerNorm alone: stream within ×{r2c1|2}–{r2c1u|2}, tokens collapse (cosine {r2c2|4}). "
                "Both: gradient {r3c0|3}, stream ×{r3c1|3}, cosine {r3c2|3}.",
                "梯度：没有捷径时消失（{r0c0|3}），只有捷径时溢出；残差流变为 {r1c1|3} 倍。只有 LayerNorm："
                "残差流保持在 {r2c1|2}–{r2c1u|2} 倍之间，词元坍缩（余弦相似度 {r2c2|4}）。两者都有：梯度比为 {r3c0|3}，"
                "残差流变为 {r3c1|3} 倍，余弦相似度 {r3c2|3}。",
            ),
            copier.values,
            [
                check("r0c0", "<", 1e-9),
                check("r1c0", "null"),
                check("r1c1", ">", 1e6),
                *(check(f"r{r}c2", ">", 0.999) for r in range(3)),  # every row without both: the tokens collapse
                check("r2c1", ">", 0.5),
                check("r2c1u", "<", 2.0),
                check("r3c0", "between", [1.0, 10.0]),
                check("r3c1", "<", 20.0),
                check("r3c2", "<", 0.9),
            ],
        ),
    )
