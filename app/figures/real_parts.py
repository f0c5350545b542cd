"""/models: what each block adds, and how alike the tokens are.

- models-branches: per block the norm of the attention's and the MLP's contribution (mean over tokens 2…T) beside
  the stream they are added to; in a Post-LN model also the sum x + F(x) before the block's last LayerNorm beside
  what that LayerNorm makes of it (the pinning, drawn).
- models-cosine: the mean cosine between different tokens' streams per layer (1: every token points the same way),
  with and without the first token.
"""

from __future__ import annotations

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import Builder, argmax, blocks_text, chart_kind, legend_name
from .real_stream import pinning
from .style import PALETTE, finish, layout, line
from .words import fmt, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_branches.title": ("What each block adds to the stream", "每个块向残差流加入了什么"),
    "chart.models_branches.y": ("mean ‖·‖ over tokens 2…T", "第 2…T 个词元的平均 ‖·‖"),
    "models.series.attention": ("attention output", "注意力输出"),
    "models.series.mlp": ("MLP output", "MLP 输出"),
    "models.series.stream": ("stream ‖x_l‖", "残差流 ‖x_l‖"),
    "models.series.sum_before": ("x + F(x) before the block's last LayerNorm", "块最后一个 LayerNorm 之前的 x + F(x)"),
    "models.series.norm_output": ("that LayerNorm's output", "该 LayerNorm 的输出"),
    "caption.models_branches": (
        "Per block, the mean norm of what its attention and its MLP add (tokens 2…T).",
        "每个块的注意力和 MLP 所加内容的平均范数（第 2…T 个词元）。",
    ),
    "models.caption.branches_pre": (
        "{model}: the MLP adds {mlp_first} at block 1, {mlp_share_first}× the stream it joins, and {mlp_last} at "
        "block {blocks}, {mlp_share_last}× the stream.",
        "{model}：MLP 在第 1 块加入 {mlp_first}，是所加入残差流的 {mlp_share_first} 倍；在第 {blocks} 块加入 {mlp_last}，"
        "是残差流的 {mlp_share_last} 倍。",
    ),
    "models.caption.smaller_share": (
        "Each block adds a smaller share of a longer stream.",
        "每个块在更长的残差流上加入更小的份额。",
    ),
    "models.caption.largest": (
        "The largest addition is block {top_block}'s {top_branch} ({top}).",
        "加入最多的是第 {top_block} 块的{top_branch}（{top}）。",
    ),
    "models.caption.branches_post": (
        "{model}: before each block's last LayerNorm the sum has a mean norm of {sum_low}–{sum_high}; after it "
        "{out_low}–{out_high}. The text tokens end within 1.5× of each other after that norm in {pinned}.",
        "{model}：每个块最后一个 LayerNorm 之前，和的平均范数为 {sum_low}–{sum_high}；之后为 {out_low}–{out_high}。"
        "文本词元在该归一化之后彼此相差不超过 1.5 倍的有：{pinned}。",
    ),
    "chart.models_cosine.title": ("How alike the tokens are, layer by layer", "各层词元之间有多相似"),
    "chart.models_cosine.y": ("mean cosine between tokens", "词元之间的平均余弦"),
    "models.series.cosine_all": ("every token", "所有词元"),
    "models.series.cosine_rest": ("tokens 2…T", "第 2…T 个词元"),
    "caption.models_cosine": (
        "The mean cosine between different tokens' streams: 1 when every token points the same way, 0 when they "
        "are perpendicular on average.",
        "不同词元残差流之间的平均余弦：所有词元方向相同时为 1，平均而言互相垂直时为 0。",
    ),
    "models.caption.cosine": (
        "{model}, tokens 2…T: {start} before block 1, {end} after block {blocks}, highest {high} after block "
        "{high_layer}; with the first token: {end_all} after block {blocks}.",
        "{model}，第 2…T 个词元：第 1 块之前为 {start}，第 {blocks} 块之后为 {end}，最高 {high}（第 {high_layer} 块之后）；"
        "计入第一个词元：第 {blocks} 块之后为 {end_all}。",
    ),
    "models.caption.cosine_one": (
        "{model}: one token has no other to compare with.",
        "{model}：只有一个词元，没有可比较的其他词元。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


# ---- models-branches ------------------------------------------------------------------------------------------------


def branches_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_branches.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(
            theme, title, text("models.axis.layer", lang), text("chart.models_branches.y", lang), ylog=True
        ),
    }
    blocks, branches = trace["layers"][1:], trace["branches"]
    fig["data"] += [
        line(
            theme,
            text("models.series.attention", lang),
            blocks,
            branches["attention"]["mean_without_first"],
            PALETTE["blue"],
        ),
        line(
            theme, text("models.series.mlp", lang), blocks, branches["mlp"]["mean_without_first"], PALETTE["vermillion"]
        ),
    ]
    post = trace.get("post_ln")
    if post:
        fig["data"] += [
            line(
                theme,
                text("models.series.sum_before", lang),
                blocks,
                post["sum_before_mlp_norm"],
                PALETTE["purple"],
                dash="dash",
            ),
            line(
                theme,
                text("models.series.norm_output", lang),
                blocks,
                post["mlp_norm_output"],
                PALETTE["green"],
                dash="dot",
            ),
        ]
    else:
        fig["data"].append(
            line(
                theme,
                text("models.series.stream", lang),
                trace["layers"],
                trace["stream"]["mean_without_first"],
                PALETTE["black"],
                dash="dot",
            )
        )
    return finish(fig, theme)


def branches_claim(trace: Json) -> Json:
    attention = trace["branches"]["attention"]["mean_without_first"]
    mlp = trace["branches"]["mlp"]["mean_without_first"]
    stream = trace["stream"]["mean_without_first"]  # layer l - 1 is what block l adds to
    top_mlp, top_attention = argmax(mlp), argmax(attention)
    if top_mlp is not None and (top_attention is None or mlp[top_mlp] >= attention[top_attention]):
        top = {"top_branch": "mlp", "top_block": top_mlp + 1, "top": mlp[top_mlp]}
    else:
        top = {"top_branch": "attention", "top_block": (top_attention or 0) + 1, "top": attention[top_attention or 0]}
    out: Json = {
        "mlp_first": mlp[0],
        "mlp_last": mlp[-1],
        "blocks": len(mlp),
        "mlp_share_first": mlp[0] / stream[0] if stream[0] else None,
        "mlp_share_last": mlp[-1] / stream[-2] if stream[-2] else None,
        **top,
    }
    post = trace.get("post_ln")
    if post:
        out |= {
            "sum_low": min(post["sum_before_mlp_norm"]),
            "sum_high": max(post["sum_before_mlp_norm"]),
            "out_low": min(post["mlp_norm_output"]),
            "out_high": max(post["mlp_norm_output"]),
            "pinned_blocks": pinning(trace)["pinned_blocks"],
        }
    return out


def branches_caption(trace: Json, lang: str) -> str:
    claim, model = branches_claim(trace), legend_name(trace, lang)
    if trace.get("post_ln"):
        sentence = text(
            "models.caption.branches_post",
            lang,
            model=model,
            **{k: fmt(claim[k], lang) for k in ("sum_low", "sum_high", "out_low", "out_high")},
            pinned=blocks_text(claim["pinned_blocks"], lang, of=claim["blocks"]),
        )
        return sentences([text("caption.models_branches", lang), sentence], lang)
    values = {k: fmt(claim[k], lang) for k in ("mlp_first", "mlp_last", "mlp_share_first", "mlp_share_last")}
    first, last = claim["mlp_share_first"], claim["mlp_share_last"]
    return sentences(
        [
            text("caption.models_branches", lang),
            text("models.caption.branches_pre", lang, model=model, blocks=claim["blocks"], **values),
            first and last and last < first / 2 and text("models.caption.smaller_share", lang),
            text(
                "models.caption.largest",
                lang,
                top_block=claim["top_block"],
                top=fmt(claim["top"], lang),
                top_branch=text(f"models.branch.{claim['top_branch']}", lang),
            ),
        ],
        lang,
    )


def branches_rows(trace: Json) -> list[Json]:
    branches, post = trace["branches"], trace.get("post_ln")
    rows = []
    for b in range(len(trace["layers"]) - 1):
        row = {
            "block": b + 1,
            "attention": branches["attention"]["mean_without_first"][b],
            "mlp": branches["mlp"]["mean_without_first"][b],
            "stream_before": trace["stream"]["mean_without_first"][b],
        }
        if post:
            row |= {"sum_before_last_norm": post["sum_before_mlp_norm"][b], "norm_output": post["mlp_norm_output"][b]}
        rows.append(row)
    return rows


# ---- models-cosine --------------------------------------------------------------------------------------------------


def cosine_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_cosine.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(theme, title, text("models.axis.layer", lang), text("chart.models_cosine.y", lang)),
    }
    cosine = trace["cosine"]
    fig["data"] += [
        line(
            theme,
            text("models.series.cosine_rest", lang),
            trace["layers"],
            cosine["mean_without_first"],
            PALETTE["blue"],
        ),
        line(
            theme,
            text("models.series.cosine_all", lang),
            trace["layers"],
            cosine["mean"],
            PALETTE["vermillion"],
            dash="dot",
        ),
    ]
    fig["layout"]["yaxis"]["range"] = [min(0.0, *(v for v in cosine["mean"] if v is not None)) - 0.05, 1.05]
    return finish(fig, theme)


def cosine_claim(trace: Json) -> Json:
    rest, every = trace["cosine"]["mean_without_first"], trace["cosine"]["mean"]
    high = argmax(rest)
    return {
        "start": rest[0],
        "end": rest[-1],
        "high": rest[high] if high is not None else None,
        "high_layer": high,
        "end_all": every[-1],
        "blocks": len(rest) - 1,
    }


def cosine_caption(trace: Json, lang: str) -> str:
    claim, model = cosine_claim(trace), legend_name(trace, lang)
    if claim["high"] is None and claim["end_all"] is None:
        return sentences(
            [text("caption.models_cosine", lang), text("models.caption.cosine_one", lang, model=model)], lang
        )
    shown = {k: fmt(claim[k], lang) for k in ("start", "end", "high", "end_all")}
    return sentences(
        [
            text("caption.models_cosine", lang),
            text(
                "models.caption.cosine",
                lang,
                model=model,
                blocks=claim["blocks"],
                high_layer=claim["high_layer"],
                **shown,
            ),
        ],
        lang,
    )


def cosine_rows(trace: Json) -> list[Json]:
    cosine = trace["cosine"]
    return [
        {"layer": layer, "cosine_without_first": cosine["mean_without_first"][i], "cosine": cosine["mean"][i]}
        for i, layer in enumerate(trace["layers"])
    ]


BRANCHES = chart_kind(
    "real_trace",
    Builder("models-branches", branches_figure, branches_caption, branches_claim, branches_rows, scales=True),
    STRINGS,
)
COSINE = chart_kind("real_trace", Builder("models-cosine", cosine_figure, cosine_caption, cosine_claim, cosine_rows))
