"""/models: the gradient of the next-token loss through a real model's stream, per layer and per token.

models-gradient draws, per layer, the gradient per token ‖∂L/∂x_l‖ and that gradient times the stream's norm
‖∂L/∂x_l‖·‖x_l‖ (both means over tokens 2…T, app/experiments/real_gradient.py). The caption says the product
follows the norm's 1/‖x‖ Jacobian only where it varies at most half as much (as a ratio) as the gradient alone.
models-grad-tokens is the gradient per layer and token."""

from __future__ import annotations

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import (
    Builder,
    chart_kind,
    heatmap_layout,
    legend_name,
    log_heatmap,
    positive,
    spread,
    token_axis,
)
from .style import PALETTE, finish, layout, line
from .words import fmt, say, sentences

FOLLOWS_NORM = 0.5  # log(product's spread) at most this × log(gradient's spread): the product follows 1/‖x‖

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_gradient.title": ("Gradient of the next-token loss per layer", "逐层的下一词元损失梯度"),
    "chart.models_gradient.y": ("mean over tokens 2…T", "第 2…T 个词元的平均"),
    "models.series.gradient": ("‖∂L/∂x_l‖ per token", "每个词元的 ‖∂L/∂x_l‖"),
    "models.series.times_norm": ("‖∂L/∂x_l‖ · ‖x_l‖", "‖∂L/∂x_l‖ · ‖x_l‖"),
    "caption.models_gradient": (
        "The gradient of the mean next-token cross-entropy L with respect to each layer's stream, per token, and "
        "that gradient times the stream's norm.",
        "下一词元平均交叉熵 L 对每层残差流的梯度（逐词元），以及该梯度乘以残差流的范数。",
    ),
    "models.caption.gradient": (
        "{model}: loss {loss} nats. The gradient per token runs from {g_low} to {g_high} over the layers (×{g_spread}); "
        "times ‖x_l‖ it stays within {p_low}–{p_high} (×{p_spread}).",
        "{model}：损失 {loss} 奈特。每个词元的梯度在各层之间从 {g_low} 到 {g_high}（相差 {g_spread} 倍）；"
        "乘以 ‖x_l‖ 之后保持在 {p_low}–{p_high} 之间（相差 {p_spread} 倍）。",
    ),
    "models.caption.follows_norm": (
        "Each block reads its stream through a norm whose Jacobian scales as 1/‖x‖: the longer the stream, the "
        "smaller its gradient.",
        "每个块通过归一化读取残差流，其雅可比矩阵按 1/‖x‖ 缩放：残差流越长，梯度越小。",
    ),
    "models.caption.part_norm": (
        "The product still varies ×{p_spread}: the norm's 1/‖x‖ accounts for part of the gradient's change, not all.",
        "乘积仍相差 {p_spread} 倍：归一化的 1/‖x‖ 只解释了梯度变化的一部分。",
    ),
    "models.caption.not_norm": (
        "The product varies as much as the gradient itself: the norm's 1/‖x‖ does not account for the gradient's "
        "changes here.",
        "乘积的变化不小于梯度本身：归一化的 1/‖x‖ 并不能解释这里梯度的变化。",
    ),
    "models.caption.first_layer": (
        "Block 1 gets {ratio}× the gradient of block {blocks}: the shortcut carries it back without vanishing.",
        "第 1 块得到的梯度是第 {blocks} 块的 {ratio} 倍：残差捷径把梯度传回，没有消失。",
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
    "chart.models_grad_tokens.title": ("Gradient per token and layer", "逐词元、逐层的梯度"),
    "caption.models_grad_tokens": (
        "Each column is a token; the colour is ‖∂L/∂x_l‖ of that token's stream, on a log scale.",
        "每一列是一个词元；颜色是该词元残差流的 ‖∂L/∂x_l‖（对数刻度）。",
    ),
    "models.caption.grad_tokens": (
        "The largest is token {token} ({value}, layer {layer}).",
        "最大的是词元 {token}（{value}，第 {layer} 层）。",
    ),
    "models.caption.grad_zero": (
        "The last token's gradient is exactly 0 (grey): no prediction in the loss reads it.",
        "最后一个词元的梯度恰好为 0（灰色）：损失中没有任何预测读取它。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


def absent(trace: Json, lang: str) -> str:
    return text(f"models.no_gradient.{trace['gradient_absent']}", lang, model=legend_name(trace, lang))


def gradient_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_gradient.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(
            theme, title, text("models.axis.layer", lang), text("chart.models_gradient.y", lang), ylog=True
        ),
    }
    gradient = trace["gradient"]
    if gradient:
        fig["data"] += [
            line(
                theme,
                text("models.series.gradient", lang),
                trace["layers"],
                gradient["per_token_mean"],
                PALETTE["purple"],
            ),
            line(
                theme,
                text("models.series.times_norm", lang),
                trace["layers"],
                gradient["times_norm"],
                PALETTE["green"],
                dash="dash",
            ),
        ]
    return finish(fig, theme)


def gradient_claim(trace: Json) -> Json:
    gradient = trace["gradient"]
    if not gradient:
        return {"absent": trace["gradient_absent"]}
    per_token, product = positive(gradient["per_token_mean"]), positive(gradient["times_norm"])
    g_spread, p_spread = spread(per_token), spread(product)
    if g_spread and p_spread and g_spread > 1 and p_spread <= g_spread**FOLLOWS_NORM:
        follows = "follows"
    elif g_spread and p_spread and p_spread < g_spread:
        follows = "part"
    else:
        follows = "not"
    first, last = gradient["per_token_mean"][1], gradient["per_token_mean"][-1]
    return {
        "absent": None,
        "loss": gradient["loss"],
        "g_low": min(per_token),
        "g_high": max(per_token),
        "g_spread": g_spread,
        "p_low": min(product),
        "p_high": max(product),
        "p_spread": p_spread,
        "follows_norm": follows,
        "first_over_last": first / last if last else None,
        "blocks": len(trace["layers"]) - 1,
    }


def gradient_caption(trace: Json, lang: str) -> str:
    claim = gradient_claim(trace)
    if claim["absent"]:
        return sentences([text("caption.models_gradient", lang), absent(trace, lang)], lang)
    shown = {k: fmt(claim[k], lang) for k in ("loss", "g_low", "g_high", "g_spread", "p_low", "p_high", "p_spread")}
    ratio = claim["first_over_last"]
    return sentences(
        [
            text("caption.models_gradient", lang),
            text("models.caption.gradient", lang, model=legend_name(trace, lang), **shown),
            text(f"models.caption.{claim['follows_norm']}_norm", lang, p_spread=shown["p_spread"]),
            ratio is not None
            and ratio >= 1
            and text("models.caption.first_layer", lang, ratio=fmt(ratio, lang), blocks=claim["blocks"]),
        ],
        lang,
    )


def gradient_rows(trace: Json) -> list[Json]:
    gradient = trace["gradient"]
    if not gradient:
        return [{"layer": layer, "gradient": None} for layer in trace["layers"]]
    return [
        {
            "layer": layer,
            "gradient_whole_sentence": gradient["per_block"][i],
            "gradient_per_token": gradient["per_token_mean"][i],
            "times_norm": gradient["times_norm"][i],
        }
        for i, layer in enumerate(trace["layers"])
    ]


# ---- models-grad-tokens ---------------------------------------------------------------------------------------------


def grad_tokens_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_grad_tokens.title', lang)} · {legend_name(trace, lang)}"
    gradient = trace["gradient"]
    data = (
        [log_heatmap(theme, list(range(len(trace["tokens"]))), trace["layers"], gradient["per_token"], "‖∂L/∂x_l‖")]
        if gradient
        else []
    )
    fig: Json = {
        "data": data,
        "layout": heatmap_layout(theme, title, text("models.axis.token", lang), text("models.axis.layer", lang)),
    }
    token_axis(fig, trace["tokens"])
    return finish(fig, theme)


def grad_tokens_claim(trace: Json) -> Json:
    gradient = trace["gradient"]
    if not gradient:
        return {"absent": trace["gradient_absent"]}
    cells = [(v, l, t) for l, row in enumerate(gradient["per_token"]) for t, v in enumerate(row) if v is not None]
    value, layer, token = max(cells)
    zero = [t for t in range(len(trace["tokens"])) if all(row[t] == 0 for row in gradient["per_token"])]
    return {"absent": None, "max": value, "max_layer": layer, "max_token": token, "zero_tokens": zero}


def grad_tokens_caption(trace: Json, lang: str) -> str:
    claim = grad_tokens_claim(trace)
    if claim["absent"]:
        return sentences([text("caption.models_grad_tokens", lang), absent(trace, lang)], lang)
    last = len(trace["tokens"]) - 1
    return sentences(
        [
            text("caption.models_grad_tokens", lang),
            text(
                "models.caption.grad_tokens",
                lang,
                token=trace["tokens"][claim["max_token"]].strip() or "␣",
                value=fmt(claim["max"], lang),
                layer=trace["layers"][claim["max_layer"]],
            ),
            claim["zero_tokens"] == [last] and text("models.caption.grad_zero", lang),
        ],
        lang,
    )


def grad_tokens_rows(trace: Json) -> list[Json]:
    gradient = trace["gradient"]
    if not gradient:
        return []
    return [
        {"layer": layer, "position": i, "token": token, "gradient": gradient["per_token"][l][i]}
        for l, layer in enumerate(trace["layers"])
        for i, token in enumerate(trace["tokens"])
    ]


GRADIENT = chart_kind(
    "real_trace",
    Builder("models-gradient", gradient_figure, gradient_caption, gradient_claim, gradient_rows, scales=True),
    STRINGS,
)
GRAD_TOKENS = chart_kind(
    "real_trace",
    Builder("models-grad-tokens", grad_tokens_figure, grad_tokens_caption, grad_tokens_claim, grad_tokens_rows),
)
