"""/models: the massive activation as a bias (Sun et al. 2024, section 3.1): at the block that writes the massive
coordinate, its value is set to its mean over the sentence set, to 0, or to what an ordinary token holds there, and
each sentence's next-token loss is compared with the unpatched one (app/experiments/real_intervention.py).

The caption says "as Sun et al. found in LLaMA2" only where the numbers say it: the median change at the mean at
most a tenth of the change at 0, and the change at 0 above 1 nat."""

from __future__ import annotations

from .chart import Json
from .real_common import STRINGS as COMMON
from .real_common import Builder, chart_kind, legend_name
from .real_set import SET_COLORS
from .style import PALETTE, escape, finish, layout, theme_of
from .words import fmt, say, sentences

LIKE_PAPER_MEAN = 0.1  # |median change| at the mean at most this × the change at 0 ...
LIKE_PAPER_ZERO = 1.0  # ... and the change at 0 above 1 nat: "as Sun et al. found in LLaMA2"

STRINGS: dict[str, tuple[str, str]] = {
    "chart.models_intervention.title": (
        "Set the massive coordinate, watch the next-token loss",
        "改写巨大分量，观察下一词元损失",
    ),
    "chart.models_intervention.y": ("change of the loss (nats)", "损失的变化（奈特）"),
    "models.patch.mean": ("set to its mean", "设为其均值"),
    "models.patch.zero": ("set to 0", "设为 0"),
    "models.patch.others": ("set to an ordinary token's", "设为普通词元的值"),
    "models.series.median_of": ("{set}: median", "{set}：中位数"),
    "caption.models_intervention": (
        "At the block that writes the massive coordinate, its value is replaced for the rest of the forward pass; "
        "each point is one sentence's change of the mean next-token cross-entropy.",
        "在写入巨大分量的那个块，把它的值替换掉并继续前向计算；每个点是一个句子的下一词元平均交叉熵的变化。",
    ),
    "models.caption.intervention": (
        "{model}: block {block} writes dimension {d} ({mean} on average over the set's massive tokens). Set to that "
        "mean, the loss changes by {mean_change} nats (median over {count} sentences); set to 0, by {zero_change}; "
        "set to an ordinary token's {others} (token 0 excluded), by {others_change}.",
        "{model}：第 {block} 块写入第 {d} 维（句子集中巨大分量所在词元的平均值为 {mean}）。设为该均值，损失变化 "
        "{mean_change} 奈特（{count} 个句子的中位数）；设为 0，变化 {zero_change}；设为普通词元的值 {others}"
        "（不计第 0 个词元），变化 {others_change}。",
    ),
    "models.caption.like_paper": (
        "As Sun et al. 2024 found in LLaMA2: the value is nearly the same whatever the sentence, and the model needs "
        "it there, like a fixed bias.",
        "与 Sun 等 2024 在 LLaMA2 中的发现一致：这个值几乎不随句子变化，而模型需要它，就像一个固定的偏置。",
    ),
    "models.caption.unlike_paper": (
        "Unlike what Sun et al. 2024 found in LLaMA2 (little change at the mean, a large one at 0).",
        "与 Sun 等 2024 在 LLaMA2 中的发现不同（设为均值几乎无变化，设为 0 变化很大）。",
    ),
    "models.caption.intervention_own": (
        "Your sentence: {mean}, {zero}, {others}.",
        "你的句子：{mean}、{zero}、{others}。",
    ),
    "models.no_intervention.encoder": (
        "{model} has no next-token loss (an encoder): the intervention needs a causal language model.",
        "{model} 没有下一词元损失（编码器）：这个干预需要因果语言模型。",
    ),
    "models.no_intervention.no_massive": (
        "No coordinate of {model} meets Sun et al.'s criterion on this set: there is nothing to set.",
        "在这个句子集上，{model} 没有任何分量满足 Sun 等的标准：没有可改写的值。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say({**COMMON, **STRINGS}, key, lang, **values)


OFFSET = {"en": -0.18, "zh": 0.18}  # each set's points left and right of their patch's position
SPREAD = 0.12  # the points of one set spread evenly over this width (a strip chart, no random jitter)


def _strip(theme: str, found: Json, set_lang: str, lang: str) -> list[Json]:
    """One set's points per patch, spread side by side, and its median per patch as a short bar."""
    rows = [r for r in found["rows"] if r["lang"] == set_lang]
    name, color, size = text(f"models.set.{set_lang}", lang), SET_COLORS[set_lang], theme_of(theme)["marker"]
    x, y, hover = [], [], []
    for position, patch in enumerate(found["patches"]):
        for i, row in enumerate(rows):
            if row["change"][patch] is not None:
                x.append(position + OFFSET[set_lang] + SPREAD * (i / max(1, len(rows) - 1) - 0.5))
                y.append(row["change"][patch])
                hover.append(escape(row["text"][:40]))
    medians = [(p, found["median_" + set_lang][patch]) for p, patch in enumerate(found["patches"])]
    kept = [(p + OFFSET[set_lang], m) for p, m in medians if m is not None]
    return [
        {"type": "scatter", "mode": "markers", "name": name, "x": x, "y": y, "customdata": hover,
         "marker": {"color": color, "size": size, "opacity": 0.75}, "legendgroup": set_lang,
         "hovertemplate": "%{y:.3g}: %{customdata}<extra></extra>"},
        {"type": "scatter", "mode": "markers", "name": text("models.series.median_of", lang, set=name),
         "x": [p for p, _ in kept], "y": [m for _, m in kept], "legendgroup": set_lang, "showlegend": False,
         "marker": {"color": color, "symbol": "line-ew-open", "size": size * 4, "line": {"width": 3, "color": color}},
         "hovertemplate": "%{y:.3g}<extra></extra>"},
    ]  # fmt: skip


def patch_figure(answer: Json, lang: str, theme: str) -> Json:
    title = f"{text('chart.models_intervention.title', lang)} · {legend_name(answer, lang)}"
    fig: Json = {"data": [], "layout": layout(theme, title, "", text("chart.models_intervention.y", lang))}
    fig["layout"]["hovermode"] = "closest"
    found = answer["intervention"]
    if found is None:
        return finish(fig, theme)
    for set_lang in SET_COLORS:
        fig["data"] += _strip(theme, found, set_lang, lang)
    own = answer.get("own_intervention")
    if own:
        kept = [
            (p, own["change"][patch]) for p, patch in enumerate(found["patches"]) if own["change"][patch] is not None
        ]
        fig["data"].append(
            {"type": "scatter", "mode": "markers", "name": text("models.series.own", lang), "x": [p for p, _ in kept],
             "y": [v for _, v in kept], "marker": {"color": PALETTE["black"], "symbol": "diamond", "size": 12},
             "hovertemplate": "%{y:.3g}<extra></extra>"}
        )  # fmt: skip
    positions = list(range(len(found["patches"])))
    fig["layout"]["xaxis"].update(tickvals=positions, ticktext=[text(f"models.patch.{p}", lang) for p in found["patches"]],
                                  range=[-0.5, len(positions) - 0.5], showgrid=False)  # fmt: skip
    return finish(fig, theme)


def patch_claim(answer: Json) -> Json:
    found = answer["intervention"]
    if found is None:
        return {"absent": answer["intervention_absent"]}
    median = found["median"]
    like = (
        median["zero"] is not None
        and median["mean"] is not None
        and median["zero"] > LIKE_PAPER_ZERO
        and abs(median["mean"]) <= LIKE_PAPER_MEAN * median["zero"]
    )
    counted = [r for r in found["rows"] if r["change"]["mean"] is not None]
    return {
        "absent": None,
        "block": found["block"],
        "dimension": found["dimension"],
        "values": found["values"],
        "median": median,
        "sentences": len(counted),
        "like_paper": like,
        "own": answer["own_intervention"]["change"] if answer.get("own_intervention") else None,
    }


def patch_caption(answer: Json, lang: str) -> str:
    claim, model = patch_claim(answer), legend_name(answer, lang)
    if claim["absent"]:
        return sentences(
            [
                text("caption.models_intervention", lang),
                text(f"models.no_intervention.{claim['absent']}", lang, model=model),
            ],
            lang,
        )
    median, values = claim["median"], claim["values"]
    parts = [
        text("caption.models_intervention", lang),
        text(
            "models.caption.intervention",
            lang,
            model=model,
            block=claim["block"],
            d=claim["dimension"],
            mean=fmt(values["mean"], lang),
            others=fmt(values["others"], lang),
            count=claim["sentences"],
            **{f"{p}_change": fmt(median[p], lang) for p in ("mean", "zero", "others")},
        ),
        text("models.caption.like_paper" if claim["like_paper"] else "models.caption.unlike_paper", lang),
    ]
    if claim["own"]:
        parts.append(
            text(
                "models.caption.intervention_own",
                lang,
                **{p: fmt(claim["own"][p], lang) for p in ("mean", "zero", "others")},
            )
        )
    return sentences(parts, lang)


def patch_rows(answer: Json) -> list[Json]:
    found = answer["intervention"]
    if found is None:
        return []
    rows = [*found["rows"], *([answer["own_intervention"]] if answer.get("own_intervention") else [])]
    return [
        {
            "set": r["lang"],
            "sentence": r["text"],
            "loss": r["loss"],
            "tokens_set": r["tokens"],
            **{f"change_{p}": r["change"][p] for p in found["patches"]},
        }
        for r in rows
    ]


PATCH = chart_kind(
    "real_set", Builder("models-intervention", patch_figure, patch_caption, patch_claim, patch_rows), STRINGS
)
