"""The growth-law fits (app/experiments/laws.py) on series whose law is known, and against numpy's least squares."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from app.experiments.laws import POWER_GRID, LawFit, growth_fits, independent_curve, stream_laws

LAYERS = range(0, 97)  # layer 0 is the embedding: every law starts at its norm


def law(values: list[float], name: str) -> LawFit:
    return next(fit for fit in growth_fits(list(values)) if fit.key == name)


def test_a_square_root_series_is_found_to_be_a_square_root():
    values = [math.sqrt(64 + 70 * l) for l in LAYERS]
    assert law(values, "sqrt").error == pytest.approx(0, abs=1e-9)
    assert law(values, "line").error > 1.0
    assert law(values, "power").p == 0.5


def test_a_line_is_found_to_be_a_line():
    values = [8 + 0.8 * l for l in LAYERS]
    assert law(values, "line").error == pytest.approx(0, abs=1e-9)
    assert law(values, "sqrt").error > 1.0 and law(values, "power").p == 1.0


def test_an_intermediate_power_lies_between():
    values = [(8 ** (1 / 0.64) + 2 * l) ** 0.64 for l in LAYERS]
    best = law(values, "power")
    assert best.p == pytest.approx(0.64) and best.error < min(law(values, k).error for k in ("sqrt", "line"))


def test_the_fit_is_least_squares_through_the_embedding():
    rng = np.random.default_rng(0)
    values = [math.sqrt(64 + 60 * l) + (float(rng.normal()) if l else 0.0) for l in LAYERS]
    layers = np.arange(97.0)
    for key, p in (("sqrt", 0.5), ("line", 1.0)):
        lifted = np.asarray(values) ** (1 / p)
        c = float((lifted - lifted[0]) @ layers / (layers @ layers))  # through the origin, no intercept of its own
        fit = law(values, key)
        assert fit.c == pytest.approx(c, rel=1e-9) and fit.curve[0] == pytest.approx(values[0])
        assert min(fit.curve) >= values[0] - 1e-9  # no fitted curve dips below ‖x₀‖


def test_the_curve_with_nothing_fitted_adds_the_squares():
    assert independent_curve([3.0], [4.0]) == [3.0, 5.0]
    assert independent_curve([3.0, None], [None]) is None
    assert POWER_GRID[0] == 0.25 and POWER_GRID[-1] == 2.0 and 0.5 in POWER_GRID and 1.0 in POWER_GRID


def _trace(norms: Sequence[float | None], branches: Sequence[float | None]) -> dict:
    return {"embedding": {"act_norm": norms[0]}, "layers": [{"act_norm": n, "branch_norm": b} for n, b in zip(norms[1:], branches, strict=True)]}  # fmt: skip


def test_the_laws_answer_for_independent_increments():
    """Each block adds an output of norm 2 independent of the stream: ‖xₗ‖² = 64 + 4l, so Xiong's √(‖x₀‖² + c·l)
    fits exactly (c = 4), and so does the curve with nothing fitted."""
    norms = [math.sqrt(64 + 4 * l) for l in range(49)]
    answer = stream_laws(_trace(norms, [2.0] * 48))
    assert answer["layers"] == list(range(49)) and answer["values"] == norms and answer["log"] is False
    assert answer["fits"]["sqrt"]["error"] == pytest.approx(0, abs=1e-9)
    assert answer["fits"]["sqrt"]["c"] == pytest.approx(4.0)
    assert answer["independent"]["error"] == pytest.approx(0, abs=1e-9)
    assert answer["independent"]["curve"] == pytest.approx(norms)
    assert answer["law"] == "sqrt"


def test_an_overflowed_stream_has_no_laws():
    answer = stream_laws(_trace([8.0, 9.0, None, 11.0, 12.0], [1.0, None, 1.0, 1.0]))
    assert answer["fits"] == {} and answer["law"] is None and answer["independent"] is None


# ---- /norms' anchored laws and the rule that names one (choose_law) ------------------------------------------------
from app.experiments.laws import BETTER_BY, FIT_OF_RANGE, LOG_AXIS_DECADES, choose_law  # noqa: E402

DEPTH = 48
X0 = 8.0


def series(f) -> list[float]:
    """Layer 0 (x₀) and blocks 1..DEPTH of a law f(l)."""
    return [f(l) for l in range(DEPTH + 1)]


@pytest.mark.parametrize(
    ("name", "values", "law"),
    [
        ("sqrt", series(lambda l: math.sqrt(X0**2 + 30 * l)), "sqrt"),
        ("linear", series(lambda l: X0 + 2.5 * l), "line"),
        ("geometric", series(lambda l: X0 * 1.3**l), "exp"),
        ("power", series(lambda l: (X0**1.5 + 4 * l) ** (1 / 1.5)), "power"),
    ],
)
def test_a_known_law_is_named_and_its_rivals_are_worse(name, values, law):
    choice = choose_law(values)
    assert choice is not None and choice.law is not None and choice.law.key == law, name
    assert choice.law.error <= FIT_OF_RANGE * choice.spread and choice.law.error <= BETTER_BY * choice.rival.error
    assert choice.law.curve[0] == pytest.approx(values[0]) and min(choice.law.curve) >= values[0] * (1 - 1e-9)


def test_the_fitted_power_is_found():
    values = series(lambda l: (X0**1.5 + 4 * l) ** (1 / 1.5))
    choice = choose_law(values)
    assert choice is not None and choice.law is not None and choice.law.p == pytest.approx(0.67)


def test_geometric_growth_is_judged_on_a_log_scale():
    values = series(lambda l: X0 * 1.6**l)  # 20 decades
    choice = choose_law(values)
    assert choice is not None and choice.log and choice.spread > LOG_AXIS_DECADES
    assert choice.law is not None and choice.law.key == "exp" and math.exp(choice.law.c) == pytest.approx(1.6)


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("flat then explode", [X0] * 38 + [X0 * 10 ** (k + 1) for k in range(11)]),
        ("flat then a step", [X0] * 25 + [3 * X0] * 24),
        ("constant", [X0] * (DEPTH + 1)),
        ("noise around a constant", [X0 + 0.01 * math.sin(7 * l) for l in range(DEPTH + 1)]),
    ],
)
def test_no_simple_law_fits_what_no_law_describes(name, values):
    choice = choose_law(values)
    assert choice is not None and choice.law is None, (name, choice and choice.law)


@pytest.mark.parametrize(
    "values",
    [
        [X0, 9.0, math.nan, 11.0, 12.0],
        [X0, 9.0, None, 11.0, 12.0],
        [X0, 9.0, math.inf, 11.0, 12.0],
        [X0, 9.0, 0.0, 11.0, 12.0],
        [X0, 9.0],  # depth 1
        [X0, 9.0, 10.0],  # two blocks: too few (MIN_BLOCKS = 3)
    ],
)
def test_overflow_underflow_and_short_stacks_get_no_fit(values):
    assert choose_law(values) is None


def test_no_curve_dips_below_the_embedding():
    """Xiong et al.'s √(‖x₀‖² + c·l) and every other law start at ‖x₀‖ and never fall below it, even where the
    early blocks dip (the old (a + c·l)^p clamped them to 0)."""
    values = [X0, X0 * 0.9, X0 * 0.85, *(X0 + 3 * l for l in range(3, DEPTH + 1))]
    choice = choose_law(values)
    assert choice is not None
    for fit in choice.fits:
        assert min(fit.curve) >= X0 * (1 - 1e-12), fit.key
