"""The geometry of LayerNorm (the /layernorm page's second chart, and the deck's geometry slide): subtracting the mean
projects x onto the plane ⊥ (1, …, 1), dividing by σ puts it on the sphere of radius √n (Ba et al. 2016; Brody, Alon
& Yahav 2023). Drawn from the lesson's `geometry` block (app/experiments/lessons/layernorm_geometry.py), computed by
the server's LayerNorm: for 3 components the view along (1, 1, 1), for any number the side view (along (1, …, 1)
against the distance from it). The caption says what the numbers show: on the sphere (and how far ε keeps x̂ off it),
inside it where σ² is not large against ε, or at the centre where every entry is equal and σ = 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .chart import Chart, ChartKind, Json, diff
from .lesson import precise
from .style import PALETTE, axis, finish, layout, line, theme_of
from .words import say, sentences

ON_SPHERE = 0.999  # ‖x̂‖ / √n at least this: "on the sphere", with ε's shortfall stated
CIRCLE_POINTS = 121
MARGIN = 1.18  # the plotted range beyond the farthest point or the radius
PLANE_MARGIN = 1.32  # room for the axes' labels x₁, x₂, x₃ beyond the farthest point
HEAD_ROOM = 0.14  # a band above the data for the panel's name, so it covers no point
GAP = 0.1  # between the panels: the right one's y title and ticks
FLATTEST = 0.8  # the side view's height at least this times its width (a far x with little mean stays readable)
GREY = "#8a9099"
COLORS = {"input": GREY, "centred": PALETTE["orange"], "normalized": PALETTE["blue"], "rmsnorm": PALETTE["vermillion"]}
SUBSCRIPTS = "₁₂₃"

STRINGS: dict[str, tuple[str, str]] = {
    "chart.layernorm_geometry.title": (
        "Where LayerNorm moves x: onto the plane ⊥ (1, …, 1), then onto the sphere of radius √n",
        "LayerNorm 把 x 移到哪里：先投影到垂直于 (1, …, 1) 的平面，再缩放到半径 √n 的球面",
    ),
    "caption.layernorm_geometry": (
        "The input, its centred version and the normalized vector, as geometry.",
        "输入、减去均值后的向量和归一化后的向量，画成几何图形。",
    ),
    "geometry.heading": ("LayerNorm as geometry", "LayerNorm 的几何意义"),
    "geometry.panel.plane": ("Seen along (1, 1, 1)", "沿 (1, 1, 1) 方向看"),
    "geometry.panel.side": ("Side view", "侧视"),
    "geometry.axis.e1": ("along e₁", "沿 e₁"),
    "geometry.axis.e2": ("along e₂", "沿 e₂"),
    "geometry.axis.across": ("away from (1, …, 1)", "离 (1, …, 1) 的距离"),
    "geometry.axis.along": ("along (1, …, 1)", "沿 (1, …, 1)"),
    "geometry.series.input": ("x", "x"),
    "geometry.series.centred": ("x − μ", "x − μ"),
    "geometry.series.normalized": ("x̂", "x̂"),
    "geometry.series.rmsnorm": ("RMSNorm: x / RMS", "RMSNorm：x / RMS"),
    "geometry.series.sphere": ("radius √n = {radius}", "半径 √n = {radius}"),
    "geometry.caption.project": (
        "Subtracting μ = {mean} removes x's part along (1, …, 1), of length μ·√n = {along}: x − μ lies in the "
        "plane ⊥ (1, …, 1) (its components sum to {sum}).",
        "减去 μ = {mean}，就去掉了 x 沿 (1, …, 1) 的部分，其范数为 μ·√n = {along}：x − μ 落在垂直于 (1, …, 1) "
        "的平面上（各分量之和为 {sum}）。",
    ),
    "geometry.caption.basis": (
        "Left, that plane seen along (1, 1, 1), in the unit vectors e₁ = (1, −1, 0)/√2 and e₂ = (1, 1, −2)/√6; "
        "right, the side view.",
        "左图沿 (1, 1, 1) 看这个平面，用单位向量 e₁ = (1, −1, 0)/√2 和 e₂ = (1, 1, −2)/√6 表示；右图为侧视。",
    ),
    "geometry.caption.sphere": (
        "Dividing by √(σ² + ε) = {std} puts it on the sphere: ‖x̂‖ = {length_fine} against √n = {radius_fine}, short by a "
        "relative {short}, which is ε's doing.",
        "再除以 √(σ² + ε) = {std}，它就落到球面上：‖x̂‖ = {length_fine}，而 √n = {radius_fine}，相对短了 {short}，这是 ε 造成的。",
    ),
    "geometry.caption.inside": (
        "σ² = {variance} is not large against ε = {eps}: dividing by √(σ² + ε) = {std} leaves x̂ inside the "
        "sphere, ‖x̂‖ = {length} of √n = {radius}.",
        "σ² = {variance} 相对于 ε = {eps} 并不大：除以 √(σ² + ε) = {std} 之后，x̂ 落在球面以内，"
        "‖x̂‖ = {length}，而 √n = {radius}。",
    ),
    "geometry.caption.constant": (
        "Every entry is equal, so σ = {sigma} and x − μ is 0: only ε = {eps} is left under the root, and "
        "x̂ = (x − μ)/√ε has length {length}, the centre, not the sphere. Without ε it would be 0/0.",
        "所有分量都相等，所以 σ = {sigma}，x − μ 为 0：根号下只剩 ε = {eps}，x̂ = (x − μ)/√ε 的范数为 {length}，"
        "落在球心，而不在球面上。没有 ε 就是 0/0。",
    ),
    "geometry.caption.overflow": (
        "These numbers' mean or variance passes float64's range (μ = {mean}, σ² = {variance}): LayerNorm's output "
        "is no point to draw. Smaller numbers show the same picture: LayerNorm forgets the scale.",
        "这些数的均值或方差超出了 float64 的范围（μ = {mean}，σ² = {variance}）：LayerNorm 的输出无法画成一个点。"
        "换成小一些的数，图是一样的：LayerNorm 不记得尺度。",
    ),
    "geometry.caption.rmsnorm": (
        "RMSNorm skips the projection: x / RMS has length {length} but keeps x's direction, off the plane (its "
        "components sum to {sum}).",
        "RMSNorm 跳过投影：x / RMS 的范数为 {length}，但保持 x 的方向，不在该平面上（各分量之和为 {sum}）。",
    ),
    "geometry.caption.gain": (
        "Drawn before the gain γ = {gamma} and the shift β = {beta}.",
        "图中是乘增益 γ = {gamma}、加偏移 β = {beta} 之前的 x̂。",
    ),
    "geometry.caption.three": (
        "The view along (1, 1, 1) needs 3 components; this x has {n} (type 3 numbers, e.g. 8, 2, 2).",
        "沿 (1, 1, 1) 看的视图需要 3 个分量；这个 x 有 {n} 个（可输入 3 个数，例如 8, 2, 2）。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def number(value: float | None, lang: str, digits: int = 6) -> str:
    """A value with `digits` significant digits, or the lesson's word for one that overflowed."""
    return precise(value, lang, digits)


# --- the figure ---


def _names(lang: str) -> dict[str, str]:
    return {key: text(f"geometry.series.{key}", lang) for key in COLORS}


def _points(answer: Json) -> dict[str, Json]:
    """The points to draw: LayerNorm's input, centred and normalized vectors, and RMSNorm's output where given."""
    points = dict(answer["layernorm"]["geometry"]["points"])
    if answer.get("rmsnorm") and _finite([answer["rmsnorm"]["rms_eps"]]):  # an RMS that overflowed leaves no point
        points["rmsnorm"] = answer["rmsnorm"]["geometry"]["points"]["normalized"]
    return points


def _segment(theme: str, name: str, color: str, x: list[float], y: list[float], shown: bool, **more: object) -> Json:
    trace = line(theme, name, x, y, color, legendgroup=name, showlegend=shown, **more)
    trace["hovertemplate"] = "(%{x:.4g}, %{y:.4g})<extra>" + name + "</extra>"
    return trace


def _circle(theme: str, radius: float, name: str, start: float, stop: float, shown: bool, **on: str) -> Json:
    angles = [start + (stop - start) * i / (CIRCLE_POINTS - 1) for i in range(CIRCLE_POINTS)]
    xs, ys = [radius * math.cos(a) for a in angles], [radius * math.sin(a) for a in angles]
    trace = line(theme, name, xs, ys, PALETTE["black"], markers=False, width=0.45, legendgroup="sphere",
                 showlegend=shown, hoverinfo="skip", **on)  # fmt: skip
    trace.pop("hovertemplate")
    return trace


def _rays(theme: str, fig: Json, points: dict[str, Json], view: str, names: dict[str, str], first: bool) -> None:
    """Each point as a marker at the end of a line from the origin; x's drop onto the plane dashed (side view)."""
    on = {} if first else {"xaxis": "x2", "yaxis": "y2"}
    if view == "side":  # centring: straight down along (1, …, 1) to the plane, seen edge-on as the axis along = 0
        drop = points["input"], points["centred"]
        fig["data"].append(_segment(theme, names["input"], GREY, [p["across"] for p in drop],
                                    [p["along"] for p in drop], False, markers=False, dash="dash", width=0.6, **on))  # fmt: skip
    size = theme_of(theme)["marker"] * 1.4
    for key in ("input", "centred", "normalized", "rmsnorm"):
        if key not in points:
            continue
        p = points[key]
        x, y = p["plane"] if view == "plane" else (p["across"], p["along"])
        trace = _segment(theme, names[key], COLORS[key], [0.0, x], [0.0, y], first, width=0.7, **on)
        trace["marker"]["size"] = [0, size]
        if view == "plane" and key == "input":  # seen along (1, 1, 1), x falls on x − μ: a ring around it, no ray
            trace.update(x=[x], y=[y], mode="markers", marker={"size": size * 1.9, "color": "rgba(0,0,0,0)",
                                                                 "line": {"color": GREY, "width": 3}})  # fmt: skip
        fig["data"].append(trace)


def _spokes(theme: str, fig: Json, axes: list[list[float]], reach: float) -> None:
    """Where the coordinate axes x₁, x₂, x₃ point in the view along (1, 1, 1): three faint spokes 120° apart."""
    size = theme_of(theme)["font"] - 2
    for i, (a, b) in enumerate(axes):
        scale = reach / math.hypot(a, b)
        fig["layout"]["shapes"].append({"type": "line", "xref": "x", "yref": "y", "x0": 0, "y0": 0, "x1": a * scale,
                                        "y1": b * scale, "layer": "below",
                                        "line": {"color": "#c4c8ce", "width": 1.5, "dash": "dot"}})  # fmt: skip
        fig["layout"]["annotations"].append({"xref": "x", "yref": "y", "x": a * scale * 1.07, "y": b * scale * 1.07,
                                             "text": f"x{SUBSCRIPTS[i]}", "showarrow": False,
                                             "font": {"size": size, "color": "#6b7079"}})  # fmt: skip


def _finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _ranges(points: dict[str, Json], radius: float, view: str) -> tuple[list[float], list[float]]:
    """The axes' ranges: every point and the whole circle inside, with a margin (the side view spans only what
    its points and its half circle use: distances from a line are never negative). A value that overflowed float64
    is no point: it is left out."""
    if view == "plane":
        reach = max([radius, *(abs(v) for v in _finite(v for p in points.values() for v in p["plane"]))])
        x, y = [-reach * PLANE_MARGIN, reach * PLANE_MARGIN], [-reach * PLANE_MARGIN, reach * PLANE_MARGIN]
    else:
        right = max([radius, *_finite(p["across"] for p in points.values())]) * MARGIN
        tall = FLATTEST * right  # equal scales: a panel no flatter than this, whatever the vector
        along = [v * MARGIN for v in _finite(p["along"] for p in points.values())]
        x = [-0.06 * right, right]
        y = [min([-radius * MARGIN, -tall / 2, *along]), max([radius * MARGIN, tall / 2, *along])]
    return x, [y[0], y[1] + HEAD_ROOM * (y[1] - y[0])]


def _domains(spans: list[tuple[list[float], list[float]]]) -> list[list[float]]:
    """Each panel's share of the width in proportion to its width over its height: on equal scales both panels then
    get the same height, and a tall side view leaves the plane view the room it can use."""
    aspects = [(x[1] - x[0]) / (y[1] - y[0]) for x, y in spans]
    room = 1.0 - GAP * (len(spans) - 1)
    out, left = [], 0.0
    for aspect in aspects:
        width = room * aspect / sum(aspects)
        out.append([left, left + width])
        left += width + GAP
    out[-1][1] = 1.0
    return out


def _panel_axes(theme: str, fig: Json, view: str, lang: str, ranges: tuple[list[float], list[float]], first: bool,
                domain: list[float]) -> None:  # fmt: skip
    style = theme_of(theme)
    x_name, y_name = ("xaxis", "yaxis") if first else ("xaxis2", "yaxis2")
    titles = ("geometry.axis.e1", "geometry.axis.e2") if view == "plane" else ("geometry.axis.across",
                                                                                 "geometry.axis.along")  # fmt: skip
    x_axis, y_axis = axis(style, text(titles[0], lang)), axis(style, text(titles[1], lang))
    x_axis.update(domain=domain, range=ranges[0], zeroline=True, zerolinecolor="#9aa0a8", constrain="domain")
    y_axis.update(range=ranges[1], zeroline=True, zerolinecolor="#9aa0a8", constrain="domain",
                  scaleanchor="x" if first else "x2", scaleratio=1)  # fmt: skip
    if not first:
        x_axis["anchor"], y_axis["anchor"] = "y2", "x2"
    fig["layout"][x_name], fig["layout"][y_name] = x_axis, y_axis
    heading = text(f"geometry.panel.{view}", lang)
    suffix = "" if first else "2"  # the heading inside its panel's top left corner, clear of the legend row
    fig["layout"]["annotations"].append({"xref": f"x{suffix} domain", "yref": f"y{suffix} domain", "x": 0.02,
                                         "y": 0.98, "xanchor": "left", "yanchor": "top", "showarrow": False,
                                         "text": f"<b>{heading}</b>", "font": {"size": style["font"]},
                                         "bgcolor": "rgba(255,255,255,0.85)"})  # fmt: skip


def figure(answer: Json, lang: str, theme: str, title: str | None = None) -> Json:
    """Both views for 3 components (the view along (1, 1, 1) left, the side view right); the side view alone
    otherwise. answer: {"layernorm": the lesson's answer, "rmsnorm": RMSNorm's (optional)}."""
    geo = answer["layernorm"]["geometry"]
    points, radius, names = _points(answer), geo["radius"], _names(lang)
    heading = title if title is not None else text("chart.layernorm_geometry.title", lang)
    fig: Json = {"data": [], "layout": layout(theme, heading, "", "")}
    fig["layout"]["hovermode"] = "closest"
    views = ["plane", "side"] if geo["basis"] is not None else ["side"]
    spans = [_ranges(points, radius, view) for view in views]
    sphere = text("geometry.series.sphere", lang, radius=number(radius, lang, 4))
    for i, (view, ranges, domain) in enumerate(zip(views, spans, _domains(spans), strict=True)):
        first = i == 0
        _panel_axes(theme, fig, view, lang, ranges, first, domain)
        on = {} if first else {"xaxis": "x2", "yaxis": "y2"}
        start, stop = (0.0, 2 * math.pi) if view == "plane" else (-math.pi / 2, math.pi / 2)
        fig["data"].append(_circle(theme, radius, sphere, start, stop, first, **on))
        if view == "plane":
            _spokes(theme, fig, geo["axes"], ranges[0][1] * 0.9)
        _rays(theme, fig, points, view, names, first)
    return finish(fig, theme)


def slide_figure(chart: Json, answers: list[Json], theme: str, lang: str, slide: Json) -> Json:
    """The deck's geometry slide (app/figures/slides.py's kind "geometry"): one LayerNorm answer, the slide's title."""
    return figure({"layernorm": answers[0]}, lang, theme, title=chart["title"][lang])


# --- the caption and the claim ---


def claim(answer: Json) -> Json:
    """The values the caption states, read from the LayerNorm answer (and RMSNorm's, where given)."""
    ln = answer["layernorm"]
    geo, points = ln["geometry"], ln["geometry"]["points"]
    facts: Json = {
        "n": ln["n"], "mean": ln["mean"], "variance": ln["variance"], "sigma": ln["std"], "std": ln["std_eps"],
        "eps": ln["eps"], "radius": geo["radius"], "length": points["normalized"]["length"],
        "ratio": geo["radius_ratio"], "shortfall": 1.0 - geo["radius_ratio"], "spread": geo["spread"],
        "along": points["input"]["along"], "centred_sum": points["centred"]["sum"],
        "plane_view": geo["basis"] is not None,
        "case": _case(ln),
    }  # fmt: skip
    if "rmsnorm" in _points(answer):
        rms = answer["rmsnorm"]["geometry"]["points"]["normalized"]
        facts["rmsnorm"] = {"length": rms["length"], "sum": rms["sum"]}
    return facts


def _case(ln: Json) -> str:
    """What the numbers show: an overflow of float64 (no point to draw), equal entries (σ = 0), x̂ on the sphere,
    or inside it (σ² not large against ε)."""
    geo = ln["geometry"]
    if len(_finite([ln["mean"], ln["variance"], geo["radius_ratio"]])) < 3:
        return "overflow"
    if geo["spread"] == 0:
        return "constant"
    return "sphere" if geo["radius_ratio"] >= ON_SPHERE else "inside"


def caption(answer: Json, facts: Json, lang: str) -> str:
    def n(key: str, digits: int = 6) -> str:
        return number(facts[key], lang, digits)

    values = {"mean": n("mean"), "along": n("along"), "sum": n("centred_sum", 3), "std": n("std"), "length": n("length"),
              "length_fine": n("length", 9), "radius_fine": n("radius", 9),  # on the sphere: the digits where ε shows
              "radius": n("radius"), "short": n("shortfall", 3), "variance": n("variance", 3), "eps": n("eps", 3),
              "sigma": n("sigma", 3)}  # fmt: skip
    gain = answer.get("gamma", 1) != 1 or answer.get("beta", 0) != 0
    rms = facts.get("rmsnorm")
    return sentences([
        facts["case"] not in ("constant", "overflow") and text("geometry.caption.project", lang, **values),
        facts["plane_view"] and facts["case"] != "overflow" and text("geometry.caption.basis", lang),
        text(f"geometry.caption.{facts['case']}", lang, **values),
        rms and text("geometry.caption.rmsnorm", lang, length=number(rms["length"], lang), sum=number(rms["sum"], lang, 4)),
        gain and text("geometry.caption.gain", lang, gamma=number(answer.get("gamma"), lang, 3),
                      beta=number(answer.get("beta"), lang, 3)),
        not facts["plane_view"] and text("geometry.caption.three", lang, n=facts["n"]),
    ], lang)  # fmt: skip


def rows(answer: Json) -> list[Json]:
    """One row per drawn point: its part along (1, …, 1), its distance from that line, its length and, for 3
    components, its two components in the plane ⊥ (1, 1, 1)."""
    out = []
    for key, p in _points(answer).items():
        plane = p.get("plane") or [None, None]
        out.append({"point": key, "along": p["along"], "across": p["across"], "length": p["length"], "sum": p["sum"],
                    "plane_e1": plane[0], "plane_e2": plane[1]})  # fmt: skip
    return out


def build(answer: Json, lang: str = "en") -> Chart:
    """The /layernorm page's geometry chart from its `layernorm_page` answer (both norms of one vector)."""
    facts, normal = claim(answer), figure(answer, lang, "normal")
    return Chart("layernorm-geometry", normal, caption(answer, facts, lang), facts, rows(answer),
                 {"slide": diff(normal, figure(answer, lang, "slide"))})  # fmt: skip


CHART = ChartKind("layernorm-geometry", "layernorm_page", build, STRINGS)
