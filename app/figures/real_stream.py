"""/models: the residual stream of real pretrained models, per layer (two models side by side) and per token.

The stream chart draws, per model, the mean ‖x_l‖ over tokens 2…T and the first token's, with the LayerNorm gain's
level for a Post-LN model and the least-squares geometric fit for a pre-norm one. Its caption says "pinned" only
for the blocks where the text tokens (neither special nor [UNK]) end within 1.5× of each other after the block's
last norm, and counts the [UNK] tokens of every model drawn."""

from __future__ import annotations

import math
import statistics

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import (
    Builder,
    argmax,
    blocks_text,
    chart_kind,
    heatmap_layout,
    legend_name,
    log_heatmap,
    model_name,
    token_axis,
    unknown_sentence,
)
from .style import PALETTE, SERIES, finish, layout, line, reference
from .words import fmt, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_stream.title": ("Residual stream norm per layer (mean over tokens)", "逐层残差流范数（词元平均）"),
    "chart.models_stream.y": ("‖x_l‖", "‖x_l‖"),
    "models.series.rest": ("{model}: tokens 2…T", "{model}：第 2…T 个词元"),
    "models.series.first": ("{model}: first token", "{model}：第一个词元"),
    "models.series.pinned": ("{model}: gain level √Σ(γ²+β²)", "{model}：增益水平 √Σ(γ²+β²)"),  # one phone line
    "models.series.fit": ("{model}: fit, ×{factor}/block", "{model}：拟合，每块 ×{factor}"),
    "models.series.sqrt_d": ("{model}: √d = {value}", "{model}：√d = {value}"),
    "caption.models_stream": (
        "Layer 0 is the stream before block 1; the stream is read before the final norm.",
        "第 0 层是第 1 块之前的残差流；读取的是最终归一化之前的残差流。",
    ),
    "models.caption.pre": (
        "{model}: without the first token the stream grows from {start} after block 1 to {end} after block {blocks}: "
        "×{over} end to end, ×{per} per block from those end points (the legend's ×{fit}/block is the least-squares "
        "geometric fit over every block); the first token reaches {first}, {ratio}× the others.",
        "{model}：不计第一个词元，残差流从第 1 块后的 {start} 增长到第 {blocks} 块后的 {end}：首尾相比 ×{over}，"
        "按首尾算每块 ×{per}（图例中的每块 ×{fit} 是对所有块的最小二乘几何拟合）；第一个词元达到 {first}，是其他词元的 {ratio} 倍。",
    ),
    "models.caption.post": (
        "{model}: every block's output is a LayerNorm output, with a mean norm between {low} and {high} (the gain's "
        "level, below √d = {root}). The text tokens (neither special nor [UNK]) end within 1.5× of each other after "
        "the block's last norm in {pinned}: pinned there; {unpinned_part}Before that norm they were up to {before}× "
        "apart.",
        "{model}：每个块的输出都是 LayerNorm 的输出，平均范数在 {low} 与 {high} 之间（由增益决定，低于 √d = {root}）。"
        "文本词元（既非特殊词元也非 [UNK]）在块的最后一个归一化之后彼此相差不超过 1.5 倍的有：{pinned}，这些块里它们被固定住了；"
        "{unpinned_part}归一化之前它们相差可达 {before} 倍。",
    ),
    "models.caption.unpinned": (
        "not in {blocks} (up to {spread}× apart). ",
        "{blocks}则没有（相差可达 {spread} 倍）。",
    ),
    "models.caption.failed": ("{model} could not be traced: {message}", "{model} 无法计算：{message}"),
    "chart.models_tokens.title": ("Norm of each token's stream, layer by layer", "每个词元的残差流范数，逐层"),
    "caption.models_tokens": (
        "Each column is a token of your sentence; the colour is ‖x_l‖ on a log scale.",
        "每一列是句子中的一个词元；颜色表示 ‖x_l‖（对数刻度）。",
    ),
    "models.caption.first_token": (
        "The first token ({token}) stands out: up to {ratio}× the others' mean norm (after block {block}).",
        "第一个词元（{token}）格外突出：范数最高可达其他词元平均的 {ratio} 倍（第 {block} 块之后）。",
    ),
    "models.caption.unk_level": (
        "After the last block the [UNK] tokens sit at ‖x‖ = {unk} against {text} for the text tokens (medians).",
        "最后一块之后，[UNK] 词元的 ‖x‖ 为 {unk}，文本词元为 {text}（中位数）。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


def drawn(answer: Json) -> list[Json]:
    return [t for t in answer["traces"] if "failed" not in t]


# ---- models-stream: two models side by side -------------------------------------------------------------------------


def stream_figure(answer: Json, lang: str, theme: str) -> Json:
    fig: Json = {
        "data": [],
        "layout": layout(
            theme,
            text("chart.models_stream.title", lang),
            text("models.axis.layer", lang),
            text("chart.models_stream.y", lang),
            ylog=True,
        ),
    }
    for i, trace in enumerate(answer["traces"]):
        if "failed" in trace:
            continue
        model, color, layers = legend_name(trace, lang), SERIES[i % 2], trace["layers"]
        stream, theory = trace["stream"], trace["theory"]
        fig["data"].append(
            line(theme, text("models.series.rest", lang, model=model), layers, stream["mean_without_first"], color)
        )
        fig["data"].append(
            line(theme, text("models.series.first", lang, model=model), layers, stream["first"], color, dash="dot")
        )
        if theory.get("pinned_level"):
            fig["data"].append(
                line(
                    theme,
                    text("models.series.pinned", lang, model=model),
                    layers[1:],
                    theory["pinned_level"],
                    PALETTE["green"],
                    dash="dash",
                    markers=False,
                )
            )
            name = text("models.series.sqrt_d", lang, model=model, value=fmt(theory["sqrt_d"], lang))
            fig["data"].append(reference(theme, name, layers, theory["sqrt_d"]))
        if theory.get("growth"):
            growth = theory["growth"]
            name = text("models.series.fit", lang, model=model, factor=fmt(growth["per_block"], lang))
            fig["data"].append(
                line(theme, name, growth["layers"], growth["fitted"], PALETTE["black"], dash="dash", markers=False)
            )
    return finish(fig, theme)


def pinning(trace: Json) -> Json:
    """Post-LN, per block: pinned (text tokens within 1.5× after the block's last norm) or not, and the spreads."""
    post = trace["post_ln"]
    spreads = post["text_token_spread_after_norm"]
    return {
        "pinned_blocks": [b + 1 for b, p in enumerate(post["pinned"]) if p],
        "unpinned_blocks": [b + 1 for b, p in enumerate(post["pinned"]) if not p],
        "unpinned_spread": max(
            (s for s, p in zip(spreads, post["pinned"], strict=True) if not p and s is not None and math.isfinite(s)),
            default=None,
        ),
        "before": max(post["token_spread_before_norm"]),
        "limit": post["pinned_spread"],
    }


def model_sentence(trace: Json, lang: str) -> str:
    model, stream = legend_name(trace, lang), trace["stream"]
    growth = trace["theory"].get("growth")
    if growth:
        rest, last = stream["mean_without_first"], len(stream["mean_without_first"]) - 1
        return text(
            "models.caption.pre",
            lang,
            model=model,
            start=fmt(rest[1], lang),
            end=fmt(rest[last], lang),
            blocks=last,
            over=fmt(growth["over_blocks"], lang),
            per=fmt(growth["per_block_endpoints"], lang),
            fit=fmt(growth["per_block"], lang),
            first=fmt(max(stream["first"]), lang),
            ratio=fmt(trace["summary"]["first_token_ratio_max"], lang),
        )
    if trace.get("post_ln"):
        pins, outputs, blocks = pinning(trace), stream["mean"][1:], len(stream["mean"]) - 1
        unpinned = (
            text(
                "models.caption.unpinned",
                lang,
                blocks=blocks_text(pins["unpinned_blocks"], lang),
                spread=fmt(pins["unpinned_spread"], lang),
            )
            if pins["unpinned_blocks"]
            else ""
        )
        return text(
            "models.caption.post",
            lang,
            model=model,
            low=fmt(min(outputs), lang),
            high=fmt(max(outputs), lang),
            root=fmt(trace["theory"]["sqrt_d"], lang),
            pinned=blocks_text(pins["pinned_blocks"], lang, of=blocks),
            unpinned_part=unpinned,
            before=fmt(pins["before"], lang),
        )
    return ""


def stream_caption(answer: Json, lang: str) -> str:
    parts = [text("caption.models_stream", lang)]
    for trace in answer["traces"]:
        if "failed" in trace:
            parts.append(text("models.caption.failed", lang, model=trace["failed"], message=trace["message"]))
            continue
        parts += [model_sentence(trace, lang), unknown_sentence(trace, lang)]
    return sentences(parts, lang)


def stream_claim(answer: Json) -> Json:
    out = []
    for trace in answer["traces"]:
        if "failed" in trace:
            out.append({"model": trace["failed"], "failed": True})
            continue
        growth = trace["theory"].get("growth")
        entry = {
            "model": trace["model"]["name"],
            "failed": False,
            "unknown": trace["unknown_tokens"],
            "first_ratio_max": trace["summary"]["first_token_ratio_max"],
        }
        if growth:
            entry |= {
                "over": growth["over_blocks"],
                "per_block_endpoints": growth["per_block_endpoints"],
                "per_block_fit": growth["per_block"],
            }
        if trace.get("post_ln"):
            entry |= pinning(trace)
        out.append(entry)
    return {"models": out}


def stream_rows(answer: Json) -> list[Json]:
    return [
        {
            "model": t["model"]["name"],
            "layer": layer,
            "mean_without_first": t["stream"]["mean_without_first"][i],
            "first_token": t["stream"]["first"][i],
            "mean": t["stream"]["mean"][i],
        }
        for t in drawn(answer)
        for i, layer in enumerate(t["layers"])
    ]


# ---- models-tokens: layer × token ------------------------------------------------------------------------------------


def tokens_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_tokens.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [
            log_heatmap(
                theme, list(range(len(trace["tokens"]))), trace["layers"], trace["stream"]["per_token"], "‖x_l‖"
            )
        ],
        "layout": heatmap_layout(theme, title, text("models.axis.token", lang), text("models.axis.layer", lang)),
    }
    token_axis(fig, trace["tokens"])
    return finish(fig, theme)


def unknown_level(trace: Json) -> tuple[float, float] | None:
    """(median ‖x‖ of the [UNK] tokens, of the text tokens) after the last block; None without both kinds."""
    last = trace["stream"]["per_token"][-1]
    kinds = trace["token_kinds"]
    unk = [v for v, k in zip(last, kinds, strict=True) if k == "unknown"]
    plain = [v for v, k in zip(last, kinds, strict=True) if k == "text"]
    return (statistics.median(unk), statistics.median(plain)) if unk and plain else None


def tokens_caption(trace: Json, lang: str) -> str:
    ratios = trace["summary"]["first_token_ratio"]
    block = argmax(ratios[1:])
    parts = [text("caption.models_tokens", lang)]
    if block is not None and ratios[block + 1] > 10:  # the first token an order of magnitude above the others
        parts.append(
            text(
                "models.caption.first_token",
                lang,
                token=trace["tokens"][0].strip(),
                ratio=fmt(ratios[block + 1], lang),
                block=block + 1,
            )
        )
    level = unknown_level(trace)
    if level:
        parts.append(text("models.caption.unk_level", lang, unk=fmt(level[0], lang), text=fmt(level[1], lang)))
    parts.append(unknown_sentence(trace, lang))
    return sentences(parts, lang)


def tokens_claim(trace: Json) -> Json:
    level = unknown_level(trace)
    return {
        "first_ratio_max": trace["summary"]["first_token_ratio_max"],
        "unknown": trace["unknown_tokens"],
        "unknown_level": level[0] if level else None,
        "text_level": level[1] if level else None,
    }


def tokens_rows(trace: Json) -> list[Json]:
    return [
        {
            "layer": layer,
            "position": i,
            "token": token,
            "kind": trace["token_kinds"][i],
            "norm": trace["stream"]["per_token"][l][i],
        }
        for l, layer in enumerate(trace["layers"])
        for i, token in enumerate(trace["tokens"])
    ]


STREAM = chart_kind(
    "real_pair",
    Builder("models-stream", stream_figure, stream_caption, stream_claim, stream_rows, scales=True),
    {**COMMON, **STRINGS},
)
TOKENS = chart_kind("real_trace", Builder("models-tokens", tokens_figure, tokens_caption, tokens_claim, tokens_rows))

__all__ = ["STREAM", "TOKENS", "model_name"]
