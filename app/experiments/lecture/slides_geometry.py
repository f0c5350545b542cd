"""LayerNorm as geometry: subtracting the mean projects x onto the plane ⊥ (1, 1, 1), dividing by σ puts it on the
circle of radius √3 (Ba et al. 2016; Brody et al. 2023). One 3-component vector through the /layernorm lesson's API,
drawn by app/figures/layernorm_geometry.py. The "try it" control offers a few vectors (the same x scaled, shifted, all
entries equal) and, live, any three numbers the lecturer types: `vector_option` builds that option's request and its
checked claim, as for a listed option.
"""

from __future__ import annotations

import math
from typing import Any

from . import sources as src
from .build import chart, check, claim, op, option, read, slide, try_it

N = 3
EPS = 1e-5  # the lesson's default ε, the one the requests use
X = (8.0, 2.0, 2.0)  # the previous slide's [8, 2, 2, 4] without its last entry
LIMIT = 1000  # a typed entry's bound: σ² stays far from float64's range, the picture stays readable
PRESETS: tuple[tuple[tuple[float, ...], tuple[str, str]], ...] = (
    (X, ("[8, 2, 2]", "[8, 2, 2]")),
    ((80.0, 20.0, 20.0), ("×10", "×10")),  # the entries beside the buttons show the numbers sent
    ((9.0, 3.0, 3.0), ("+1", "+1")),
    ((2.0, 2.0, 2.0), ("[2, 2, 2]", "[2, 2, 2]")),
)
ON_CIRCLE = 0.999  # ‖x̂‖ / √3 at least this: "on the circle" (app/figures/layernorm_geometry.py's ON_SPHERE)
VECTOR_HELP = f"three numbers from {-LIMIT:g} to {LIMIT:g} separated by commas, e.g. 8,2,2"


def _refused() -> KeyError:
    """The API's 404 for a key that is neither a listed option nor three allowed numbers (lecture.shown's form)."""
    listed = ", ".join(key_of(vector) for vector, _ in PRESETS)
    return KeyError(f"option: one of {listed}, or {VECTOR_HELP}")


def key_of(vector: tuple[float, ...]) -> str:
    """An option's key: the numbers as the deck's control writes them (8 not 8.0)."""
    return ",".join(f"{v:g}" if v == int(v) and abs(v) < 1e15 else repr(v) for v in vector)


def parse_key(key: str) -> tuple[float, ...]:
    """A typed option's numbers; KeyError (the API's 404 naming `option`) for anything else."""
    try:
        vector = tuple(float(part) for part in key.split(","))
    except ValueError:
        raise _refused() from None
    if len(vector) != N or not all(math.isfinite(v) and abs(v) <= LIMIT for v in vector):
        raise _refused()
    return vector


def by_hand(vector: tuple[float, ...]) -> dict[str, float]:
    """The numbers the claim checks, computed without torch: μ, σ², and ‖x̂‖ = √(n·σ²) / √(σ² + ε)."""
    mean = math.fsum(vector) / N
    variance = math.fsum((v - mean) ** 2 for v in vector) / N
    return {"mean": mean, "variance": variance, "length": math.sqrt(N * variance) / math.sqrt(variance + EPS)}


def geometry_chart(vector: tuple[float, ...]) -> dict[str, Any]:
    key = key_of(vector)
    return chart(
        "geometry",
        ("x, x − μ and x̂, in two views", "x、x − μ 与 x̂ 的两个视图"),
        [src.layernorm(x=list(vector))],
        f"/layernorm?x={key}",
    )


STATEMENT = (
    "μ = {mean|6}: x − μ lies in the plane ⊥ (1, 1, 1), its components sum to {sum|2}. Dividing by "
    "√(σ² + ε) = {std|6} puts x̂ on the circle: ‖x̂‖ = {length|9} against √3 = {radius|9}, short by a relative "
    "{short|2}, which is ε's doing.",
    "μ = {mean|6}：x − μ 落在垂直于 (1, 1, 1) 的平面上，各分量之和为 {sum|2}。除以 √(σ² + ε) = {std|6} 之后，"
    "x̂ 落在圆上：‖x̂‖ = {length|9}，而 √3 = {radius|9}，相对短了 {short|2}，这是 ε 造成的。",
)
INSIDE = (
    "μ = {mean|6}, but σ² = {variance|3} is not large against ε = 10⁻⁵: dividing by √(σ² + ε) = {std|3} "
    "leaves x̂ inside the circle, ‖x̂‖ = {length|3} against √3 = {radius|4}. (Its components sum to {sum|2}.)",
    "μ = {mean|6}，但 σ² = {variance|3} 相对于 ε = 10⁻⁵ 并不大：除以 √(σ² + ε) = {std|3} 之后，x̂ 落在圆内，"
    "‖x̂‖ = {length|3}，而 √3 = {radius|4}。（各分量之和为 {sum|2}。）",
)
CONSTANT = (
    "All entries equal μ = {mean|6}: σ = {sigma|2}, so x − μ = 0 and only ε = 10⁻⁵ is left under the root. "
    "x̂ = (x − μ)/√ε has length {length|2}: the centre, not the circle of radius √3 = {radius|4}; without ε it "
    "would be 0/0. (Its components sum to {sum|2}.)",
    "所有分量都等于 μ = {mean|6}：σ = {sigma|2}，所以 x − μ = 0，根号下只剩 ε = 10⁻⁵。x̂ = (x − μ)/√ε 的范数为 "
    "{length|2}：落在圆心，而不在半径 √3 = {radius|4} 的圆上；没有 ε 就是 0/0。（各分量之和为 {sum|2}。）",
)


def geometry_claim(vector: tuple[float, ...]) -> dict[str, Any]:
    """What the caption states, and checks against the numbers computed by hand: the mean, x − μ in the plane (its
    components sum to 0 up to rounding), ‖x̂‖, and torch's own LayerNorm agreeing. The words follow the numbers: on
    the circle, inside it (σ² not large against ε), or at the centre (every entry equal)."""
    hand = by_hand(vector)
    scale = max(1.0, *(abs(v) for v in vector))
    rounding = 64 * 2.0**-52 * scale  # a few float64 roundings of the largest entry
    return claim(
        STATEMENT,
        {
            "mean": read(0, "mean"),
            "variance": read(0, "variance"),
            "sigma": read(0, "std"),
            "std": read(0, "std_eps"),
            "sum": read(0, "geometry.points.centred.sum"),
            "length": read(0, "geometry.points.normalized.length"),
            "radius": read(0, "geometry.radius"),
            "ratio": read(0, "geometry.radius_ratio"),
            "short": op("one_minus", "ratio"),
            "spread": read(0, "geometry.spread"),
            "diff": read(0, "torch_check.max_abs_difference"),
        },
        [
            check("mean", "close", hand["mean"], rel=1e-12, abs=rounding),
            check("sum", "between", [-3 * rounding, 3 * rounding]),
            check("length", "close", hand["length"], rel=1e-9, abs=1e-9),
            check("radius", "close", math.sqrt(N), rel=1e-15),
            check("diff", "<", max(1e-12, rounding / math.sqrt(EPS))),
        ],
        cases=[
            (check("spread", "==", 0.0), CONSTANT),
            (check("ratio", "<", ON_CIRCLE), INSIDE),
        ],
    )


def vector_option(vector: tuple[float, ...], label: tuple[str, str] | None = None) -> dict[str, Any]:
    key = key_of(vector)
    shown = f"[{key.replace(',', ', ')}]"
    return option(key, label or (shown, shown), geometry_chart(vector), geometry_claim(vector))


def typed_option(key: str) -> dict[str, Any]:
    """The option for three numbers typed into the live deck's control (KeyError names what is allowed)."""
    return vector_option(parse_key(key))


GEOMETRY = slide(
    "layernorm-geometry",
    ("LayerNorm as geometry: a projection, then a circle", "LayerNorm 的几何意义：先投影，再落到圆上"),
    (
        "Subtracting the mean removes x's part along (1, 1, 1): x − μ lies in the plane ⊥ (1, 1, 1). Dividing by σ "
        "puts it on the sphere of radius √n, here the circle of radius √3. Type three numbers: x̂ lands on the "
        "circle, unless all three are equal.",
        "减去均值，就去掉了 x 沿 (1, 1, 1) 方向的部分：x − μ 落在垂直于 (1, 1, 1) 的平面上。再除以 σ，它就落到半径为 √n "
        "的球面上，这里是半径为 √3 的圆。输入三个数试试：x̂ 总落在圆上，除非三个数全相等。",
    ),
    (
        "Ba et al. 2016 define the steps; Brody et al. 2023 read them as geometry. Why it is a projection: x·(1, 1, 1) "
        "/ √3 = μ·√3, so subtracting μ from every entry removes exactly x's part along (1, 1, 1). Why a circle: "
        "‖x − μ‖² = Σ(xᵢ − μ)² = 3σ², so ‖(x − μ)/σ‖ = √3. Left, the view along (1, 1, 1): x and x − μ fall on one "
        "point (the ring), since they differ only along the line of sight; the dotted spokes are the axes x₁, x₂, x₃. "
        "Right, the side view: x drops straight onto the plane (dashed), then slides along its ray onto the circle. "
        "Press ×10 and +1: the same x̂, because LayerNorm forgets a token's scale and its offset. [2, 2, 2]: σ = 0, "
        "and ε keeps the division finite. So after LayerNorm a token vector has n − 1 free directions and the length "
        "√n, before γ and β (next slide).",
        "Ba 等 2016 给出这几步；Brody 等 2023 把它们读成几何。为什么是投影：x·(1, 1, 1)/√3 = μ·√3，所以每个分量都减去 μ，"
        "正好去掉 x 沿 (1, 1, 1) 的部分。为什么是圆：‖x − μ‖² = Σ(xᵢ − μ)² = 3σ²，所以 ‖(x − μ)/σ‖ = √3。左图沿 "
        "(1, 1, 1) 看：x 与 x − μ 落在同一点（圆环处），因为两者只在视线方向上不同；点线是 x₁、x₂、x₃ 三个坐标轴。"
        "右图是侧视：x 先沿虚线垂直落到平面上，再沿自己的射线缩放到圆上。按 ×10 和 +1：x̂ 不变，因为 LayerNorm "
        "不记得词元的尺度和偏移。[2, 2, 2]：σ = 0，ε 让除法仍然有限。所以经过 LayerNorm 后，一个词元向量只剩 n − 1 "
        "个自由方向，范数为 √n（在 γ 和 β 之前，见下一页）。",
    ),
    geometry_chart(X),
    geometry_claim(X),
    try_it=try_it(
        ("x", "x"),
        [vector_option(vector, label) for vector, label in PRESETS],
        key_of(X),
        vector={"length": N, "min": -LIMIT, "max": LIMIT, "explorer": "/layernorm?x="},
    ),
    equation="(x − μ) · (1, 1, 1) = 0\n‖x − μ‖ = √3·σ  ⇒  ‖x̂‖ ≈ √3",
    offline_text=(
        "Subtracting the mean removes x's part along (1, 1, 1): x − μ lies in the plane ⊥ (1, 1, 1). Dividing by σ "
        "puts it on the sphere of radius √n, here the circle of radius √3. Four vectors were recorded with this "
        "file: x̂ lands on the circle unless all three entries are equal.",
        "减去均值，就去掉了 x 沿 (1, 1, 1) 方向的部分：x − μ 落在垂直于 (1, 1, 1) 的平面上。再除以 σ，它就落到半径为 √n "
        "的球面上，这里是半径为 √3 的圆。本文件记录了四个向量：除非三个分量全相等，x̂ 都落在圆上。",
    ),
)

SLIDES = [GEOMETRY]
