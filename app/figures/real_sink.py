"""/models: the attention sink shown (Xiao et al. 2023), beside the first token's norm (Sun et al. 2024's massive
activation): related, not the same curve.

models-sink: top, per block the attention mass every query puts on the first token (mean over heads; query 0 of a
causal model left out) with a uniform attention's mass; bottom, the first token's stream norm over the others'
mean. models-heads: the same mass per block and head, as a heatmap."""

from __future__ import annotations

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import VIRIDIS, Builder, argmax, argmin, blocks_text, chart_kind, heatmap_layout, legend_name
from .style import PALETTE, axis, finish, layout, line, reference, theme_of
from .words import fmt, say, sentences

MASSIVE_RATIO = 100.0  # the first token's norm over the others' mean above which the caption names the massive one
SINK_FACTOR = 2.0  # a block whose first-token mass is at least this × a uniform attention's is called a sink block

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_sink.title": ("Attention on the first token, per block", "每个块对第一个词元的注意力"),
    "chart.models_sink.y": ("attention on token 1", "第一个词元上的注意力"),
    "chart.models_sink.y2": ("first token ‖x‖ / others'", "第一个词元 ‖x‖ / 其他"),
    "models.series.sink": ("mean over heads and queries", "各头与各查询的平均"),
    "models.series.uniform": ("uniform attention: {value}", "均匀注意力：{value}"),
    "models.series.ratio": ("first token's norm ratio", "第一个词元的范数比"),
    "caption.models_sink": (
        "Top: the attention mass every query puts on the first token (eager attention's weights); bottom: the first "
        "token's stream norm over the mean of the others.",
        "上：每个查询放在第一个词元上的注意力（eager 注意力的权重）；下：第一个词元的残差流范数与其他词元平均之比。",
    ),
    "models.caption.attention": (
        "{model}: the attention on the first token runs from {low} (block {low_block}) to {high} (block "
        "{high_block}), against {uniform} for a uniform attention; {sinks} of {blocks} blocks give it at least twice "
        "the uniform share.",
        "{model}：第一个词元上的注意力从 {low}（第 {low_block} 块）到 {high}（第 {high_block} 块），均匀注意力为 "
        "{uniform}；{blocks} 个块中有 {sinks} 个给它的份额至少是均匀份额的两倍。",
    ),
    "models.caption.massive_and_sink": (
        "The first token's norm is above 100× the others' in {massive} (at most {top}×). At block {jump}, where it "
        "first is, the attention on the first token is {dip}, {dip_side} the uniform {uniform}; in blocks {after_from}"
        "–{blocks} it is {after_low}–{after_high}: the sink and the massive activation are related, not the same curve.",
        "第一个词元的范数在{massive}超过其他词元的 100 倍（最多 {top} 倍）。在它首次出现的第 {jump} 块，第一个词元上的注意力为 "
        "{dip}，{dip_side}均匀注意力 {uniform}；在第 {after_from}–{blocks} 块为 {after_low}–{after_high}："
        "注意力汇聚与巨大激活相关，但不是同一条曲线。",
    ),
    "models.below": ("below", "低于"),
    "models.above": ("above", "高于"),
    "models.caption.sink_only": (
        "The first token's norm is at most {top}× the others': the attention rests on it without a massive activation.",
        "第一个词元的范数最多是其他词元的 {top} 倍：注意力停在它上面，却没有巨大激活。",
    ),
    "models.caption.ratio_only": (
        "The first token's norm is at most {top}× the others' (block {block}).",
        "第一个词元的范数最多是其他词元的 {top} 倍（第 {block} 块）。",
    ),
    "models.caption.no_attention": (
        "{model}: no attention weights (they need eager attention).",
        "{model}：没有注意力权重（需要 eager 注意力）。",
    ),
    "chart.models_heads.title": ("Attention on the first token, per head", "每个注意力头对第一个词元的注意力"),
    "models.axis.head": ("Head", "注意力头"),
    "caption.models_heads": (
        "Each cell is one head of one block: the mean attention its queries put on the first token.",
        "每格是某个块的一个注意力头：其各查询放在第一个词元上的平均注意力。",
    ),
    "models.caption.heads": (
        "{model}: {over} of {heads} heads put more than half their attention on the first token; block {low_block}'s "
        "heads the least (mean {low}).",
        "{model}：{heads} 个注意力头中有 {over} 个把一半以上的注意力放在第一个词元上；第 {low_block} 块的注意力头最少（平均 {low}）。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


def sink_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_sink.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(theme, title, text("models.axis.block", lang), text("chart.models_sink.y", lang)),
    }
    lay = fig["layout"]
    lay["yaxis"].update(domain=[0.55, 1], range=[0, 1])
    lay["xaxis"]["anchor"] = "y2"  # the block axis under the lower panel
    lay["yaxis2"] = {
        **axis(theme_of(theme), text("chart.models_sink.y2", lang), log=True),
        "domain": [0, 0.42],
        "anchor": "x",
    }
    blocks, attention = trace["layers"][1:], trace.get("attention")
    if attention:
        fig["data"].append(line(theme, text("models.series.sink", lang), blocks, attention["mass"], PALETTE["blue"]))
        if attention["uniform"] is not None:
            name = text("models.series.uniform", lang, value=fmt(attention["uniform"], lang))
            fig["data"].append(reference(theme, name, blocks, attention["uniform"]))
    fig["data"].append(
        line(
            theme,
            text("models.series.ratio", lang),
            blocks,
            trace["summary"]["first_token_ratio"][1:],
            PALETTE["vermillion"],
            yaxis="y2",
        )
    )
    return finish(fig, theme)


def sink_claim(trace: Json) -> Json:
    ratios = trace["summary"]["first_token_ratio"][1:]  # entry b - 1: block b
    massive = [b + 1 for b, r in enumerate(ratios) if r is not None and r > MASSIVE_RATIO]
    top = argmax(ratios)
    out: Json = {
        "blocks": len(ratios),
        "massive_blocks": massive,
        "ratio_top": ratios[top] if top is not None else None,
        "ratio_top_block": top + 1 if top is not None else None,
    }
    attention = trace.get("attention")
    if not attention:
        return out
    mass, uniform = attention["mass"], attention["uniform"]
    low, high = argmin(mass) or 0, argmax(mass) or 0
    out |= {
        "low": mass[low],
        "low_block": low + 1,
        "high": mass[high],
        "high_block": high + 1,
        "uniform": uniform,
        "sinks": sum(1 for m in mass if uniform is not None and m >= SINK_FACTOR * uniform),
    }
    if massive and massive[0] < len(mass):
        jump, after = massive[0], mass[massive[0] :]
        out |= {"jump": jump, "dip": mass[jump - 1], "after_low": min(after), "after_high": max(after)}
    return out


def sink_caption(trace: Json, lang: str) -> str:
    claim, model = sink_claim(trace), legend_name(trace, lang)
    top = fmt(claim["ratio_top"], lang)
    if "low" not in claim:
        return sentences(
            [
                text("caption.models_sink", lang),
                text("models.caption.no_attention", lang, model=model),
                text("models.caption.ratio_only", lang, top=top, block=claim["ratio_top_block"]),
            ],
            lang,
        )
    shown = {k: fmt(claim[k], lang) for k in ("low", "high", "uniform")}
    parts = [
        text("caption.models_sink", lang),
        text(
            "models.caption.attention",
            lang,
            model=model,
            low_block=claim["low_block"],
            high_block=claim["high_block"],
            sinks=claim["sinks"],
            blocks=claim["blocks"],
            **shown,
        ),
    ]
    if "jump" in claim:
        side = text("models.below" if claim["dip"] < claim["uniform"] else "models.above", lang)
        parts.append(
            text(
                "models.caption.massive_and_sink",
                lang,
                massive=blocks_text(claim["massive_blocks"], lang),
                top=top,
                jump=claim["jump"],
                dip=fmt(claim["dip"], lang),
                dip_side=side,
                uniform=shown["uniform"],
                after_from=claim["jump"] + 1,
                blocks=claim["blocks"],
                after_low=fmt(claim["after_low"], lang),
                after_high=fmt(claim["after_high"], lang),
            )
        )
    elif claim["sinks"]:
        parts.append(text("models.caption.sink_only", lang, top=top))
    else:
        parts.append(text("models.caption.ratio_only", lang, top=top, block=claim["ratio_top_block"]))
    return sentences(parts, lang)


def sink_rows(trace: Json) -> list[Json]:
    attention = trace.get("attention")
    return [
        {
            "block": b + 1,
            "attention_on_first": attention["mass"][b] if attention else None,
            "uniform": attention["uniform"] if attention else None,
            "first_token_ratio": trace["summary"]["first_token_ratio"][b + 1],
        }
        for b in range(len(trace["layers"]) - 1)
    ]


# ---- models-heads ---------------------------------------------------------------------------------------------------


def heads_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_heads.title', lang)} · {legend_name(trace, lang)}"
    attention, font = trace.get("attention"), theme_of(theme)["font"]
    data = []
    if attention:
        per_head = attention["mass_per_head"]
        data.append(
            {
                "type": "heatmap",
                "x": list(range(1, len(per_head[0]) + 1)),
                "y": trace["layers"][1:],
                "z": per_head,
                "colorscale": VIRIDIS,
                "zmin": 0,
                "zmax": 1,
                "hoverongaps": False,
                "hovertemplate": "%{z:.3g}<extra></extra>",
                "colorbar": {
                    "title": {"text": text("chart.models_sink.y", lang), "side": "right", "font": {"size": font}},
                    "tickfont": {"size": font},
                    "thickness": font + 4,
                },
            }
        )
    fig: Json = {
        "data": data,
        "layout": heatmap_layout(theme, title, text("models.axis.head", lang), text("models.axis.block", lang)),
    }
    return finish(fig, theme)


def heads_claim(trace: Json) -> Json:
    attention = trace.get("attention")
    if not attention:
        return {"absent": "not_eager"}
    per_head = attention["mass_per_head"]
    means = [sum(row) / len(row) for row in per_head]
    low = argmin(means) or 0
    return {
        "absent": None,
        "heads": sum(len(row) for row in per_head),
        "over": sum(1 for row in per_head for m in row if m > 0.5),
        "low_block": low + 1,
        "low": means[low],
    }


def heads_caption(trace: Json, lang: str) -> str:
    claim, model = heads_claim(trace), legend_name(trace, lang)
    if claim["absent"]:
        return sentences(
            [text("caption.models_heads", lang), text("models.caption.no_attention", lang, model=model)], lang
        )
    return sentences(
        [
            text("caption.models_heads", lang),
            text(
                "models.caption.heads",
                lang,
                model=model,
                over=claim["over"],
                heads=claim["heads"],
                low_block=claim["low_block"],
                low=fmt(claim["low"], lang),
            ),
        ],
        lang,
    )


def heads_rows(trace: Json) -> list[Json]:
    attention = trace.get("attention")
    if not attention:
        return []
    return [
        {"block": b + 1, "head": h + 1, "attention_on_first": m}
        for b, row in enumerate(attention["mass_per_head"])
        for h, m in enumerate(row)
    ]


SINK = chart_kind("real_trace", Builder("models-sink", sink_figure, sink_caption, sink_claim, sink_rows), STRINGS)
HEADS = chart_kind("real_trace", Builder("models-heads", heads_figure, heads_caption, heads_claim, heads_rows))
