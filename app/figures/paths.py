"""The unrolled residual stack, drawn (the deck's paths slide, app/figures/slides.py's kind "paths"): how many of the
2^L paths pass k branches (C(L, k), left), and what the paths of each length carry (right, log): the scalar chain's
C(L, k)·g^k exactly, and one model's gradient, every path of a length summed exactly and Veit et al.'s sampled paths
(app/experiments/paths.py). The figure reads the answers only: the chain lesson's `paths` block and POST /api/paths.
"""

from __future__ import annotations

import math

from ..numbers import fmt
from .style import PALETTE, Json, axis, layout, line, theme_of
from .words import say

FLOOR = -6  # log10 of the right panel's bottom: lengths carrying under 10⁻⁶ of the top's gradient are gaps
GREY = "#b4bac2"

STRINGS: dict[str, tuple[str, str]] = {
    "paths.axis.length": ("path length k", "路径长度 k"),
    "paths.axis.count": ("paths", "路径条数"),
    "paths.axis.carried": ("gradient ÷ top's", "梯度 ÷ 顶部梯度"),
    "paths.series.count": ("paths", "路径"),
    "paths.series.chain": ("chain g = {g}", "链 g = {g}"),
    "paths.series.exact": ("all paths summed", "所有路径求和"),
    "paths.series.sampled": ("sampled (Veit)", "抽样（Veit）"),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def figure(chain: Json, measured: Json, color: str, theme: str, lang: str, title: str) -> Json:
    """Two panels over the path length k: the number of paths (bars), and what the lengths carry (log); the model's
    two series in its colour (the slide's control names the model). On the stage no title: the slide's own title is
    above, the axis titles say what each panel counts, and a title row over a three-entry legend at 24 px would leave
    the plot too short to keep the back row's sizes (static/js/fit.js shrinks a chart whose plot is under 160 px)."""
    style = theme_of(theme)
    fig: Json = {"data": [], "layout": layout(theme, title, text("paths.axis.length", lang),
                                             text("paths.axis.count", lang))}  # fmt: skip
    lay = fig["layout"]
    lengths = measured["lengths"]
    lay["xaxis"]["domain"] = [0, 0.36]
    lay["xaxis2"] = {**axis(style, text("paths.axis.length", lang)), "domain": [0.55, 1], "anchor": "y2"}
    lay["yaxis2"] = {**axis(style, text("paths.axis.carried", lang), log=True), "anchor": "x2"}
    fig["data"].append({"type": "bar", "name": text("paths.series.count", lang), "x": lengths,
                        "y": measured["paths"], "marker": {"color": GREY}, "showlegend": False,
                        "hovertemplate": "k = %{x}: %{y:.4g}<extra></extra>"})  # fmt: skip
    g = fmt(chain["derivative"], digits=3, lang=lang)
    right = {"xaxis": "x2", "yaxis": "y2"}
    fig["data"].append(line(theme, text("paths.series.chain", lang, g=g), chain["paths"]["lengths"],
                            _above_floor(chain["paths"]["carried"]), PALETTE["black"], dash="dash", markers=False,
                            width=0.6, **right))  # fmt: skip
    fig["data"].append(line(theme, text("paths.series.exact", lang), lengths, _above_floor(measured["exact_ratio"]),
                            color, **right))  # fmt: skip
    sampled = line(theme, text("paths.series.sampled", lang), lengths,
                   _above_floor(measured["sampled"]["total_ratio"]), color, dash="dot", width=0.6, **right)  # fmt: skip
    sampled["marker"] = {"size": style["marker"], "color": "#fff", "line": {"color": color, "width": 2}}
    fig["data"].append(sampled)
    tops = [v for series in (measured["exact_ratio"], measured["sampled"]["total_ratio"]) for v in series if v]
    # the browser picks the decades it labels (charts.js tidyLogAxes): the top 0.9 of a decade above the highest
    # power it could label keeps that label off the legend
    lay["yaxis2"]["range"] = [FLOOR, math.floor(math.log10(max(tops)) + 0.25) + 0.9]
    for name_x in ("xaxis", "xaxis2"):
        lay[name_x].update(range=[-0.7, lengths[-1] + 0.7], dtick=4 if lengths[-1] > 12 else 1)
    lay["hovermode"] = "closest"
    if theme == "slide":  # on the stage the axis titles name both panels, and the legend needs the plot's height
        lay["title"]["text"] = ""
    return fig


def _above_floor(values: list[float | None]) -> list[float | None]:
    """A gap below 10^FLOOR, the chart's bottom: a point there would sit under the axis (the caption's numbers
    cover every length)."""
    return [v if v is not None and v >= 10.0**FLOOR else None for v in values]


def slide_figure(chart: Json, answers: list[Json], theme: str, lang: str, slide: Json) -> Json:
    """answers: the chain lesson (its `paths` block) and POST /api/paths; chart: the model's colour."""
    return figure(answers[0], answers[1], PALETTE[chart["color"]], theme, lang, chart["title"][lang])
