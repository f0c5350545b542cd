"""Growth laws checked against each other: fit (a + c·l)^p to a per-layer series and report each fit's error.

A claim such as "the stream grows like √l" is only worth stating when √l (p = ½) fits the measured series better than
the alternatives: a straight line (p = 1) and the best power p on a fixed grid. For a fixed p the fit is a least-squares
line through values^(1/p) against l = 1..n; its error is the root mean square distance to the values themselves.
static/js/theory.js is the browser's twin (same grid, same formulas); tests/test_laws.py checks them on known series.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# p from 0.25 to 2.00 in steps of 0.01: sub-linear, linear and super-linear growth on one grid (√l and l are on it).
POWER_GRID: tuple[float, ...] = tuple(round(0.25 + 0.01 * k, 2) for k in range(176))
LAWS: dict[str, float | None] = {"sqrt": 0.5, "line": 1.0, "power": None}  # None: the best p of the grid


@dataclass(frozen=True)
class Fit:
    p: float
    a: float
    c: float
    error: float  # root mean square of (value − fitted value), in the values' unit
    curve: list[float]


def fit_power(values: list[float], p: float) -> Fit:
    """(a + c·l)^p through values[l − 1], l = 1..n: a least-squares line through values^(1/p)."""
    n = len(values)
    layers = [float(l) for l in range(1, n + 1)]
    lifted = [max(v, 0.0) ** (1.0 / p) for v in values]
    mean_l, mean_z = sum(layers) / n, sum(lifted) / n
    spread = sum((l - mean_l) ** 2 for l in layers)
    c = sum((l - mean_l) * (z - mean_z) for l, z in zip(layers, lifted, strict=True)) / spread if spread else 0.0
    a = mean_z - c * mean_l
    curve = [max(a + c * l, 0.0) ** p for l in layers]
    error = math.sqrt(sum((v - f) ** 2 for v, f in zip(values, curve, strict=True)) / n)
    return Fit(p, a, c, error, curve)


def best_power(values: list[float]) -> Fit:
    """The fit of smallest error over POWER_GRID (the first one on a tie, as in the browser)."""
    best = fit_power(values, POWER_GRID[0])
    for p in POWER_GRID[1:]:
        fit = fit_power(values, p)
        if fit.error < best.error:
            best = fit
    return best


def fit_law(values: list[float | None], law: str) -> Fit | None:
    """law: 'sqrt', 'line' or 'power'; None when a value is missing or not finite (an overflowed stream has no law)."""
    if not values or any(v is None or not math.isfinite(v) for v in values):
        return None
    finite = [float(v) for v in values if v is not None]
    p = LAWS[law]
    return best_power(finite) if p is None else fit_power(finite, p)


def growth_laws(norms: list[float | None]) -> tuple[list[tuple[str, Fit]], tuple[str, Fit]] | None:
    """/norms' comparison (theory.js growthLaws): every law fitted to a stream's norms (index 0 = the embedding,
    fitted over blocks 1..L) and the one of smallest error; None when fewer than 3 blocks or a value is not finite
    and positive."""
    if len(norms) < 4 or any(n is None or not math.isfinite(n) or n <= 0 for n in norms):
        return None
    laws: list[tuple[str, Fit]] = []
    for key in LAWS:
        fit = fit_law(norms[1:], key)
        assert fit is not None  # every value is finite (checked above)
        laws.append((key, fit))
    best = laws[0]
    for law in laws[1:]:  # the first one on a tie, as reduce() in the browser
        if law[1].error < best[1].error:
            best = law
    return laws, best
