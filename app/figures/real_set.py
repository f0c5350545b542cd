"""/models: a set of sentences, not one (app/experiments/real_set.py).

models-set: per layer the stream without the first token, and per block the attention on the first token (a causal
model) or how far apart the text tokens end after the block's last norm (Post-LN), as the median of the English
and of the Chinese set with its min-max band, and the reader's own sentence beside them.
The intervention on the massive coordinate, over the same set, is real_patch.py's chart.
"""

from __future__ import annotations

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import Builder, blocks_text, chart_kind, legend_name
from .style import PALETTE, axis, finish, layout, line, reference, theme_of
from .words import fmt, say, sentences

SET_COLORS = {"en": PALETTE["blue"], "zh": PALETTE["vermillion"]}
BANDS = {"en": "rgba(0,114,178,0.18)", "zh": "rgba(213,94,0,0.18)"}

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_set.title": ("The sentence set: median and min–max band", "句子集：中位数与最小–最大范围"),
    "chart.models_set.y": ("‖x_l‖, tokens 2…T", "‖x_l‖（第 2…T 个词元）"),
    "chart.models_set.y_sink": ("attention on token 1", "第一个词元上的注意力"),
    "chart.models_set.y_spread": ("text tokens' max / min ‖x‖", "文本词元 ‖x‖ 最大 / 最小"),
    "models.series.set_median": ("{set} set: median", "{set}句子集：中位数"),
    "models.series.set_band": ("{set} set: min–max", "{set}句子集：最小–最大"),
    "models.series.pinned_limit": ("pinned: at most 1.5×", "固定：不超过 1.5 倍"),
    "caption.models_set": (
        "Eight English and eight Chinese sentences built in (the lines are medians, the bands min to max), beside "
        "your sentence.",
        "内置八个英文句子和八个中文句子（线为中位数，阴影为最小到最大），旁边是你的句子。",
    ),
    "models.caption.set_growth": (
        "{model}: from block 1 to block {blocks} the stream grows ×{low}–×{high} over the {set} set (median ×{median}).",
        "{model}：从第 1 块到第 {blocks} 块，残差流在{set}句子集上增长 ×{low}–×{high}（中位数 ×{median}）。",
    ),
    "models.caption.set_own": ("Your sentence: ×{growth}.", "你的句子：×{growth}。"),
    "models.caption.set_massive": (
        "In {count} of {total} sentences the largest coordinate is dimension {d} of the first token, above Sun et "
        "al.'s threshold from block {block} on.",
        "{total} 个句子中有 {count} 个，最大的分量是第一个词元的第 {d} 维，从第 {block} 块起超过 Sun 等的阈值。",
    ),
    "models.caption.set_pinned": (
        "{model}: the text tokens end within 1.5× of each other in {en} for every English sentence, in {zh} for every "
        "Chinese one.",
        "{model}：对每个英文句子，文本词元在{en}彼此相差不超过 1.5 倍；对每个中文句子，在{zh}。",
    ),
    "models.caption.set_unknown": (
        "{model} reads {en} of the English set's {en_total} tokens and {zh} of the Chinese set's {zh_total} as [UNK].",
        "{model} 把英文句子集 {en_total} 个词元中的 {en} 个、中文句子集 {zh_total} 个词元中的 {zh} 个读作 [UNK]。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


def _band(theme: str, fig: Json, lang: str, set_lang: str, x: list[int], band: Json | None, axis_ref: str) -> None:
    """A set's min-max band (one closed shape: high left to right, low back) and its median line."""
    if not band:
        return
    name = text("models.set." + set_lang, lang)
    group = f"{set_lang}-{axis_ref}"
    kept = [
        (at, high, low) for at, high, low in zip(x, band["high"], band["low"], strict=True) if None not in (high, low)
    ]
    outline_x = [at for at, _, _ in kept] + [at for at, _, _ in reversed(kept)]
    outline_y = [high for _, high, _ in kept] + [low for _, _, low in reversed(kept)]
    fig["data"] += [
        {"type": "scatter", "mode": "lines", "x": outline_x, "y": outline_y, "line": {"width": 0}, "fill": "toself",
         "fillcolor": BANDS[set_lang], "name": text("models.series.set_band", lang, set=name), "legendgroup": group,
         "showlegend": axis_ref == "y", "hoverinfo": "skip", "yaxis": axis_ref},
        line(theme, text("models.series.set_median", lang, set=name), x, band["median"], SET_COLORS[set_lang],
             markers=False, legendgroup=group, showlegend=axis_ref == "y", yaxis=axis_ref),
    ]  # fmt: skip


def set_figure(answer: Json, lang: str, theme: str) -> Json:
    model = answer["model"]
    title = f"{text('chart.models_set.title', lang)} · {legend_name(answer, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(
            theme,
            title,
            text("models.axis.layer", lang),
            text("chart.models_set.y", lang),
            ylog=model["family"] != "post_ln",
        ),
    }
    lay, own = fig["layout"], answer["own"]
    lay["yaxis"]["domain"] = [0.52, 1]
    post = model["family"] == "post_ln"
    lower = "text_spread" if post else "sink"
    lay["yaxis2"] = {
        **axis(theme_of(theme), text("chart.models_set.y_spread" if post else "chart.models_set.y_sink", lang)),
        "domain": [0, 0.4],
        "anchor": "x",
    }
    lay["xaxis"]["anchor"] = "y2"  # the layer axis under the lower panel
    layers = list(range(model["layers"] + 1))
    for set_lang, columns in answer["bands"].items():
        _band(theme, fig, lang, set_lang, layers, columns["stream"], "y")
        _band(theme, fig, lang, set_lang, layers[1:], columns[lower], "y2")
    fig["data"].append(
        line(theme, text("models.series.own", lang), layers, own["stream"], PALETTE["black"], legendgroup="own")
    )
    if own[lower]:
        fig["data"].append(
            line(
                theme,
                text("models.series.own", lang),
                layers[1:],
                own[lower],
                PALETTE["black"],
                legendgroup="own",
                showlegend=False,
                yaxis="y2",
            )
        )
    if post:
        limit = reference(theme, text("models.series.pinned_limit", lang), layers[1:], 1.5, PALETTE["green"])
        fig["data"].append({**limit, "yaxis": "y2"})
    return finish(fig, theme)


def pinned_everywhere(rows: list[Json], set_lang: str) -> list[int]:
    """The blocks where every sentence of a set has its text tokens within 1.5× after the block's last norm."""
    spreads = [r["text_spread"] for r in rows if r["lang"] == set_lang and r["text_spread"]]
    if not spreads:
        return []
    return [b + 1 for b in range(len(spreads[0])) if all(s[b] is not None and s[b] <= 1.5 for s in spreads)]


def set_claim(answer: Json) -> Json:
    rows, own = answer["rows"], answer["own"]
    massive = [r["massive"] for r in rows if r["massive"]]
    first = [m for m in massive if m["token"] == 0]
    common = max({m["index"] for m in first}, key=lambda d: sum(m["index"] == d for m in first)) if first else None
    agreeing = [m for m in first if m["index"] == common and m["first_block"] is not None]
    return {
        "growth": answer["growth"],
        "own_growth": own["growth"],
        "massive_count": len(agreeing),
        "massive_dimension": common,
        "massive_block": min(m["first_block"] for m in agreeing) if agreeing else None,
        "pinned": {lang: pinned_everywhere(rows, lang) for lang in answer["bands"]},
        "unknown": {lang: sum(r["unknown"] for r in rows if r["lang"] == lang) for lang in answer["bands"]},
        "tokens": {lang: sum(r["tokens"] for r in rows if r["lang"] == lang) for lang in answer["bands"]},
        "sentences": len(rows),
    }


def set_caption(answer: Json, lang: str) -> str:
    claim, model = set_claim(answer), legend_name(answer, lang)
    blocks = answer["model"]["layers"]
    parts = [text("caption.models_set", lang)]
    for set_lang, growth in claim["growth"].items():
        if growth["median"] is not None:
            parts.append(
                text(
                    "models.caption.set_growth",
                    lang,
                    model=model,
                    blocks=blocks,
                    set=text(f"models.set.{set_lang}", lang),
                    **{k: fmt(growth[k], lang) for k in ("low", "high", "median")},
                )
            )
    if claim["own_growth"] is not None:
        parts.append(text("models.caption.set_own", lang, growth=fmt(claim["own_growth"], lang)))
    if claim["massive_count"]:
        parts.append(
            text(
                "models.caption.set_massive",
                lang,
                count=claim["massive_count"],
                total=claim["sentences"],
                d=claim["massive_dimension"],
                block=claim["massive_block"],
            )
        )
    if answer["model"]["family"] == "post_ln":
        pins = {k: blocks_text(v, lang, of=blocks) for k, v in claim["pinned"].items()}
        parts.append(text("models.caption.set_pinned", lang, model=model, **pins))
    parts.append(
        text(
            "models.caption.set_unknown",
            lang,
            model=model,
            en=claim["unknown"]["en"],
            zh=claim["unknown"]["zh"],
            en_total=claim["tokens"]["en"],
            zh_total=claim["tokens"]["zh"],
        )
    )
    return sentences(parts, lang)


def set_rows(answer: Json) -> list[Json]:
    out = []
    for row in [*answer["rows"], answer["own"]]:
        for layer, value in enumerate(row["stream"]):
            out.append(
                {
                    "set": row["lang"],
                    "sentence": row["text"],
                    "layer": layer,
                    "stream_without_first": value,
                    "first_token_ratio": row["first_ratio"][layer],
                    "attention_on_first": row["sink"][layer - 1] if row["sink"] and layer else None,
                    "text_spread": row["text_spread"][layer - 1] if row["text_spread"] and layer else None,
                }
            )
    return out


SET = chart_kind("real_set", Builder("models-set", set_figure, set_caption, set_claim, set_rows), STRINGS)
