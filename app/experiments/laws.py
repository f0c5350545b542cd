"""Growth laws checked against each other, and drawn only where one of them fits.

/norms asks which law a stream's per-layer norms follow. Every law here starts at the embedding's norm x₀ (layer 0)
and has one growth constant c ≥ 0, so no fitted curve dips below ‖x₀‖:
- `sqrt`: √(‖x₀‖² + c·l), the independent increments of Xiong et al. 2020 (lemma 2: squares add up);
- `line`: ‖x₀‖ + c·l, aligned increments (lengths add up);
- `exp`: ‖x₀‖·e^{c·l}, geometric growth (each block multiplies the stream by the same factor);
- `power`: (‖x₀‖^{1/p} + c·l)^p with the best p of POWER_GRID (√l and l are on it).
For each law c is the least-squares slope through the origin of the lifted values (values^{1/p} − x₀^{1/p}, or
log(values/x₀) for `exp`) against l; its error is the root mean square distance to the values over blocks 1..L.

A law is named only when it fits (`choose_law`): its error is at most FIT_OF_RANGE of the series' range and at most
BETTER_BY times the next-best law's error, both measured on the scale the chart draws: in log10 units when the
series spans more than LOG_AXIS_DECADES decades (a law must hold where it is seen, not only at the largest values). The best power competes only when p is not at the grid's edge (an optimum
outside the grid was not found) and against the best of √l, the line and the exponential (each is a power or a
limit of one, so the power is never their rival otherwise). Otherwise: "no simple law fits" (docs/physics.md).

`stream_laws` answers POST /api/laws: every law fitted to one trace's stream, plus the curve with nothing fitted,
√(‖x₀‖² + Σₖ≤ₗ ‖fₖ‖²) (the blocks' own outputs, their squares added as if independent). The deck's snowball slides
read their fits and errors from it, so no law is fitted in the browser.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# p from 0.25 to 2.00 in steps of 0.01: sub-linear, linear and super-linear growth on one grid (√l and l are on it).
POWER_GRID: tuple[float, ...] = tuple(round(0.25 + 0.01 * k, 2) for k in range(176))

FIT_OF_RANGE = 0.10  # a law fits when its RMS error is at most 10 % of the series' range (max − min) ...
BETTER_BY = 0.8  # ... and at most 0.8 × the next-best law's error (else two laws describe the data equally well)
LOG_AXIS_DECADES = 3.0  # a series spanning more than 3 decades is drawn, and its laws judged, on a log scale
MIN_BLOCKS = 3  # fewer blocks than this have no law worth naming
GROWTH_LAWS = ("sqrt", "line", "exp")  # the named laws of /norms; the best power joins them in choose_law


@dataclass(frozen=True)
class LawFit:
    """One anchored law fitted to layers 0..L (curve[0] is ‖x₀‖ itself)."""

    key: str  # sqrt | line | exp | power
    p: float | None  # the power (None for exp)
    c: float  # growth constant, in the lifted unit (per layer)
    error: float  # RMS of value − curve over blocks 1..L, in the values' unit
    curve: list[float]


@dataclass(frozen=True)
class LawChoice:
    """Every law fitted to one series and the one that fits, if any."""

    fits: list[LawFit]  # sqrt, line, exp, power in that order
    law: LawFit | None  # the law to name and draw; None: no simple law fits
    rival: LawFit  # the next-best law it was compared with
    spread: float  # the series' range, max − min over layers 0..L (in decades when `log`)
    log: bool  # errors and range in log10 units (the series spans more than LOG_AXIS_DECADES)

    def fit(self, key: str) -> LawFit:
        return next(f for f in self.fits if f.key == key)


def _rms(values: list[float], curve: list[float], log: bool = False) -> float:
    pairs = zip(values[1:], curve[1:], strict=True)
    squares = [(math.log10(v) - math.log10(f)) ** 2 if log else (v - f) ** 2 for v, f in pairs]
    return math.sqrt(sum(squares) / len(squares))


def decades(values: list[float]) -> float:
    """How many powers of ten the positive values span (0 when there are none)."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return math.log10(max(positive) / min(positive)) if positive else 0.0


def _on_scale(fit: LawFit, values: list[float], log: bool) -> LawFit:
    """The fit with its error measured in log10 units when `log`."""
    return fit if not log else LawFit(fit.key, fit.p, fit.c, _rms(values, fit.curve, log=True), fit.curve)


def anchored_power(values: list[float], p: float, key: str = "power") -> LawFit:
    """(x₀^{1/p} + c·l)^p with c ≥ 0 (least squares through the origin of values^{1/p} − x₀^{1/p})."""
    scale = max(values)  # fitted on values / max: v^{1/p} stays finite for every v up to 3.4×10³⁸ and p ≥ 0.25
    lifted = [(v / scale) ** (1.0 / p) for v in values]
    layers = range(len(values))
    c = max(0.0, sum(l * (z - lifted[0]) for l, z in zip(layers, lifted, strict=True)) / sum(l * l for l in layers))
    curve = [scale * (lifted[0] + c * l) ** p for l in layers]
    try:
        c_real = c * scale ** (1.0 / p)  # c in the values' own lifted unit
    except OverflowError:
        c_real = math.inf
    return LawFit(key, p, c_real, _rms(values, curve), curve)


def best_anchored_p(values: list[float], log: bool) -> float:
    """The p of POWER_GRID whose anchored power fits best (the first one on a tie), all p at once."""
    v = np.asarray(values) / max(values)
    p = np.asarray(POWER_GRID)[:, None]  # (P, 1)
    layers = np.arange(len(v), dtype=float)
    lifted = v[None, :] ** (1.0 / p)  # (P, n)
    c = np.maximum(0.0, (lifted - lifted[:, :1]) @ layers / (layers @ layers))  # (P,)
    curves = (lifted[:, :1] + c[:, None] * layers[None, :]) ** p
    misses = np.log10(v[1:]) - np.log10(curves[:, 1:]) if log else v[1:] - curves[:, 1:]
    return POWER_GRID[int(np.argmin(np.mean(misses**2, axis=1)))]


def anchored_exp(values: list[float]) -> LawFit:
    """x₀·e^{c·l} with c ≥ 0 (least squares through the origin of log(values / x₀))."""
    logs = [math.log(v / values[0]) for v in values]
    layers = range(len(values))
    c = max(0.0, sum(l * z for l, z in zip(layers, logs, strict=True)) / sum(l * l for l in layers))
    curve = [values[0] * math.exp(min(c * l, 700.0)) for l in layers]
    return LawFit("exp", None, c, _rms(values, curve), curve)


def growth_fits(values: list[float], log: bool = False) -> list[LawFit]:
    """√l, the line, the exponential and the best power, each anchored at values[0] (layer 0), their errors on the
    linear or (log) the log10 scale."""
    power = _on_scale(anchored_power(values, best_anchored_p(values, log)), values, log)
    named = [anchored_power(values, 0.5, "sqrt"), anchored_power(values, 1.0, "line"), anchored_exp(values)]
    return [*(_on_scale(fit, values, log) for fit in named), power]


def fittable(values: Sequence[float | None]) -> bool:
    """At least MIN_BLOCKS blocks after layer 0, every value finite and positive."""
    return len(values) > MIN_BLOCKS and all(v is not None and math.isfinite(v) and v > 0 for v in values)


def choose_law(values: Sequence[float | None]) -> LawChoice | None:
    """The law that fits a stream's norms (values[0] = the embedding), or LawChoice(law=None): no simple law fits.
    None when the series cannot be fitted at all (see `fittable`)."""
    if not fittable(values):
        return None
    series = [float(v) for v in values if v is not None]
    log = decades(series) > LOG_AXIS_DECADES
    fits = growth_fits(series, log)
    named = sorted(fits[:3], key=lambda fit: fit.error)
    power = fits[3]
    at_edge = power.p in (POWER_GRID[0], POWER_GRID[-1])
    if not at_edge and power.error < BETTER_BY * named[0].error:
        best, rival = power, named[0]
    else:
        best, rival = named[0], named[1]
    spread = decades(series) if log else max(series) - min(series)
    # a constant series, or two laws through every point, have no law that fits better than the others
    fits_well = rival.error > 0 and best.error <= min(FIT_OF_RANGE * spread, BETTER_BY * rival.error)
    return LawChoice(fits, best if fits_well else None, rival, spread, log)


def independent_curve(values: Sequence[float | None], increments: Sequence[float | None]) -> list[float] | None:
    """√(‖x₀‖² + Σₖ≤ₗ ‖fₖ‖²) for l = 0..L: the stream if every block's output were independent of the stream and of
    the others (squares add up; Xiong et al. 2020, lemma 2, with the measured ‖fₖ‖ in place of a constant).
    None when a value is missing or not finite."""
    if not values or values[0] is None or any(v is None or not math.isfinite(v) for v in increments):
        return None
    total, curve = float(values[0]) ** 2, [float(values[0])]
    for f in increments:
        total += float(f) ** 2  # type: ignore[arg-type]
        curve.append(math.sqrt(total))
    return curve if math.isfinite(total) else None


def _fit_json(fit: LawFit) -> dict[str, Any]:
    return {"p": fit.p, "c": fit.c, "error": fit.error, "curve": fit.curve}


def stream_laws(trace: dict[str, Any]) -> dict[str, Any]:
    """POST /api/laws: the stream's mean token norm per layer (0 = the embedding), each anchored law fitted to it
    (errors over blocks 1..L, in log10 units when `log`), the law that fits (`law`, None: no simple law fits) and
    the curve with nothing fitted (`independent`, from each block's output norm)."""
    values = [trace["embedding"]["act_norm"], *(layer["act_norm"] for layer in trace["layers"])]
    increments = [layer.get("branch_norm") for layer in trace["layers"]]
    out: dict[str, Any] = {"layers": list(range(len(values))), "values": values, "fits": {}, "law": None}
    choice = choose_law(values)
    out["log"] = bool(choice and choice.log)
    if choice is not None:
        out["fits"] = {fit.key: _fit_json(fit) for fit in choice.fits}
        out["law"] = choice.law.key if choice.law else None
    curve = independent_curve(values, increments)
    if curve is not None and fittable(values):
        finite = [float(v) for v in values if v is not None]
        out["independent"] = {"curve": curve, "error": _rms(finite, curve, log=out["log"])}
    else:
        out["independent"] = None
    return out
