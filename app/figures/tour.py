"""/: the tour's thumbnail, Post-LN against Pre-LN stream norms, and a caption of what the two measured: Post-LN's
length held at √d (with its largest deviation), Pre-LN's growth from the embedding to the last layer."""

from __future__ import annotations

import math

from .chart import Chart, ChartKind, Json, diff
from .compare import pinned
from .compare import stream as compare_stream
from .norms import is_pinned, pin_deviation
from .style import PLACEMENT_COLORS, SERIES, finish, hline, layout, line
from .words import direction, fmt, ratio, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "series.post_ln": ("Post-LN: N(x + f(x))", "Post-LN：N(x + f(x))"),
    "series.pre_ln": ("Pre-LN: x + f(N(x))", "Pre-LN：x + f(N(x))"),
    "chart.tour.title": (
        "Stream norm per layer in a {depth}-block Transformer: Post-LN vs Pre-LN",
        "{depth} 块 Transformer 每层的残差流范数：Post-LN 对比 Pre-LN",
    ),
    "caption.tour": (
        "Same sizes, initialisation and seed; only where the norm sits differs.",
        "尺寸、初始化和随机种子都相同，只有归一化的位置不同。",
    ),
    "caption.tour.pinned": (
        "Post-LN normalizes after every add: every layer's stream has length √{d} = {value} (off by at most {spread} %).",
        "Post-LN 每次相加后都归一化：每层残差流的长度都是 √{d} = {value}（偏差最多 {spread}%）。",
    ),
    "caption.tour.grew": (
        "Pre-LN adds each block's output to a stream nothing normalizes: it grew ×{ratio} from the embedding to layer "
        "{depth}.",
        "Pre-LN 把每个块的输出加到不做归一化的残差流上：从嵌入到第 {depth} 层增长为 {ratio} 倍。",
    ),
    "caption.tour.other": (
        "Pre-LN: from the embedding to layer {depth} the stream {change}.",
        "Pre-LN：从嵌入到第 {depth} 层，残差流{change}。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def stream(trace: Json) -> list[float | None]:
    return compare_stream(trace, "act_norm")


def figure(answer: Json, lang: str, theme: str) -> Json:
    depth = answer["depth"]
    fig: Json = {
        "data": [],
        "layout": layout(theme, text("chart.tour.title", lang, depth=depth), say({}, "axis.layer", lang),
                         say({}, "chart.norms.y", lang)),
    }  # fmt: skip
    x = list(range(depth + 1))
    for i, (position, trace) in enumerate(zip(answer["positions"], answer["traces"], strict=True)):
        color = PLACEMENT_COLORS.get(position, SERIES[i])
        fig["data"].append(line(theme, text(f"series.{position}_ln", lang), x, stream(trace), color))
    root = math.sqrt(answer["traces"][0]["config"]["d_model"])
    # Post-LN's points sit on the line and Pre-LN's rise above it: below, unless finish() finds the data leave more
    # room above (place_reference_labels)
    hline(theme, fig, root, say({}, "series.theory_post", lang, value=fmt(root, lang)), below=True)
    return finish(fig, theme)


def caption(answer: Json, lang: str) -> str:
    post, pre = answer["traces"]
    parts = [text("caption.tour", lang)]
    worst = pin_deviation(post)
    if is_pinned(post["config"]) and worst is not None:
        d = post["config"]["d_model"]
        spread = 100 * worst
        parts.append(text("caption.tour.pinned", lang, d=d, value=fmt(math.sqrt(d), lang), spread=fmt(spread, lang)))
    grown, moved = ratio(stream(pre)), direction(stream(pre))
    if moved == "grew" and grown is not None:
        parts.append(text("caption.tour.grew", lang, ratio=fmt(grown, lang), depth=answer["depth"]))
    else:
        change = say({}, f"compare.change.{moved}", lang, ratio="" if grown is None else fmt(grown, lang))
        parts.append(text("caption.tour.other", lang, depth=answer["depth"], change=change))
    return sentences(parts, lang)


def claim(answer: Json) -> Json:
    post, pre = answer["traces"]
    return {"post_pinned": pinned(post), "pre_direction": direction(stream(pre)), "pre_ratio": ratio(stream(pre))}


def rows(answer: Json) -> list[Json]:
    out = []
    for position, trace in zip(answer["positions"], answer["traces"], strict=True):
        out.append({"norm_position": position, "layer": 0, **trace["embedding"]})
        out += [{"norm_position": position, **layer} for layer in trace["layers"]]
    return out


def build(answer: Json, lang: str = "en") -> Chart:
    normal, slide = figure(answer, lang, "normal"), figure(answer, lang, "slide")
    return Chart("tour", normal, caption(answer, lang), claim(answer), rows(answer), {"slide": diff(normal, slide)})


CHART = ChartKind("tour", "tour", build, STRINGS)
