"""The shared chart style (app/figures/style.py): a log axis over two to six decades is set so that Plotly labels its
powers of ten only."""

from __future__ import annotations

import math

import pytest

from app.figures.style import decade_ticks


@pytest.mark.parametrize("low, decades", [(0.8, 2.0), (0.8, 2.27), (1e-4, 3.25), (3e-9, 4.6), (1.0, 5.99)])
def test_a_log_axis_over_two_to_six_decades_is_labelled_at_its_powers_of_ten(low, decades):
    values = [low, None, low * 10 ** (decades / 2), math.inf, low * 10**decades]
    axis: dict = {"type": "log"}
    decade_ticks(axis, values)
    lo, hi = axis["range"]
    assert lo < math.log10(low) and hi > math.log10(low) + decades  # every value inside, none on the edge
    # plotly.js axes.autoTicks: powers of ten only when range ÷ nticks > 0.7, one decade a tick up to 1
    assert 0.7 < (hi - lo) / axis["nticks"] <= 1


@pytest.mark.parametrize("values", [[1.0, 50.0], [1e-12, 1.0], [0.0, None], []])
def test_under_two_or_over_six_decades_the_axis_is_left_as_built(values):
    axis: dict = {"type": "log", "nticks": 6}
    decade_ticks(axis, values)
    assert axis == {"type": "log", "nticks": 6}
