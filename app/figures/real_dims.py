"""/models: the massive activation as what it is, one coordinate of the stream (Sun et al. 2024, section 2).

Top: |x_l[d]| of the four dimensions with the largest value after any block, each at the token where it peaks,
against the layer's median |activation| (and, in a Post-LN model, γ[d] of each block's last LayerNorm, which
bounds what that coordinate can hold). Bottom: what each block's attention and MLP add to the first of them at its
token: where it is written and where it is removed."""

from __future__ import annotations

import math

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import Builder, chart_kind, legend_name, token_label
from .style import PALETTE, SERIES, axis, finish, layout, line, theme_of
from .words import fmt, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_dims.title": ("The largest coordinates of the stream", "残差流中最大的分量"),
    "chart.models_dims.y": ("|x_l[d]|", "|x_l[d]|"),
    "chart.models_dims.y2": ("added to x[{d}]", "加到 x[{d}] 上"),
    "models.series.dim": ("d = {d} (token {token})", "d = {d}（词元 {token}）"),
    "models.series.gain": ("|γ[{d}]| of the last LayerNorm", "最后一个 LayerNorm 的 |γ[{d}]|"),
    "models.series.median": ("median |activation| of the layer", "该层激活绝对值的中位数"),
    "models.series.add_attention": ("attention adds", "注意力加入"),
    "models.series.add_mlp": ("MLP adds", "MLP 加入"),
    "caption.models_dims": (
        "Top: each line is one coordinate d of the stream at the token where it peaks; the dotted line is the "
        "layer's median |activation|. Bottom: what each block's attention and MLP add to the first of them.",
        "上：每条线是残差流的一个分量 d（取其峰值所在的词元）；点线是该层激活绝对值的中位数。"
        "下：每个块的注意力和 MLP 向其中第一个分量加入的量。",
    ),
    "models.caption.dim": (
        "{model}: dimension {d} of token {token} holds {value} after block {layer}, {ratio}× the layer's median: "
        "{verdict}. Block {written}'s {written_by} writes the most into it ({written_amount}), block {removed}'s "
        "{removed_by} removes the most ({removed_amount}).",
        "{model}：词元 {token} 的第 {d} 维在第 {layer} 块后为 {value}，是该层中位数的 {ratio} 倍：{verdict}。"
        "第 {written} 块的{written_by}写入最多（{written_amount}），第 {removed} 块的{removed_by}移除最多（{removed_amount}）。",
    ),
    "models.caption.dim_post": (
        "{model}: dimension {d} of token {token} holds {value} after block {layer}, {ratio}× the layer's median: "
        "{verdict}. Post-LN: the branches add to the sum before each LayerNorm, which rescales it; the largest "
        "addition is block {written}'s {written_by} ({written_amount}), the largest subtraction block {removed}'s "
        "{removed_by} ({removed_amount}). The last LayerNorm's gain at dimension {d}: {gain}.",
        "{model}：词元 {token} 的第 {d} 维在第 {layer} 块后为 {value}，是该层中位数的 {ratio} 倍：{verdict}。"
        "Post-LN：各分支加在每个 LayerNorm 之前的和上，再由 LayerNorm 重新缩放；加得最多的是第 {written} 块的"
        "{written_by}（{written_amount}），减得最多的是第 {removed} 块的{removed_by}（{removed_amount}）。"
        "最后一个 LayerNorm 在第 {d} 维的增益：{gain}。",
    ),
    "models.massive.yes": (
        "a massive activation by Sun et al. 2024's criterion (|a| > 100 and ≥ 1000× the median)",
        "按 Sun 等 2024 的标准（|a| > 100 且 ≥ 中位数的 1000 倍）是巨大激活",
    ),
    "models.massive.no": (
        "not a massive activation by Sun et al. 2024's criterion (|a| > 100 and ≥ 1000× the median)",
        "按 Sun 等 2024 的标准（|a| > 100 且 ≥ 中位数的 1000 倍）不是巨大激活",
    ),
    "models.caption.found": (
        "{count} activations of this sentence meet the criterion.",
        "该句中有 {count} 个激活满足该标准。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


def dims_figure(trace: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_dims.title', lang)} · {legend_name(trace, lang)}"
    fig: Json = {
        "data": [],
        "layout": layout(theme, title, text("models.axis.layer", lang), text("chart.models_dims.y", lang), ylog=True),
    }
    massive, layers = trace["massive"], trace["layers"]
    fig["layout"]["yaxis"]["domain"] = [0.45, 1]
    for i, row in enumerate(massive["dimensions"]):
        name = text("models.series.dim", lang, d=row["index"], token=token_label(trace["tokens"][row["token"]]))
        fig["data"].append(line(theme, name, layers, [abs(v) for v in row["stream"]], SERIES[i % 4]))
        if row["gain"]:
            gain = [abs(g) for g in row["gain"]]
            fig["data"].append(
                line(
                    theme,
                    text("models.series.gain", lang, d=row["index"]),
                    layers[1:],
                    gain,
                    SERIES[i % 4],
                    dash="dash",
                    markers=False,
                    width=0.6,
                )
            )
    fig["data"].append(
        line(
            theme,
            text("models.series.median", lang),
            layers,
            massive["median_abs"],
            PALETTE["black"],
            dash="dot",
            markers=False,
        )
    )
    if massive["dimensions"]:
        first = massive["dimensions"][0]
        fig["layout"]["xaxis"]["anchor"] = "y2"  # the layer axis under the lower panel
        fig["layout"]["yaxis2"] = {
            **axis(theme_of(theme), text("chart.models_dims.y2", lang, d=first["index"])),
            "domain": [0, 0.33],
            "anchor": "x",
        }
        for kind, color in (("attention", PALETTE["sky"]), ("mlp", PALETTE["orange"])):
            fig["data"].append(
                {
                    "type": "bar",
                    "name": text(f"models.series.add_{kind}", lang),
                    "x": layers[1:],
                    "y": first[kind],
                    "yaxis": "y2",
                    "marker": {"color": color},
                    "hovertemplate": "%{y:.4g}<extra></extra>",
                }
            )
        fig["layout"]["barmode"] = "group"
    return finish(fig, theme)


def dims_claim(trace: Json) -> Json:
    massive = trace["massive"]
    if not massive["dimensions"]:
        return {"dimension": None, "found_total": massive["found_total"]}
    row = massive["dimensions"][0]
    magnitudes = [abs(v) for v in row["stream"]]
    layer = max(range(1, len(magnitudes)), key=lambda l: magnitudes[l])
    median = massive["median_abs"][layer]
    ratio = magnitudes[layer] / median if median else math.inf
    sign = 1.0 if row["stream"][layer] >= 0 else -1.0  # "written" grows |x[d]| in its own direction
    writes = [(v * sign, b + 1, "mlp") for b, v in enumerate(row["mlp"])]
    writes += [(v * sign, b + 1, "attention") for b, v in enumerate(row["attention"])]
    written, removed = max(writes), min(writes)
    criterion = massive["criterion"]
    return {
        "dimension": row["index"],
        "token": row["token"],
        "value": row["stream"][layer],
        "layer": layer,
        "ratio": ratio if math.isfinite(ratio) else None,
        "massive": magnitudes[layer] > criterion["min_abs"] and ratio >= criterion["min_ratio_to_median"],
        "written_block": written[1],
        "written_by": written[2],
        "written": written[0] * sign,
        "removed_block": removed[1],
        "removed_by": removed[2],
        "removed": removed[0] * sign,
        "gain": row["gain"][-1] if row["gain"] else None,
        "found_total": massive["found_total"],
    }


def dims_caption(trace: Json, lang: str) -> str:
    claim = dims_claim(trace)
    if claim["dimension"] is None:
        return text("caption.models_dims", lang)
    values = {
        "model": legend_name(trace, lang),
        "d": claim["dimension"],
        "layer": claim["layer"],
        "token": token_label(trace["tokens"][claim["token"]]),
        "value": fmt(claim["value"], lang),
        "ratio": fmt(claim["ratio"], lang),
        "verdict": text("models.massive.yes" if claim["massive"] else "models.massive.no", lang),
        "written": claim["written_block"],
        "written_by": say(COMMON, f"models.branch.{claim['written_by']}", lang),
        "written_amount": fmt(claim["written"], lang),
        "removed": claim["removed_block"],
        "removed_by": say(COMMON, f"models.branch.{claim['removed_by']}", lang),
        "removed_amount": fmt(claim["removed"], lang),
        "gain": fmt(claim["gain"], lang),
    }
    key = "models.caption.dim_post" if trace.get("post_ln") else "models.caption.dim"
    return sentences(
        [
            text("caption.models_dims", lang),
            text(key, lang, **values),
            text("models.caption.found", lang, count=claim["found_total"]),
        ],
        lang,
    )


def dims_rows(trace: Json) -> list[Json]:
    massive = trace["massive"]
    return [
        {
            "dimension": row["index"],
            "token": row["token"],
            "layer": layer,
            "value": row["stream"][l],
            "attention": row["attention"][l - 1] if l else None,
            "mlp": row["mlp"][l - 1] if l else None,
            "gain": row["gain"][l - 1] if l and row["gain"] else None,
            "median_abs": massive["median_abs"][l],
        }
        for row in massive["dimensions"]
        for l, layer in enumerate(trace["layers"])
    ]


DIMS = chart_kind("real_trace", Builder("models-dims", dims_figure, dims_caption, dims_claim, dims_rows), STRINGS)
