"""The frame of the deck: the title slide, the alternatives (read from the registries) and the summary."""

from __future__ import annotations

from typing import Any

from ... import i18n
from ...config import PRESETS
from . import sources as src
from .build import chart, check, claim, const, op, pair, read, slide

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
            "Why a 96-block Transformer can be trained at all: two stabilizers, each fixing one failure. Every chart in "
            "this deck is computed live by PyTorch on this server, and every claim is checked by a test.",
            "为什么 96 块的 Transformer 能训练起来：两个稳定器，各自修好一种故障。本讲稿的每张图都由本服务器上的 PyTorch "
            "现场计算，每个结论都有测试检查。",
        ),
        (
            "Keys: → or Space next, ← back, Home and End, F full screen, S speaker view, T starts the training on a "
            "training slide. The plan: the problem (the chain product), the first stabilizer (the shortcut), the two walls "
            "it runs into, the second stabilizer (normalization) and where to put it, the alternatives, a summary.",
            "按键：→ 或空格下一页，← 上一页，Home 和 End，F 全屏，S 演讲者视图，在训练页按 T 开始训练。"
            "安排：问题（链式乘积），第一个稳定器（捷径），它撞上的两堵墙，第二个稳定器（归一化）以及放在哪里，其他方案，总结。",
        ),
        None,
        claim(
            (
                "{slides|0} slides. Each claim below is checked by a test against the numbers the models produce.",
                "共 {slides|0} 页。下面每一页的结论都有测试用模型算出的数字来检查。",
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
    )


SUMMARY_BASE: dict[str, Any] = {"depth": 96, "activation": "tanh", "init": "xavier"}
SUMMARY_ROWS = [
    (("Neither", "都没有"), {"norm": "none", "residual": "none"}),
    (("Shortcut only", "只有捷径"), {"norm": "none", "residual": "identity"}),
    # \n: a table cell wraps only at spaces, so the Chinese label breaks where it is told
    (("Norm only (Pre-LN, no shortcut)", "只有归一化\n（Pre-LN，无捷径）"), {"norm": "layernorm", "residual": "none"}),
    (("Both (Pre-LN)", "两者都有（Pre-LN）"), {"norm": "layernorm", "residual": "identity"}),
]
SUMMARY_COLUMNS = [
    ("summary.grad_survival", ("Gradient block 1 ÷ 96", "梯度 第 1 块 ÷ 第 96 块")),
    ("summary.norm_growth", ("Stream ‖x‖ block 96 ÷ 1", "残差流 ‖x‖ 第 96 块 ÷ 第 1 块")),
    ("layers[-1].token_cosine", ("Cosine between tokens, block 96", "第 96 块词元间余弦")),
]


def summary_slide() -> dict[str, Any]:
    configs = [src.model(**SUMMARY_BASE, **patch) for _, patch in SUMMARY_ROWS]
    return slide(
        "summary",
        ("Summary: two stabilizers", "总结：两个稳定器"),
        (
            "The shortcut keeps the gradient's path open: its derivative is 1 + f′. The norm keeps the stream's size in "
            "check, so nothing overflows, saturates or collapses. A deep Transformer needs both.",
            "捷径让梯度的通路保持畅通：它的导数是 1 + f′。归一化管住残差流的大小，让数值不溢出、不饱和、不坍缩。"
            "深层 Transformer 两者都需要。",
        ),
        (
            "96 blocks, tanh, Xavier, the same seed in all four rows; only the two stabilizers change. 'overflow' marks a "
            "value that became inf or NaN. Where the norm sits then decides whether the two get in each other's way: "
            "Pre-LN keeps the shortcut clean.",
            "四行都是 96 块、tanh、Xavier、相同的随机种子；只改变两个稳定器。“溢出”表示数值变成了 inf 或 NaN。"
            "归一化放在哪里，决定了两者会不会互相妨碍：Pre-LN 让捷径保持干净。",
        ),
        chart(
            "table",
            ("What each stabilizer fixes, 96 blocks", "每个稳定器修好了什么：96 块"),
            [src.trace(cfg) for cfg in configs],
            src.trace_link("/gradients", configs[-1]),
            rows=[pair(*label) for label, _ in SUMMARY_ROWS],
            columns=[{"path": path, "label": pair(*label)} for path, label in SUMMARY_COLUMNS],
        ),
        claim(
            (
                "Neither: the gradient keeps {g_none|2} of itself. Shortcut only: the stream grows ×{n_short|2}. "
                "Norm only: tokens collapse (cosine {c_norm|4}). Both: gradient ×{g_both|3}, stream ×{n_both|3}, "
                "cosine {c_both|2}.",
                "都没有：梯度只剩 {g_none|2}。只有捷径：残差流变为 {n_short|2} 倍。只有归一化：词元坍缩（余弦 {c_norm|4}）。"
                "两者都有：梯度 ×{g_both|3}，残差流 ×{n_both|3}，余弦 {c_both|2}。",
            ),
            {
                "g_none": read(0, "summary.grad_survival"),
                "n_short": read(1, "summary.norm_growth"),
                "c_norm": read(2, "layers[-1].token_cosine"),
                "g_both": read(3, "summary.grad_survival"),
                "n_both": read(3, "summary.norm_growth"),
                "c_both": read(3, "layers[-1].token_cosine"),
            },
            [
                check("g_none", "<", 1e-9),
                check("n_short", ">", 1e6),
                check("c_norm", ">", 0.999),
                check("g_both", "between", [1.0, 10.0]),
                check("n_both", "<", 20.0),
                check("c_both", "<", 0.9),
            ],
        ),
    )
