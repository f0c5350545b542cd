"""Every word of the four lesson pages, English and Chinese, for the pages' table (app/pages/lessons.py `strings()`).

Field labels are not retyped here: `field_strings` derives them from the request models (and from
TraceConfig for the float16 stack), so a label lives in exactly one place.
"""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel

from ...config import TraceConfig
from .batch_text import BATCH_STRINGS, SPEED_STRINGS
from .chain import WORKED_CASES
from .precision import STACK_FIELDS

PAGE_STRINGS: dict[str, tuple[str, str]] = {
    "nav.chain": ("Chain rule", "链式法则"),
    "nav.layernorm": ("LayerNorm by hand", "手算 LayerNorm"),
    "nav.softmax": ("Softmax", "Softmax 饱和"),
    "nav.precision": ("float16", "浮点精度"),
    "lesson.apply": ("Apply", "应用"),
    "lesson.list_help": ("Numbers separated by commas or spaces.", "用逗号或空格分隔的数。"),
    "lesson.overflow": ("overflow (inf or NaN)", "溢出（inf 或 NaN）"),
    # /chain
    "chain.title": (
        "The chain product: why the shortcut keeps the gradient alive",
        "链式乘积：捷径为什么能让梯度一路回传",
    ),
    "chain.intro": (
        "Backpropagation multiplies one factor per layer. If every layer's derivative is g, a plain stack hands g^L back "
        "to the first layer. With the shortcut y = f(x) + x the factor of each layer becomes 1 + g instead, "
        "so the product starts from 1 and cannot shrink.",
        "反向传播每经过一层就乘一个因子。若每层的导数都是 g，普通堆叠传回第一层的是 g^L。"
        "有捷径 y = f(x) + x 时，每层的因子变成 1 + g，乘积从 1 出发，不会缩小。",
    ),
    "chain.cases": ("Worked cases", "例题"),
    "chain.case.plain": ("g = {g}, L = {depth}, no shortcut", "g = {g}，L = {depth}，无捷径"),
    "chain.case.residual": ("g = {g}, L = {depth}, with the shortcut", "g = {g}，L = {depth}，有捷径"),
    "chart.chain.title": ("Cumulative product of the per-layer factors", "逐层因子的累积乘积"),
    "chain.axis.x": ("Layers passed through l", "经过的层数 l"),
    "chain.axis.y": ("Product after l layers", "经过 l 层后的乘积"),
    "chain.series.plain": ("Plain stack: g^l, g = {g}", "普通堆叠：g^l，g = {g}"),
    "chain.series.residual": ("Shortcut: (1 + g)^l = {factor}^l", "有捷径：(1 + g)^l = {factor}^l"),
    "chain.mark.one": ("1: the gradient arrives unchanged", "1：梯度原样到达"),
    "caption.chain": (
        "The exact products appear here once they are computed.",
        "计算完成后，这里显示精确的乘积及其结论。",
    ),
    "chain.caption": (
        "After {depth} layers, the plain stack multiplies the gradient by {g}^{depth} = {plain}; "
        "with the shortcut by {factor}^{depth} = {residual}.",
        "经过 {depth} 层后，普通堆叠把梯度乘以 {g}^{depth} = {plain}；有捷径时乘以 {factor}^{depth} = {residual}。",
    ),
    "chain.verdicts": (
        "Without the shortcut the gradient {plain}; with it, {residual}.",
        "没有捷径时梯度{plain}；有捷径时{residual}。",
    ),
    "chain.story.shortcut_keeps": (
        "This is the shortcut's lesson: each factor 1 + g stays close to 1 when the branch's derivative g is small, "
        "so the product does too, while g^l dies.",
        "这正是捷径的作用：分支导数 g 很小时，每个因子 1 + g 都接近 1，乘积也就接近 1；而 g^l 趋于 0。",
    ),
    "chain.verdict.vanish": (
        "Without the shortcut the first layer hears almost nothing.",
        "没有捷径时，第一层几乎收不到梯度。",
    ),
    "chain.verdict.explode": ("Without the shortcut the product explodes.", "没有捷径时，乘积爆炸。"),
    "chain.verdict.fine": (
        "Here even the plain product stays within a factor of 10 of 1.",
        "这里即使没有捷径，乘积也在 1 的 10 倍范围以内。",
    ),
    "chain.shortcut.grows": (
        "The shortcut product cannot shrink, but with a large g it explodes instead: it stays near 1 only "
        "when each branch's derivative is small, which is why deep models initialise residual branches small, "
        "e.g. GPT-2's 1/√N scaling (try g = 0.01).",
        "有捷径的乘积不会缩小，但 g 较大时它反而会爆炸：只有每个分支的导数都很小时，它才会停在 1 附近。"
        "所以深层模型会把残差分支初始化得很小，例如 GPT-2 的 1/√N 缩放（试试 g = 0.01）。",
    ),
    "chain.verdict.overflow": (
        "Some products passed the largest float64 number (about 1.8·10³⁰⁸): the gaps in the chart.",
        "部分乘积超过了 float64 的最大值（约 1.8·10³⁰⁸）：即图中的空缺处。",
    ),
    "chain.verdict.zero": (
        "Some products are exactly 0 (g = 0, or smaller than float64's smallest number), which a log axis cannot "
        "show: the gaps in the chart.",
        "部分乘积恰好为 0（g = 0，或小于 float64 能表示的最小数），对数坐标轴无法显示：即图中的空缺处。",
    ),
    "chain.verdict.negative": (
        "With g below 0 the plain product changes sign every layer; a log axis shows only its positive values.",
        "g 小于 0 时，普通堆叠的乘积每层改变一次符号；对数坐标轴只显示其中的正值。",
    ),
    # /layernorm
    "layernorm.title": ("LayerNorm and RMSNorm by hand", "手算 LayerNorm 与 RMSNorm"),
    "layernorm.intro": (
        "Type one token's numbers. LayerNorm subtracts their mean and divides by their standard deviation; "
        "RMSNorm only divides by their root mean square. Both then multiply by the gain γ; LayerNorm also adds the shift β.",
        "输入一个词元的数值。LayerNorm 先减去均值，再除以标准差；RMSNorm 只除以均方根。"
        "两者随后都乘以增益 γ；LayerNorm 还要加上偏移 β。",
    ),
    "layernorm.gamma": ("Gain γ (every component)", "增益 γ（所有分量）"),
    "layernorm.beta": ("Shift β (every component; LayerNorm only)", "偏移 β（所有分量；仅 LayerNorm）"),
    "layernorm.play": ("Play the steps", "逐步演示"),
    "layernorm.steps.layernorm": ("LayerNorm, step by step", "LayerNorm 逐步计算"),
    "layernorm.steps.rmsnorm": ("RMSNorm, step by step", "RMSNorm 逐步计算"),
    "layernorm.check": (
        "torch.nn.functional.{op} gives the same output (largest difference {diff}).",
        "torch.nn.functional.{op} 给出相同的输出（最大差 {diff}）。",
    ),
    "chart.layernorm.title": ("Input and outputs, component by component", "逐分量的输入与输出"),
    "layernorm.axis.x": ("Component i", "分量 i"),
    "layernorm.axis.y": ("Value", "数值"),
    "layernorm.series.x": ("Input x", "输入 x"),
    "layernorm.series.layernorm": ("LayerNorm output", "LayerNorm 输出"),
    "layernorm.series.rmsnorm": ("RMSNorm output", "RMSNorm 输出"),
    "caption.layernorm": ("Each component before and after the two norms.", "两种归一化前后的每个分量。"),
    "layernorm.caption": (
        "Mean μ = {mean}, variance σ² = {variance} (divided by n = {n}), root mean square {rms}. "
        "LayerNorm's output is centred on β = {beta}; RMSNorm keeps x's offset (its output's mean is {rms_mean}).",
        "均值 μ = {mean}，方差 σ² = {variance}（除以 n = {n}），均方根 {rms}。"
        "LayerNorm 的输出以 β = {beta} 为中心；RMSNorm 保留了 x 的偏移（其输出的均值为 {rms_mean}）。",
    ),
    # /softmax
    "softmax.title": ("Softmax saturation: when attention stares at one token", "Softmax 饱和：注意力只盯着一个词元"),
    "softmax.intro": (
        "Attention turns scores into weights with softmax. Multiply the scores by a growing scale s, which is what runaway "
        "activations do, and the weights collapse onto the largest score: the entropy falls to 0 and the softmax "
        "Jacobian, which carries the gradient back, vanishes.",
        "注意力用 softmax 把分数变成权重。把分数乘以越来越大的缩放 s（激活失控时正是如此），权重就会集中到最大的分数上："
        "熵降到 0，负责把梯度传回去的 softmax 雅可比矩阵也随之消失。",
    ),
    "chart.softmax_probs.title": ("Probabilities p = softmax(s·z)", "概率 p = softmax(s·z)"),
    "softmax.axis.position": ("Position i", "位置 i"),
    "softmax.axis.prob": ("Probability", "概率"),
    "softmax.series.at": ("s = {s}", "s = {s}"),
    "caption.softmax_probs": (
        "The weights softmax gives each position at the chosen scale.",
        "所选缩放下 softmax 给每个位置的权重。",
    ),
    "softmax.caption.probs": (
        "At s = {s} the largest probability is {max} (position {argmax}) and the entropy is {entropy} nats; "
        "a uniform spread would have {uniform} nats.",
        "s = {s} 时最大概率为 {max}（位置 {argmax}），熵为 {entropy} 奈特；均匀分布的熵为 {uniform} 奈特。",
    ),
    "chart.softmax_sweep.title": ("Entropy and gradient size as the scale grows", "缩放增大时的熵与梯度大小"),
    "softmax.axis.scale": ("Scale s", "缩放 s"),
    "softmax.axis.value": ("Value", "数值"),
    "softmax.series.entropy": ("Entropy H(p), nats", "熵 H(p)（奈特）"),
    "softmax.series.max_prob": ("Largest probability", "最大概率"),
    "softmax.series.jacobian": ("Jacobian's spectral norm ‖J‖₂", "雅可比矩阵的谱范数 ‖J‖₂"),
    "softmax.mark.current": ("s = {s}", "s = {s}"),
    "caption.softmax_sweep": (
        "How much gradient softmax lets through, for every scale.",
        "每个缩放下 softmax 能让多少梯度通过。",
    ),
    "softmax.caption.sweep": (
        "The spectral norm of J = diag(p) − p pᵀ is the most a gradient can be amplified on its way back "
        "through softmax. At s = {s} it is {norm}.",
        "J = diag(p) − p pᵀ 的谱范数是梯度反向穿过 softmax 时最多能被放大的倍数。s = {s} 时它是 {norm}。",
    ),
    "softmax.caption.sweep_last": ("At s = {last} it is {last_norm}.", "s = {last} 时它是 {last_norm}。"),
    "softmax.caption.one_hot": (
        "There the weights are one-hot (largest probability {max}) and almost no gradient reaches the scores.",
        "此时权重已接近独热分布（最大概率 {max}），几乎没有梯度能传回分数。",
    ),
    "softmax.caption.tied": (
        "The largest scores are tied, so no scale makes the weights one-hot: the largest probability stays {max} "
        "and the gradient does not vanish.",
        "最大的几个分数相等，所以任何缩放都不能让权重变成独热分布：最大概率停在 {max}，梯度也不会消失。",
    ),
    "softmax.caption.not_yet": (
        "Even there the weights are not one-hot yet (largest probability {max}): the scores are too close together.",
        "即使在那里，权重也还不是独热分布（最大概率 {max}）：分数彼此太接近。",
    ),
    # /precision
    "precision.title": ("Floating-point precision: overflow and swamping", "浮点精度：溢出与舍入丢失"),
    "precision.intro": (
        "A 16-bit number has few digits and a small range. float16 overflows to infinity above 65504; bfloat16 keeps "
        "float32's range but only about 3 significant digits. Large activations therefore overflow, or swallow "
        "small updates.",
        "16 位浮点数的有效数字少、范围小。float16 超过 65504 就溢出为无穷大；bfloat16 保留了 float32 的范围，"
        "但只有约 3 位有效数字。所以很大的激活要么溢出，要么让加到它上面的小更新被舍入掉。",
    ),
    "precision.table.title": (
        "{big} + {small} in each format (exact: {exact})",
        "各格式下的 {big} + {small}（精确值：{exact}）",
    ),
    "precision.col.format": ("Format", "格式"),
    "precision.col.max": ("Largest finite value", "最大有限值"),
    "precision.col.eps": ("Machine epsilon", "机器精度 ε"),
    "precision.col.tiny": ("Smallest normal value", "最小正规数"),
    "precision.col.stored": ("a is stored as", "a 存储为"),
    "precision.col.spacing": ("Gap to the next number after a", "a 到下一个可表示数的间距"),
    "precision.col.sum": ("a + b gives", "a + b 得到"),
    "precision.col.verdict": ("What happened", "结果"),
    "precision.verdict.kept": ("b was added", "b 被加上了"),
    "precision.verdict.lost": ("b was swallowed", "b 被舍入掉了"),
    "precision.verdict.overflow": ("a overflowed to infinity", "a 溢出为无穷大"),
    "precision.verdict.rounded": ("b was added, rounded", "b 被加上（有舍入）"),
    "chart.precision_overflow.title": (
        "Largest |entry| of the residual stream per block: float16 against float32",
        "每块之后残差流中绝对值最大的分量：float16 对比 float32",
    ),
    "precision.axis.y": ("Largest |x| in the stream", "残差流中绝对值最大的分量 |x|"),
    "precision.series.float16": ("float16 run", "float16 运行"),
    "precision.series.float32": ("float32 run, same weights", "float32 运行（相同权重）"),
    "caption.precision_overflow": ("Where the float16 stream first overflows.", "float16 残差流首次溢出的位置。"),
    "precision.caption.overflow": (
        "Run in float16, this stack first overflows at block {layer} ({sublayer}): from there on the stream "
        "holds inf or NaN and the loss is NaN. The same weights in float32 pass 65504 at block {f32}.",
        "以 float16 运行时，这个网络在第 {layer} 块（{sublayer}）首次溢出：此后残差流中是 inf 或 NaN，损失为 NaN。"
        "相同权重在 float32 下于第 {f32} 块超过 65504。",
    ),
    "precision.caption.safe": (
        "Run in float16, this stack stays finite through all {depth} blocks: its largest entry is {peak}, below 65504.",
        "以 float16 运行时，这个网络全部 {depth} 块都保持有限：绝对值最大的分量为 {peak}，低于 65504。",
    ),
    "precision.sublayer.attn": ("attention", "注意力"),
    "precision.sublayer.ffn": ("feed-forward", "前馈"),
    "precision.sublayer.mlp": ("dense layer", "全连接层"),
    "precision.sublayer.parallel": ("parallel attention + feed-forward", "并行的注意力 + 前馈"),
}


def field_strings(
    prefix: str, model: type[BaseModel], names: tuple[str, ...] | None = None
) -> dict[str, tuple[str, str]]:
    """`<prefix>.<field>` (label) and `<prefix>.<field>.help` for the page controls, from the model's own schema."""
    out = {}
    for name, prop in model.model_json_schema()["properties"].items():
        if names is not None and name not in names:
            continue
        out[f"{prefix}.{name}"] = (prop["label"], prop["label_zh"])
        out[f"{prefix}.{name}.help"] = (prop["description"], prop["help_zh"])
    return out


def case_strings() -> dict[str, tuple[str, str]]:
    """The worked cases' captions, from chain.WORKED_CASES."""
    return {f"chain.case.{case['key']}.caption": (case["caption"], case["caption_zh"]) for case in WORKED_CASES}


def all_strings(models: dict[str, type[BaseModel]]) -> dict[str, tuple[str, str]]:
    table = {
        **PAGE_STRINGS,
        **BATCH_STRINGS,
        **SPEED_STRINGS,
        **case_strings(),
        **field_strings("precision.stack", TraceConfig, STACK_FIELDS),
    }
    for page, model in models.items():
        table.update(field_strings(f"{page}.field", model))
    return table


def lesson_models() -> dict[str, type[BaseModel]]:
    """Each lesson page's request model, by page key: its controls, labels and field words come from it."""
    from .batch import BatchDependenceRequest
    from .chain import ChainRequest
    from .layernorm import LayerNormRequest
    from .precision import PrecisionRequest
    from .softmax import SoftmaxRequest

    return {
        "chain": ChainRequest,
        "layernorm": LayerNormRequest,
        "softmax": SoftmaxRequest,
        "precision": PrecisionRequest,
        "batchnorm": BatchDependenceRequest,
    }


@cache
def lesson_strings() -> dict[str, tuple[str, str]]:
    """Every lesson word, read by the lessons' chart builders directly (a notebook needs no page imported first)."""
    return all_strings(lesson_models())
