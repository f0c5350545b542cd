"""The growth-law fits (app/experiments/laws.py) on series whose law is known, and against numpy's least squares."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.experiments.laws import POWER_GRID, Fit, best_power, fit_law, fit_power

LAYERS = range(1, 97)


def law(values: list[float], name: str) -> Fit:
    fit = fit_law(list(values), name)
    assert fit is not None
    return fit


def test_a_square_root_series_is_found_to_be_a_square_root():
    values = [math.sqrt(100 + 70 * l) for l in LAYERS]
    assert law(values, "sqrt").error == pytest.approx(0, abs=1e-9)
    assert law(values, "line").error > 1.0
    assert best_power(values).p == 0.5


def test_a_line_is_found_to_be_a_line():
    values = [10 + 0.8 * l for l in LAYERS]
    assert law(values, "line").error == pytest.approx(0, abs=1e-9)
    assert law(values, "sqrt").error > 1.0 and best_power(values).p == 1.0


def test_an_intermediate_power_lies_between():
    values = [(5 + 2 * l) ** 0.64 for l in LAYERS]
    best = best_power(values)
    assert best.p == pytest.approx(0.64) and best.error < min(law(values, k).error for k in ("sqrt", "line"))


def test_the_fit_is_numpys_least_squares():
    rng = np.random.default_rng(0)
    values = [math.sqrt(50 + 60 * l) + float(rng.normal()) for l in LAYERS]
    for p in (0.5, 0.7, 1.0):
        c, a = np.polyfit(np.arange(1, 97), np.asarray(values) ** (1 / p), 1)
        fit = fit_power(values, p)
        assert (fit.a, fit.c) == pytest.approx((a, c), rel=1e-9)


def test_missing_values_have_no_law():
    assert fit_law([1.0, None, 3.0], "sqrt") is None and fit_law([1.0, math.inf], "power") is None
    assert POWER_GRID[0] == 0.25 and POWER_GRID[-1] == 2.0 and 0.5 in POWER_GRID and 1.0 in POWER_GRID
