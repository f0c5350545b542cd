"""Is RMSNorm faster? Measured on the machine that shows the slide, and said the way the measurement came out."""

from __future__ import annotations

from . import sources as src
from .build import chart, check, claim, op, pair, read, slide

# The caption's first words, chosen by the measurement's verdict (app/experiments/lessons/norm_speed.py: RMSNorm's
# time ÷ LayerNorm's beyond 1 ± 5 % at every width, else no winner), never written in advance.
DIRECTION = {
    "faster": pair("On this machine RMSNorm is faster:", "在本机上 RMSNorm 更快："),
    "slower": pair("On this machine RMSNorm is slower:", "在本机上 RMSNorm 更慢："),
    "mixed": pair("On this machine neither norm is clearly faster:", "在本机上两种归一化没有明显的快慢之分："),
}

# Said where the repeats scattered widely: a busy machine's timing is not a verdict on the norms.
SPREAD = {
    "wide": pair(" The bars are wide: the machine was busy while it measured.", "误差条很宽：测量时机器很忙。"),
    "narrow": pair("", ""),
}

SPEED = slide(
    "rmsnorm-speed",
    ("Is RMSNorm faster? Measured here", "RMSNorm 更快吗？在这里实测"),
    (
        "RMSNorm skips the mean and the shift: less arithmetic. Whether that is less time depends on the code that "
        "runs it. Both norms, forward and backward, timed on this machine.",
        "RMSNorm 省掉了均值和偏移：计算更少。但是否更省时间，取决于运行它的代码。这里在本机上为两种归一化的前向和反向计时。",
    ),
    (
        "Zhang & Sennrich 2019 report 7% to 64% faster training on GPUs with their own implementation: reported there, "
        "not measured here. Here torch's own F.layer_norm against F.rms_norm on the CPU, 256 tokens, widths 64 to "
        "4096, the median of interleaved repeats (the /layernorm page's measurement, taken once an hour). The dotted "
        "line, LayerNorm written op by op, separates what the formula costs from what the kernel costs: at these "
        "sizes a norm is memory-bound, so a fused kernel that reads x once can beat a shorter formula run as a chain of "
        "separate operations. The caption's direction is this measurement's: on another machine or another torch it "
        "may read the other way.",
        "Zhang 与 Sennrich 2019 报告，用他们自己的实现在 GPU 上训练快 7% 到 64%：这是该文的报告，不是这里的测量。"
        "这里在 CPU 上比较 torch 自带的 LayerNorm 函数与 RMSNorm 函数，256 个词元，宽度 64 到 4096，取交替重复的中位数"
        "（与 /layernorm 页面是同一个测量，每小时测一次）。点线是逐个算子写出的 LayerNorm，它把公式本身的代价和内核的代价"
        "分开：在这些规模下归一化受内存带宽限制，只读一遍 x 的融合内核可能胜过公式更短、却由一串独立算子执行的实现。"
        "说明文字里的快慢取自这次测量：换一台机器或换一个 torch 版本，结论可能相反。",
    ),
    chart(
        "norm_speed",
        ("LayerNorm vs RMSNorm: time per forward + backward", "LayerNorm 对比 RMSNorm：每次前向 + 反向的时间"),
        [src.norm_speed()],
        "/layernorm",
    ),
    claim(
        (
            "{direction} RMSNorm took {low|2}× to {high|2}× LayerNorm's time at widths 64 to 4096. LayerNorm written "
            "op by op took {c_low|2}× to {c_high|2}× RMSNorm's.{busy}",
            "{direction}在宽度 64 到 4096 上，RMSNorm 的用时是 LayerNorm 的 {low|2} 到 {high|2} 倍。逐个算子写出的 "
            "LayerNorm 用时是 RMSNorm 的 {c_low|2} 到 {c_high|2} 倍。{busy}",
        ),
        {
            "ratios": read(0, "rows[*].ratio"),
            "low": op("min", "ratios"),
            "high": op("max", "ratios"),
            "composed": read(0, "rows[*].composed_ratio"),
            "c_low": op("min", "composed"),
            "c_high": op("max", "composed"),
            "verdict": read(0, "verdict"),
            "direction": op("words", "verdict", words=DIRECTION),
            "spread": read(0, "spread"),
            "busy": op("words", "spread", words=SPREAD),
            "widths": read(0, "widths"),
        },
        [
            # measured: a time ratio, finite and positive, at every width (a busy machine may scatter it widely)
            check("ratios", "between", [1e-3, 1e3]),
            check("composed", "between", [1e-3, 1e3]),
            check("widths", "between", [64, 4096]),
        ],
    ),
)

SLIDES = [SPEED]
