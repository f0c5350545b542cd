"""/compare: 2 to 4 variants in aligned panels, norms on top and gradients below, every row on one shared y axis so
heights compare directly. The norms row turns logarithmic when its values span more than three decades (a variant
that explodes would flatten the others on a linear axis); the caption says of each variant what its own numbers
show: the stream held at √d, flat, grown or shrunk, and the gradient's verdict at layer 1."""

from __future__ import annotations

import math
import re

from .. import numbers
from ..config import PRESETS
from . import norms
from .chart import Chart, ChartKind, Json, diff
from .gradients import survival, verdict
from .style import PLACEMENT_COLORS, SERIES, axis, escape, finish, finite, layout, line, theme_of, wants_log
from .words import direction, fmt, ratio, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.compare.title": ("Norms (top) and gradients (bottom), same axes", "范数（上）与梯度（下），坐标轴相同"),
    "chart.compare.y_norm": ("‖x_l‖", "‖x_l‖"),
    "chart.compare.y_grad": ("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"),
    "compare.custom_name": ("Custom", "自定义"),
    "caption.compare": (
        "Top row: how long the stream is after each layer. Bottom row: how much gradient each layer receives. "
        "Measured here:",
        "上排：每层之后残差流的长度。下排：每层收到的梯度大小。本次测得：",
    ),
    "caption.compare.pinned": (
        "{name}: the stream held at √d_model = {root} after every layer (off by at most {spread} %); layer 1 gets "
        "{survival} × the last layer's gradient: {verdict}.",
        "{name}：残差流每层之后都保持在 √d_model = {root}（偏差最多 {spread}%）；第 1 层的梯度是最后一层的 "
        "{survival} 倍：{verdict}。",
    ),
    "caption.compare.variant": (
        "{name}: the stream {change} from the embedding to layer {depth}; layer 1 gets {survival} × the last "
        "layer's gradient: {verdict}.",
        "{name}：残差流从嵌入到第 {depth} 层{change}；第 1 层的梯度是最后一层的 {survival} 倍：{verdict}。",
    ),
    "compare.change.grew": ("grew ×{ratio}", "增长为 {ratio} 倍"),
    "compare.change.shrank": ("shrank to ×{ratio}", "缩小为 {ratio} 倍"),
    "compare.change.flat": ("stayed within ×1.2 (×{ratio})", "保持在 1.2 倍以内（{ratio} 倍）"),
    "compare.change.overflow": ("overflowed to inf/NaN", "溢出为 inf/NaN"),
    "compare.change.underflow": ("shrank to exactly 0 (underflow)", "缩小为 0（下溢）"),
    "caption.compare.cost": (
        "{name}: {params} parameters, {macs} multiply-adds a forward pass.",
        "{name}：{params} 个参数，每次前向 {macs} 次乘加。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def name_of(variant: Json, lang: str) -> str:
    """The column's title: the preset's name (or Custom) and the variant's own changes."""
    key = variant["key"]
    preset = PRESETS.get(key)
    name = text("compare.custom_name", lang) if preset is None else preset["name_zh" if lang == "zh" else "name"]
    return f"{name} + {variant['changes']}" if variant["changes"] else name


def short_name(variant: Json, lang: str) -> str:
    """A narrow column's title (a phone, four columns): the name in brackets where a preset has one ("Original
    Transformer (Post-LN)" -> "Post-LN"), else the whole title."""
    full = name_of(variant, lang)
    inner = re.search(r"[（(]([^（()）]+)[)）]$", full)
    return inner[1] if inner and not variant["changes"] else full


def column_colors(variants: list[Json]) -> list[str]:
    """One colour a column: the first Post-LN and the first Pre-LN (LayerNorm before the branch, the identity shortcut)
    take the colours every other view gives them, the rest the series colours left, in order."""
    colors: list[str | None] = [None] * len(variants)
    for position, color in PLACEMENT_COLORS.items():
        for c, variant in enumerate(variants):
            config = variant["trace"]["config"]
            if colors[c] is None and config["norm_position"] == position and config["residual"] == "identity":
                colors[c] = color
                break
    left = iter(color for color in SERIES if color not in colors)
    return [color or next(left) for color in colors]


def stream(trace: Json, field: str) -> list[float | None]:
    """Layer 0 (the embedding) and every block's value, overflows as gaps."""
    return finite(norms.stream(trace, field))


def pinned(trace: Json) -> bool:
    """A norm after the add that pins every token at √d, with no length overflowed."""
    return norms.is_pinned(trace["config"]) and norms.pin_deviation(trace) is not None


def figure(answer: Json, lang: str, theme: str, norm_log: bool) -> Json:
    style = theme_of(theme)
    variants = answer["variants"]
    n = len(variants)
    fig: Json = {"data": [], "layout": layout(theme, text("chart.compare.title", lang), "", "")}
    lay = fig["layout"]
    lay.update(grid={"rows": 2, "columns": n, "pattern": "independent", "xgap": 0.06, "ygap": 0.16},
               hovermode="closest", showlegend=False)  # fmt: skip
    lay["margin"]["t"] = style["title"] * 2 + style["font"] * 2.6  # room for the column titles under the title
    del lay["xaxis"], lay["yaxis"]
    rows = [(text("chart.compare.y_norm", lang), norm_log), (text("chart.compare.y_grad", lang), True)]

    def axis_id(r: int, c: int) -> int:
        return r * n + c + 1

    def ref(letter: str, i: int) -> str:
        return letter if i == 1 else f"{letter}{i}"

    colors = column_colors(variants)
    for r, (title, log) in enumerate(rows):
        for c, variant in enumerate(variants):
            i = axis_id(r, c)
            suffix = "" if i == 1 else str(i)
            x_axis = axis(style, say({}, "axis.layer", lang) if r == 1 else "")
            y_axis = axis(style, title if c == 0 else "", log=log)
            if i != 1:
                x_axis["matches"] = "x"
            if c != 0:
                y_axis.update(matches=ref("y", axis_id(r, 0)), showticklabels=False)
            lay[f"xaxis{suffix}"], lay[f"yaxis{suffix}"] = x_axis, y_axis
            if r == 0:
                lay["annotations"].append(
                    {"name": "column-title", "xref": f"{ref('x', i)} domain", "x": 0.5, "yref": f"{ref('y', i)} domain",
                     "y": 1.02, "yanchor": "bottom", "text": f"<b>{escape(name_of(variant, lang))}</b>", "showarrow": False,
                     "font": {"size": style["font"] + 1, "color": colors[c]}}
                )  # fmt: skip
    # what the page shows in a column too narrow for its title (static/js/fit.js); Plotly ignores `meta`
    lay["meta"] = {"column_short": [short_name(v, lang) for v in variants]}
    for c, variant in enumerate(variants):
        trace = variant["trace"]
        x = list(range(trace["config"]["depth"] + 1))
        name = name_of(variant, lang)
        for r, (field, symbol, dash) in enumerate(
            (("act_norm", "‖x_l‖", "solid"), ("grad_norm", "‖∂loss/∂x_l‖", "dash"))
        ):
            i = axis_id(r, c)
            fig["data"].append(
                line(theme, f"{name}: {symbol}", x, stream(trace, field), colors[c], dash=dash,
                     xaxis=ref("x", i), yaxis=ref("y", i))
            )  # fmt: skip
    return finish(fig, theme)


def norm_log(answer: Json) -> bool:
    """The norms row on a log axis when the variants' norms together span more than three decades."""
    return wants_log(*(stream(v["trace"], "act_norm") for v in answer["variants"]))


def sentence(variant: Json, lang: str) -> str:
    trace = variant["trace"]
    name, depth = name_of(variant, lang), trace["config"]["depth"]
    gain = survival(trace)
    shown = say({}, "mark.overflowed", lang) if gain is None else fmt(gain, lang)
    word = say({}, f"verdict.{verdict(gain)}", lang)
    act = stream(trace, "act_norm")
    worst = norms.pin_deviation(trace)
    if norms.is_pinned(trace["config"]) and worst is not None:
        root = math.sqrt(trace["config"]["d_model"])
        spread = fmt(100 * worst, lang)
        return text("caption.compare.pinned", lang, name=name, root=fmt(root, lang), spread=spread,
                    survival=shown, verdict=word)  # fmt: skip
    moved = direction(act)
    grown = ratio(act)
    change = text(f"compare.change.{moved}", lang, ratio="" if grown is None else fmt(grown, lang))
    return text("caption.compare.variant", lang, name=name, change=change, depth=depth, survival=shown, verdict=word)


def caption(answer: Json, lang: str) -> str:
    variants = answer["variants"]
    parts = [text("caption.compare", lang), *(sentence(v, lang) for v in variants)]
    sizes = {v["trace"]["summary"]["parameters"] for v in variants}
    if len(sizes) > 1:  # what each costs when the variants differ in size (DenseFormer's weights, highway gates)
        parts += [
            text("caption.compare.cost", lang, name=name_of(v, lang),
                 params=numbers.fmt(v["trace"]["summary"]["parameters"], digits=0, count=True, lang=lang),
                 macs=numbers.fmt(v["trace"]["summary"]["forward_macs"], count=True, lang=lang))
            for v in variants
        ]  # fmt: skip
    return sentences(parts, lang)


def claim(answer: Json) -> Json:
    """What the caption states, per variant: pinned or the stream's direction and ratio, the gradient's ratio and
    verdict; and whether the norms row is logarithmic."""
    out = []
    for v in answer["variants"]:
        act = stream(v["trace"], "act_norm")
        gain = survival(v["trace"])
        out.append({"key": v["key"], "pinned": pinned(v["trace"]), "direction": direction(act), "ratio": ratio(act),
                    "survival": gain, "verdict": verdict(gain)})  # fmt: skip
    return {"variants": out, "norm_log": norm_log(answer)}


def rows(answer: Json) -> list[Json]:
    """Every variant's layers as the trace gives them (layer 0 = the embedding), with the variant's key."""
    out = []
    for v in answer["variants"]:
        trace = v["trace"]
        out.append({"variant": v["key"], "changes": v["changes"], "layer": 0, **trace["embedding"]})
        out += [{"variant": v["key"], "changes": v["changes"], **layer} for layer in trace["layers"]]
    return out


def scale_patch(answer: Json, row: int, log: bool) -> Json:
    n = len(answer["variants"])
    axes = [f"yaxis{'' if row * n + c + 1 == 1 else row * n + c + 1}" for c in range(n)]
    return {"layout": {name: {"type": "log" if log else "linear"} for name in axes}}


def build(answer: Json, lang: str = "en") -> Chart:
    log = norm_log(answer)
    normal, slide = figure(answer, lang, "normal", log), figure(answer, lang, "slide", log)
    patches = {
        "slide": diff(normal, slide),
        "norm_log": scale_patch(answer, 0, True),
        "norm_linear": scale_patch(answer, 0, False),
        "grad_log": scale_patch(answer, 1, True),
        "grad_linear": scale_patch(answer, 1, False),
    }
    return Chart("compare", normal, caption(answer, lang), claim(answer), rows(answer), patches)


CHART = ChartKind("compare", "compare", build, STRINGS)
