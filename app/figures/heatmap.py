"""/gradients' heatmap: one stack built at every depth of a sweep, the gradient reaching each layer, on a log colour
scale; relative: each row ÷ its last layer (white = arrives intact, red = faded, blue = grew). The row of the model
the profile above shows is described from its own numbers (the profile's rules: app/figures/gradients.py)."""

from __future__ import annotations

import math

from .chart import Chart, ChartKind, Json, diff
from .gradients import faint, ratio_text, survival, verdict
from .style import finish, layout, theme_of
from .words import say, sentences

# ColorBrewer RdBu (colour-blind safe): red = below 1 (signal lost), white = 1, blue = above 1 (amplified).
DIVERGING = [[0, "#b2182b"], [0.25, "#ef8a62"], [0.5, "#f7f7f7"], [0.75, "#67a9cf"], [1, "#2166ac"]]
STRINGS: dict[str, tuple[str, str]] = {
    "chart.grad_heatmap.title": ("Gradient reaching each layer, for every depth", "每个深度下到达各层的梯度"),
    "chart.grad_heatmap.colorbar": ("‖∂loss/∂x_l‖ (log)", "‖∂loss/∂x_l‖（对数）"),
    "chart.grad_heatmap.colorbar_rel": ("÷ last layer (log)", "÷ 最后一层（对数）"),
    "caption.grad_heatmap": (
        "One row per network depth L (this stack built with 1 to {max} blocks), one column per layer; log colour scale.",
        "每一行是一个深度 L（同一结构分别用 1 到 {max} 个块构建），每一列是一层；颜色为对数刻度。",
    ),
    "caption.grad_heatmap.relative": (
        "Each cell is that layer's gradient divided by the last layer's: white = the signal arrives intact, "
        "red = it faded on the way back (those layers would barely learn), blue = it grew.",
        "每格是该层梯度除以最后一层梯度：白色 = 信号完整到达，红色 = 回传途中衰减（这些层几乎学不到东西），蓝色 = 被放大。",
    ),
    "caption.grad_heatmap.grey": (
        "Grey = that network has no such layer, or the value is not finite (inf/NaN).",
        "灰色 = 该网络没有这一层，或数值不是有限数（inf/NaN）。",
    ),
    "caption.grad_heatmap.model_row": (
        "Row {depth}, the model above: layer 1 gets {ratio} × the last layer's gradient, {verdict}; {faint} of its "
        "{layers} layers get less than a tenth of it.",
        "第 {depth} 行即上图的模型：第 1 层的梯度是最后一层的 {ratio} 倍，{verdict}；{layers} 层中有 {faint} 层"
        "收到的梯度不到最后一层的十分之一。",
    ),
    "caption.grad_heatmap.absolute": (
        "Each cell is the gradient's size itself: dark cells on the left of a row mean the first layers of that "
        "network get almost no signal.",
        "每格是梯度本身的大小：某一行左侧的深色格子表示该网络的前几层几乎收不到信号。",
    ),
}
MISSING = "#bdbdbd"  # grey: that network has no such layer, or the value is not finite
DIGITS = 3  # significant digits of the values the hover box shows (it prints 3; the CSV rows are exact)
DECADE_PLACES = 2  # the colours' log10 to 0.01 decade (2 %): finer than any colour scale shows


def _round(value: float | None, digits: int = DIGITS) -> float | None:
    return None if value is None else float(f"{value:.{digits}g}")


def values(answer: Json) -> tuple[list[int], list[int], list[list[float | None]]]:
    """(layers 0..upto, depths 1..upto, value per depth and layer): a row's gradients (the embedding's first),
    ÷ its last layer's when relative; None where the network has no such layer or the value is not finite."""
    upto = answer["upto"]
    layers, depths = list(range(upto + 1)), list(range(1, upto + 1))
    by_depth = {row["depth"]: row for row in answer["rows"]}
    grid: list[list[float | None]] = []
    for depth in depths:
        row = by_depth.get(depth)
        if row is None:
            grid.append([None] * len(layers))
            continue
        grads = [row["embedding_grad_norm"], *row["grad_norm"]]
        last = grads[-1]
        scale = last if answer["relative"] else 1.0
        usable = scale is not None and math.isfinite(scale) and scale > 0
        grid.append([
            g / scale if usable and g is not None and math.isfinite(g) else None
            for g in grads + [None] * (len(layers) - len(grads))
        ])  # fmt: skip
    return layers, depths, grid


def colour_range(z: list[list[float | None]], relative: bool) -> tuple[int, int]:
    """Whole decades around the data; symmetric around log10(1) = 0 when relative, so white means "intact"."""
    flat = [v for row in z for v in row if v is not None]
    low, high = (math.floor(min(flat)), math.ceil(max(flat))) if flat else (0, 1)
    if high == low:
        high = low + 1
    if relative:
        high = max(1, -low, high)
        low = -high
    return low, high


def colour_tick(v: int, relative: bool) -> str:
    """×0.01 … ×100 as plain numbers, powers of ten beyond (×10⁶, not ×1000000), as the log axes write them."""
    plain = f"{10.0**v:g}" if abs(v) <= 2 else f"10<sup>{v}</sup>"
    return f"×{plain}" if relative else plain


def figure(answer: Json, lang: str, theme: str) -> Json:
    layers, depths, grid = values(answer)
    relative, upto = answer["relative"], answer["upto"]
    z = [[round(math.log10(v), DECADE_PLACES) if v is not None and v > 0 else None for v in row] for row in grid]
    low, high = colour_range(z, relative)
    step = max(1, math.ceil((high - low) / 8))
    ticks = list(range(low, high + 1, step))
    font = theme_of(theme)["font"]
    colorbar = say(STRINGS, "chart.grad_heatmap.colorbar_rel" if relative else "chart.grad_heatmap.colorbar", lang)
    fig: Json = {
        "data": [{
            "type": "heatmap", "x": layers, "y": depths, "z": z,
            "customdata": [[_round(v) for v in row] for row in grid],
            "colorscale": DIVERGING if relative else "Viridis", "zmin": low, "zmax": high, "hoverongaps": False,
            "hovertemplate": "L=%{y}, l=%{x}: %{customdata:.3g}<extra></extra>",
            "colorbar": {"title": {"text": colorbar, "side": "right", "font": {"size": font}}, "tickvals": ticks,
                         "ticktext": [colour_tick(v, relative) for v in ticks], "tickfont": {"size": font},
                         "thickness": font + 4},
        }],
        "layout": layout(theme, say(STRINGS, "chart.grad_heatmap.title", lang), say({}, "axis.layer", lang),
                         say({}, "axis.depth", lang)),
    }  # fmt: skip
    fig["layout"].update(hovermode="closest", plot_bgcolor=MISSING)
    fig["layout"]["xaxis"].update(showgrid=False, range=[-0.5, upto + 0.5])
    fig["layout"]["yaxis"].update(showgrid=False, range=[0.5, upto + 0.5])
    return finish(fig, theme)


def claim(answer: Json) -> Json:
    """The model row's numbers (the sweep's own config depth, when that row is drawn): layer 1 ÷ the last layer,
    its verdict, and how many of its blocks with a finite gradient get under a tenth of the last block's."""
    depth = answer["config"]["depth"]
    row = next((r for r in answer["rows"] if r["depth"] == depth), None)
    model: Json | None = None
    if row is not None and depth >= 2:
        trace = {"layers": [{"grad_norm": g} for g in row["grad_norm"]]}
        ratio = survival(trace)
        weak, finite_blocks = faint(trace)
        model = {
            "depth": depth,
            "ratio": ratio,
            "verdict": verdict(ratio),
            "faint": weak,
            "finite_blocks": finite_blocks,
        }
    return {
        "upto": answer["upto"],
        "relative": answer["relative"],
        "rows_drawn": len(answer["rows"]),
        "model_row": model,
    }


def caption(facts: Json, lang: str) -> str:
    parts = [
        say(STRINGS, "caption.grad_heatmap", lang, max=facts["upto"]),
        say(STRINGS, f"caption.grad_heatmap.{'relative' if facts['relative'] else 'absolute'}", lang),
        say(STRINGS, "caption.grad_heatmap.grey", lang),
    ]
    model = facts["model_row"]
    if model is not None:
        parts.append(say(STRINGS, "caption.grad_heatmap.model_row", lang, depth=model["depth"],
                         ratio=ratio_text(model["ratio"], lang),
                         verdict=say({}, f"verdict.{model['verdict']}", lang), faint=model["faint"],
                         layers=model["finite_blocks"]))  # fmt: skip
    return sentences(parts, lang)


def rows(answer: Json) -> list[Json]:
    out: list[Json] = []
    for r in sorted(answer["rows"], key=lambda r: r["depth"]):
        out.append({"depth": r["depth"], "layer": 0, "grad_norm": r["embedding_grad_norm"]})
        out += [{"depth": r["depth"], "layer": i + 1, "grad_norm": g, "act_norm": r["act_norm"][i]}
                for i, g in enumerate(r["grad_norm"])]  # fmt: skip
    return out


def build(answer: Json, lang: str = "en") -> Chart:
    facts, normal = claim(answer), figure(answer, lang, "normal")
    # the exact rows are half the chart's bytes and only an export reads them: sent when asked for (`csv`)
    table = rows(answer) if answer.get("csv") else []
    return Chart("grad-heatmap", normal, caption(facts, lang), facts, table,
                 {"slide": diff(normal, figure(answer, lang, "slide"))})  # fmt: skip


CHART = ChartKind("grad-heatmap", "grad_heatmap", build, STRINGS)
