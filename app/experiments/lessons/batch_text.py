"""Every word of the /batchnorm lesson and of the speed chart on /layernorm, English and Chinese.

Field labels come from the request models (text.field_strings); the captions' numbers are filled in by the
page from the answers, so no measured number is written here.
"""

from __future__ import annotations

NORM_NAMES: dict[str, tuple[str, str]] = {
    "batchnorm.name.batchnorm": ("BatchNorm", "BatchNorm"),
    "batchnorm.name.layernorm": ("LayerNorm", "LayerNorm"),
    "batchnorm.name.rmsnorm": ("RMSNorm", "RMSNorm"),
    "batchnorm.name.groupnorm": ("GroupNorm", "GroupNorm"),
}

BATCH_STRINGS: dict[str, tuple[str, str]] = {
    **NORM_NAMES,
    "nav.batchnorm": ("BatchNorm", "BatchNorm"),
    "batchnorm.title": (
        "Why NLP avoids BatchNorm: a token's output depends on its batch",
        "NLP 为什么不用 BatchNorm：一个词元的输出取决于它所在的批",
    ),
    "batchnorm.intro": (
        "BatchNorm normalizes each channel with a mean and variance taken over the whole batch and every "
        "position. So the same sentence comes out differently next to different sentences, training mode (the "
        "batch's statistics) and eval mode (running averages) disagree, and padding enters the statistics. "
        "LayerNorm, RMSNorm and GroupNorm use one token's own numbers only. Each chart below is measured with "
        "the engine's own layers on synthetic tokens (channel mean + sentence offset + noise).",
        "BatchNorm 对每个通道用整批、所有位置上的均值和方差做归一化。所以同一个句子和不同的句子放在一起，输出就不同；"
        "训练模式（用本批统计量）和评估模式（用滑动平均）的结果不一致；填充位置也会混进统计量。"
        "LayerNorm、RMSNorm 和 GroupNorm 只用一个词元自己的数值。下面每张图都用本引擎自己的归一化层在合成词元"
        "（通道均值 + 句子偏移 + 噪声）上实测得到。",
    ),
    "batchnorm.table.title": (
        "At batch size {batch}: one fixed sequence, {trials} sets of new batch mates",
        "批大小 {batch}：一个固定序列，换 {trials} 次同批序列",
    ),
    "batchnorm.col.norm": ("Normalization", "归一化"),
    "batchnorm.col.same": ("Change of its output when the batch mates change", "换同批序列时它的输出变化"),
    "batchnorm.col.train_eval": ("Train mode vs eval mode", "训练模式与评估模式之差"),
    "batchnorm.col.padding": ("Change when about half the batch is padding", "约一半是填充时的输出变化"),
    "batchnorm.col.check": ("Largest difference from torch.nn.functional", "与 torch.nn.functional 的最大差"),
    "batchnorm.none": ("none (no running statistics)", "无（没有滑动统计量）"),
    "chart.batch_dependence.title": (
        "Same sequence, different batch mates: how much its output changes",
        "同一个序列、不同的同批序列：它的输出变化多少",
    ),
    "batchnorm.axis.batch": ("Batch size B (sequences)", "批大小 B（序列数）"),
    "batchnorm.axis.change": ("Relative change ‖Δy‖ / ‖y‖", "相对变化 ‖Δy‖ / ‖y‖"),
    "batchnorm.series.train_eval": ("BatchNorm: train vs eval mode", "BatchNorm：训练对比评估"),
    "batchnorm.mark.chosen": ("B = {batch}", "B = {batch}"),
    "caption.batch_dependence": (
        "The measured changes appear here once they are computed.",
        "计算完成后，这里显示实测的变化。",
    ),
    "batchnorm.caption.dependence": (
        "At batch size {batch}, replacing the other sequences changed the fixed sequence's BatchNorm "
        "output by {same} of its size on average (up to {max}), and its training-mode output differed "
        "from its eval-mode output by {gap}.",
        "批大小为 {batch} 时，换掉其他序列后，固定序列的 BatchNorm 输出平均变化了自身大小的 {same}"
        "（最多 {max}），其训练模式输出与评估模式输出相差 {gap}。",
    ),
    "batchnorm.caption.bigger.shrinks": (
        "With B = {big} sequences the change is still {big_same}: a bigger batch shrinks it, but not to 0.",
        "B = {big} 时变化仍有 {big_same}：批越大变化越小，但不为 0。",
    ),
    "batchnorm.caption.bigger.not": (
        "With B = {big} sequences the change is {big_same}: no smaller than at B = {batch}.",
        "B = {big} 时变化为 {big_same}：并不比 B = {batch} 时小。",
    ),
    "batchnorm.caption.per_token": (
        "LayerNorm, RMSNorm and GroupNorm: {zero}.",
        "LayerNorm、RMSNorm 和 GroupNorm：{zero}。",
    ),
    "chart.batch_padding.title": (
        "Padding the other sequences: the unpadded sequence's output changes",
        "填充其他序列：未填充序列的输出随之改变",
    ),
    "batchnorm.axis.pad": ("Fraction of the batch's positions that are padding", "批中填充位置所占的比例"),
    "batchnorm.axis.effect": ("Relative change, or shift in standard deviations", "相对变化，或以标准差计的偏移"),
    "batchnorm.series.mean_shift": ("BatchNorm's means: shift ÷ σ", "BatchNorm 均值：偏移 ÷ σ"),
    "batchnorm.series.std_ratio": ("BatchNorm's σ ÷ real tokens' σ", "BatchNorm 的 σ ÷ 真实词元 σ"),
    "caption.batch_padding": (
        "What zero padding does to the statistics, once computed.",
        "计算完成后，这里显示零填充对统计量的影响。",
    ),
    "batchnorm.caption.padding": (
        "The first sequence has no padding; the others are cut shorter and padded with zero vectors. "
        "With {fraction} of the positions padding, BatchNorm's channel means moved by {shift} standard "
        "deviations and the unpadded sequence's output changed by {change} of its size, although none of "
        "its own tokens changed. The per-token norms never look at the pads: their change is {zero}. Masking the pads out "
        "of the statistics fixes this, which is extra code every model must get right.",
        "第一个序列没有填充；其他序列被截短，并用零向量填充。当 {fraction} 的位置是填充时，BatchNorm 的"
        "通道均值移动了 {shift} 个标准差，未填充序列的输出变化了自身大小的 {change}，尽管它自己的词元一个"
        "也没变。逐词元的归一化从不看填充：它们的变化是 {zero}。把填充从统计量中屏蔽掉可以修正这一点，但每个模型都得"
        "额外写对这段代码。",
    ),
}

SPEED_STRINGS: dict[str, tuple[str, str]] = {
    "normspeed.heading": ("Is RMSNorm faster? Measured on this server", "RMSNorm 更快吗？在本服务器上实测"),
    "chart.norm_speed.title": (
        "LayerNorm vs RMSNorm: forward + backward time",
        "LayerNorm 对比 RMSNorm：前向 + 反向时间",
    ),
    "normspeed.axis.width": ("Width d (each of {tokens} tokens)", "宽度 d（共 {tokens} 个词元）"),
    "normspeed.axis.time": ("Time per forward + backward (µs)", "每次前向 + 反向的时间（微秒）"),
    "normspeed.series.layernorm": ("F.layer_norm (torch's fused kernel)", "F.layer_norm（torch 的融合内核）"),
    "normspeed.series.rmsnorm": ("F.rms_norm (torch's own)", "F.rms_norm（torch 自带）"),
    "normspeed.series.layernorm_composed": ("LayerNorm written op by op", "逐个算子写出的 LayerNorm"),
    "caption.norm_speed": (
        "Timing LayerNorm and RMSNorm on this server (about 2 s, once)…",
        "正在本服务器上计时 LayerNorm 与 RMSNorm（约 2 秒，只测一次）…",
    ),
    "normspeed.caption.head": (
        "Measured here at {time} (torch {torch}, {threads} thread(s), {tokens} tokens, median of {repeats} "
        "interleaved repeats; bars: the middle half of the repeats).",
        "本机于 {time} 实测（torch {torch}，{threads} 个线程，{tokens} 个词元，{repeats} 次交替重复的中位数；"
        "误差条：中间一半的重复）。",
    ),
    "normspeed.verdict.slower": (
        "RMSNorm took {low}× to {high}× LayerNorm's time: on this server it is slower.",
        "RMSNorm 用时是 LayerNorm 的 {low} 到 {high} 倍：在本服务器上它更慢。",
    ),
    "normspeed.verdict.faster": (
        "RMSNorm took {low}× to {high}× LayerNorm's time: on this server it is faster.",
        "RMSNorm 用时是 LayerNorm 的 {low} 到 {high} 倍：在本服务器上它更快。",
    ),
    "normspeed.verdict.mixed": (
        "RMSNorm took {low}× to {high}× LayerNorm's time: no clear winner on this server.",
        "RMSNorm 用时是 LayerNorm 的 {low} 到 {high} 倍：在本服务器上没有明显的赢家。",
    ),
    "normspeed.composed.cheaper": (
        "The formula itself is cheaper: written op by op, LayerNorm took {low}× to {high}× RMSNorm's time.",
        "公式本身更省：逐个算子写出时，LayerNorm 用时是 RMSNorm 的 {low} 到 {high} 倍。",
    ),
    "normspeed.composed.unclear": (
        "Written op by op, LayerNorm took {low}× to {high}× RMSNorm's time.",
        "逐个算子写出时，LayerNorm 用时是 RMSNorm 的 {low} 到 {high} 倍。",
    ),
    "normspeed.why.slower": (
        "Why: at these sizes a norm is memory-bound (a few operations per number read), so the time is set by "
        "how often the data crosses memory. torch's CPU LayerNorm is one fused kernel ({layernorm_ops} ATen "
        "operator calls for a forward + backward), its CPU RMSNorm a chain of separate ops ({rmsnorm_ops} calls). "
        "Zhang & Sennrich (2019) measured their speed-ups on GPUs, with their own implementation.",
        "原因：在这些规模下，归一化受内存带宽限制（每读一个数只做几次运算），时间取决于数据在内存中来回几遍。"
        "torch 的 CPU LayerNorm 是一个融合内核（一次前向 + 反向调用 {layernorm_ops} 个 ATen 算子），"
        "而 CPU RMSNorm 是一串独立的算子（{rmsnorm_ops} 个调用）。Zhang 与 Sennrich（2019）的加速是在 GPU 上"
        "用他们自己的实现测得的。",
    ),
    "normspeed.why.faster": (
        "Why: at these sizes a norm is memory-bound (a few operations per number read), so skipping the mean "
        "saves a pass over memory ({layernorm_ops} ATen operator calls for LayerNorm's forward + backward, "
        "{rmsnorm_ops} for RMSNorm's).",
        "原因：在这些规模下，归一化受内存带宽限制（每读一个数只做几次运算），省掉均值就少一遍内存读写"
        "（LayerNorm 一次前向 + 反向调用 {layernorm_ops} 个 ATen 算子，RMSNorm 调用 {rmsnorm_ops} 个）。",
    ),
    "normspeed.why.mixed": (
        "Why: at these sizes a norm is memory-bound, so the kernel (fused, or a chain of ops: {layernorm_ops} "
        "ATen operator calls for LayerNorm's forward + backward, {rmsnorm_ops} for RMSNorm's) matters more than "
        "the formula.",
        "原因：在这些规模下归一化受内存带宽限制，所以内核（融合的，还是一串算子：LayerNorm 一次前向 + 反向调用 "
        "{layernorm_ops} 个 ATen 算子，RMSNorm 调用 {rmsnorm_ops} 个）比公式更重要。",
    ),
    "normspeed.noisy": (
        "Some bars are wide: the server was busy while it measured (it measures again at most once an hour).",
        "部分误差条很宽：测量时服务器很忙（每小时最多重新测量一次）。",
    ),
}
