"""The /models page: real pretrained Transformers (a Post-LN and a pre-norm one) on a sentence the user types.
Its strings (English + Chinese) and its registration; the models this server has are handed to the page in
`extra`, and without the [models] extra the page says in one line what to install."""

from __future__ import annotations

from .. import i18n
from ..config.real import DEFAULT_TEXT, MAX_TEXT_CHARS, MAX_TOKENS
from ..services.real_models import models_payload
from .registry import Page, register_page

STRINGS = {
    "nav.models": ("Real models", "真实模型"),
    "models.title": (
        "Real models: does it happen in a pretrained Transformer?",
        "真实模型：预训练 Transformer 里也这样吗？",
    ),
    "models.intro": (
        "Two real pretrained models read your sentence on this server, offline. MiniLM is a BERT: Post-LN, so every "
        "block's output is a LayerNorm output, whose norm its learned gain sets (the caption says whether the tokens "
        "end pinned together). SmolLM2 is a Llama: pre-norm, so nothing "
        "normalises the residual stream and it snowballs from block to block, while the first token carries a "
        "massive activation.",
        "两个真实的预训练模型在本服务器上离线读取你的句子。MiniLM 属于 BERT 家族：Post-LN，每个块的输出都是 LayerNorm "
        "的输出，其范数由学到的增益决定（图注说明各词元是否被钉在一起）。SmolLM2 属于 Llama 家族：Pre-norm，残差流从不被归一化，逐块像滚雪球一样增长，"
        "而第一个词元携带巨大的激活值。",
    ),
    "models.missing": (
        "Real models are not installed on this server. Install them with: {command}",
        "本服务器没有安装真实模型。安装命令：{command}",
    ),
    "models.quantised": (
        "SmolLM2's weights are a 4-bit approximation (a Q4_1 GGUF file, dequantised to float32).",
        "SmolLM2 的权重是 4 位近似值（Q4_1 GGUF 文件，反量化为 float32）。",
    ),
    "models.model": ("Model (heatmap and gradient)", "模型（热力图和梯度）"),
    "models.model.help": ("The model whose per-token norms and gradients are shown.", "显示其逐词元范数和梯度的模型。"),
    "models.compare": ("Beside it (stream chart)", "并排对比（残差流图）"),
    "models.compare.help": ("A second model drawn in the stream chart.", "在残差流图中一起画出的第二个模型。"),
    "models.text": ("Sentence", "句子"),
    "models.text.help": (
        f"Any sentence in English or Chinese, at most {MAX_TOKENS} tokens.",
        f"任意英文或中文句子，最多 {MAX_TOKENS} 个词元。",
    ),
    "enum.model.minilm": ("MiniLM-L6 (BERT, Post-LN)", "MiniLM-L6（BERT，Post-LN）"),
    "enum.model.smollm2": ("SmolLM2-135M (Llama, pre-norm)", "SmolLM2-135M（Llama，Pre-norm）"),
    "enum.compare.minilm": ("MiniLM-L6 (BERT, Post-LN)", "MiniLM-L6（BERT，Post-LN）"),
    "enum.compare.smollm2": ("SmolLM2-135M (Llama, pre-norm)", "SmolLM2-135M（Llama，Pre-norm）"),
    "enum.compare.none": ("none", "无"),
    "chart.models_stream.title": ("Residual stream norm per layer (mean over tokens)", "逐层残差流范数（词元平均）"),
    "chart.models_stream.y": ("‖x_l‖", "‖x_l‖"),
    "models.series.rest": ("{model}: tokens 2…T", "{model}：第 2…T 个词元"),
    "models.series.first": ("{model}: first token", "{model}：第一个词元"),
    "models.series.pinned": (
        "{model}: LayerNorm gain level √Σ(γ²+β²)",
        "{model}：LayerNorm 增益水平 √Σ(γ²+β²)",
    ),
    "models.series.fit": ("{model}: geometric fit, ×{factor}/block", "{model}：几何拟合，每块 ×{factor}"),
    "models.mark.sqrt_d": ("√d = {value} ({model})", "√d = {value}（{model}）"),
    "caption.models_stream": (
        "Layer 0 is the stream before block 1; the stream is read before the final norm.",
        "第 0 层是第 1 块之前的残差流；读取的是最终归一化之前的残差流。",
    ),
    "models.caption.pre": (
        "{model}: without the first token the stream grows from {start} after block 1 to {end} after block {blocks} "
        "(×{over} end to end, ×{per} per block from the end points; the legend's ×/block is the least-squares geometric fit's); "
        "the first token reaches {first}, {ratio}× the others.",
        "{model}：不计第一个词元，残差流从第 1 块后的 {start} 增长到第 {blocks} 块后的 {end}"
        "（首尾相比 ×{over}，按首尾算每块 ×{per}；图例中的每块倍数是最小二乘几何拟合的）；"
        "第一个词元达到 {first}，是其他词元的 {ratio} 倍。",
    ),
    "models.caption.post": (
        "{model}: every block's output is a LayerNorm output, so its norm stays between {low} and {high}: pinned "
        "(tokens up to {before}× apart before the norm are within {after}× after it).",
        "{model}：每个块的输出都是 LayerNorm 的输出，范数始终在 {low} 与 {high} 之间：被钉住了"
        "（归一化前相差可达 {before} 倍的词元，归一化后相差不超过 {after} 倍）。",
    ),
    "models.caption.post_unpinned": (
        "{model}: every block's output is a LayerNorm output, with a mean norm between {low} and {high}, but not "
        "pinned: text tokens (neither special nor [UNK]) end up to {after}× apart after the norm (pinned means at "
        "most {limit}×; up to {before}× before it).",
        "{model}：每个块的输出都是 LayerNorm 的输出，平均范数在 {low} 与 {high} 之间，但没有被钉住：文本词元"
        "（既非特殊词元也非 [UNK]）在归一化后相差可达 {after} 倍（钉住指不超过 {limit} 倍；归一化前可达 {before} 倍）。",
    ),
    "models.caption.failed": ("{model} could not be traced: {message}", "{model} 无法计算：{message}"),
    "models.error.unavailable": (
        "This model cannot be loaded on this server now; the other model still works.",
        "该模型目前无法在本服务器上加载；另一个模型仍可使用。",
    ),
    "models.error.text": (
        "The text cannot be traced: at most {limit} tokens, printable characters, newline and tab.",
        "无法计算该文本：最多 {limit} 个词元，只能包含可打印字符、换行符和制表符。",
    ),
    "models.count": ("{count} of at most {limit} tokens.", "{count} 个词元（最多 {limit} 个）。"),
    "models.count.over": (
        "{count} tokens: more than the {limit} a trace may have.",
        "{count} 个词元：超过了一次计算允许的 {limit} 个。",
    ),
    "models.truncate": ("Keep the first {limit} tokens", "只保留前 {limit} 个词元"),
    "models.conversion": (
        "The first trace of {models} converts its 4-bit weights to float32 once (about {low}–{high} s on 2 cores); "
        "later traces load it in a second or two.",
        "{models} 的第一次计算会把 4 位权重一次性转换为 float32（2 核上约 {low}–{high} 秒）；之后一两秒即可加载。",
    ),
    "chart.models_tokens.title": ("Norm of each token's stream, layer by layer", "每个词元的残差流范数，逐层"),
    "models.axis.token": ("Token", "词元"),
    "models.axis.layer": ("Layer (0 = before block 1)", "层（0 = 第 1 块之前）"),
    "caption.models_tokens": (
        "Each column is a token of your sentence; the colour is ‖x_l‖ on a log scale.",
        "每一列是句子中的一个词元；颜色表示 ‖x_l‖（对数刻度）。",
    ),
    "models.caption.sink": (
        "The first token ({token}) stands out: up to {ratio}× the others' norm (the attention sink / massive activation).",
        "第一个词元（{token}）格外突出：范数最高可达其他词元的 {ratio} 倍（注意力汇聚点 / 巨大激活）。",
    ),
    "models.caption.unknown": (
        "{model}: {count} of {total} tokens unknown to its vocabulary ([UNK]).",
        "{model}：{total} 个词元中有 {count} 个不在其词表中（[UNK]）。",
    ),
    "chart.models_gradient.title": ("Gradient of the next-token loss per layer", "逐层的下一词元损失梯度"),
    "chart.models_gradient.y": ("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"),
    "models.series.gradient": ("{model}", "{model}"),
    "caption.models_gradient": (
        "The gradient of the mean next-token cross-entropy with respect to each block's stream.",
        "下一词元平均交叉熵对每个块的残差流的梯度。",
    ),
    "models.caption.gradient": (
        "{model}: loss {loss} nats; the gradient reaching block 1 is {ratio}× the one at the last block: the "
        "shortcut carries it back without vanishing.",
        "{model}：损失 {loss} 纳特；到达第 1 块的梯度是最后一块的 {ratio} 倍：残差捷径把梯度传回，没有消失。",
    ),
    "chart.models_sink.title": ("Attention on the first token, per block", "每个块对第一个词元的注意力"),
    "chart.models_sink.y": ("attention mass on token 1", "第一个词元上的注意力"),
    "chart.models_sink.y2": ("first token ‖x‖ / others'", "第一个词元 ‖x‖ / 其他"),
    "models.series.sink": ("mean over heads and queries", "各头与各查询的平均"),
    "models.series.uniform": ("uniform attention", "均匀注意力"),
    "models.series.ratio": ("first token's norm ratio", "第一个词元的范数比"),
    "caption.models_sink": (
        "Top: the attention mass every query puts on the first token (eager attention's weights); bottom: the first "
        "token's stream norm over the mean of the others.",
        "上：每个查询放在第一个词元上的注意力（eager 注意力的权重）；下：第一个词元的残差流范数与其他词元平均之比。",
    ),
    "models.caption.attention": (
        "{model}: the attention on the first token ranges from {low} (block {lowBlock}) to {high} (block "
        "{highBlock}), against {uniform} for a uniform attention.",
        "{model}：第一个词元上的注意力从 {low}（第 {lowBlock} 块）到 {high}（第 {highBlock} 块），均匀注意力为 {uniform}。",
    ),
    "models.caption.ratio": (
        "The first token's norm is at most {ratio}× the others' (block {block}): the sink and the massive "
        "activation are related, not the same curve.",
        "第一个词元的范数最多是其他词元的 {ratio} 倍（第 {block} 块）：注意力汇聚与巨大激活相关，但不是同一条曲线。",
    ),
    "models.caption.no_attention": (
        "{model}: no attention weights (they need eager attention).",
        "{model}：没有注意力权重（需要 eager 注意力）。",
    ),
    "chart.models_dims.title": ("The largest coordinates of the stream", "残差流中最大的分量"),
    "chart.models_dims.y": ("|x_l[d]|", "|x_l[d]|"),
    "models.series.dim": ("d = {d} (token {token})", "d = {d}（词元 {token}）"),
    "models.series.median": ("median |activation| of the layer", "该层激活绝对值的中位数"),
    "caption.models_dims": (
        "Each line is one coordinate d of the stream at the token where it peaks; the dotted line is the layer's "
        "median |activation|.",
        "每条线是残差流的一个分量 d（取其峰值所在的词元）；点线是该层激活绝对值的中位数。",
    ),
    "models.caption.dim": (
        "{model}: dimension {d} of token {token} holds {value} after block {layer}, {ratio}× the layer's median: "
        "{verdict}. Block {written}'s {writtenBy} writes the most into it ({writtenAmount}), block {removed}'s "
        "{removedBy} removes the most ({removedAmount}).",
        "{model}：词元 {token} 的第 {d} 维在第 {layer} 块后为 {value}，是该层中位数的 {ratio} 倍：{verdict}。"
        "第 {written} 块的{writtenBy}写入最多（{writtenAmount}），第 {removed} 块的{removedBy}移除最多（{removedAmount}）。",
    ),
    "models.caption.dim_post": (
        "{model}: dimension {d} of token {token} holds {value} after block {layer}, {ratio}× the layer's median: "
        "{verdict}. Post-LN: the branches add to the sum before each LayerNorm, which rescales it; the largest "
        "addition is block {written}'s {writtenBy} ({writtenAmount}), the largest subtraction block {removed}'s "
        "{removedBy} ({removedAmount}).",
        "{model}：词元 {token} 的第 {d} 维在第 {layer} 块后为 {value}，是该层中位数的 {ratio} 倍：{verdict}。"
        "Post-LN：各分支加在每个 LayerNorm 之前的和上，再由 LayerNorm 重新缩放；加得最多的是第 {written} 块的"
        "{writtenBy}（{writtenAmount}），减得最多的是第 {removed} 块的{removedBy}（{removedAmount}）。",
    ),
    "models.massive.yes": (
        "a massive activation by Sun et al. 2024's criterion (|a| > 100 and ≥ 1000× the median)",
        "按 Sun 等 2024 的标准（|a| > 100 且 ≥ 中位数的 1000 倍）是巨大激活",
    ),
    "models.massive.no": (
        "not a massive activation by Sun et al. 2024's criterion (|a| > 100 and ≥ 1000× the median)",
        "按 Sun 等 2024 的标准（|a| > 100 且 ≥ 中位数的 1000 倍）不是巨大激活",
    ),
    "models.branch.mlp": ("MLP", "MLP"),
    "models.branch.attention": ("attention", "注意力"),
    "models.caption.gain": (
        "The last LayerNorm's gain γ at dimension {d}: {gain}.",
        "最后一个 LayerNorm 在第 {d} 维的增益 γ：{gain}。",
    ),
    "models.caption.found": (
        "{count} activations of this sentence meet the criterion.",
        "该句中有 {count} 个激活满足该标准。",
    ),
    "models.no_gradient.encoder": (
        "{model} has no next-token loss (an encoder): only causal language models have one.",
        "{model} 没有下一词元损失（编码器）：只有因果语言模型才有。",
    ),
    "models.no_gradient.one_token": (
        "{model}: one token has no next token to predict; type at least two.",
        "{model}：只有一个词元，没有可预测的下一个词元；请至少输入两个。",
    ),
    "models.no_gradient.off": ("{model}: gradients were not asked for.", "{model}：未请求梯度。"),
}


CHARTS = ("models-stream", "models-tokens", "models-gradient", "models-sink", "models-dims")


def _register() -> None:
    i18n.register(STRINGS)
    payload = models_payload(with_conversion=False)
    names = [m["name"] for m in payload["models"]]
    register_page(
        Page(
            key="models",
            path="/models",
            title_key="models.title",
            charts=CHARTS if payload["ready"] else (),
            nav_key="nav.models",
            nav_order=90,
            model_controls=False,
            extra={
                "ready": payload["ready"],
                "install": " && ".join(payload["install"]),
                "models": names,
                "default_model": "smollm2" if "smollm2" in names else (names[0] if names else ""),
                "default_compare": "minilm" if "minilm" in names and "smollm2" in names else "none",
                "default_text": DEFAULT_TEXT,
                "max_text_chars": MAX_TEXT_CHARS,
                "max_tokens": MAX_TOKENS,
            },
        )
    )


_register()
