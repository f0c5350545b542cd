"""The shared chart style (app/figures/style.py): a log axis over two to six decades is set so that Plotly labels its
powers of ten only; a reference line's label sits on the side its line leaves free of data; an overflow band's label
wider than its band takes two lines."""

from __future__ import annotations

import math

import pytest

from app.figures.style import Json, decade_ticks, finish, hline, layout, line, overflow_band


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


def _labelled(ys: list[float], value: float, below: bool, theme: str = "slide", log: bool = False) -> dict:
    """A chart of one series over 97 layers with a labelled reference line at `value`, placed by finish()."""
    fig = {"data": [line(theme, "data", list(range(len(ys))), ys, "#000")], "layout": layout(theme, "", "l", "y", log)}
    hline(theme, fig, value, "a reference label of some length", below=below)
    return finish(fig, theme)["layout"]["annotations"][0]


@pytest.mark.parametrize("below", [False, True])
def test_a_reference_label_goes_where_the_data_leave_room(below):
    """Data rising just above the line near the right edge push the label under it, data falling just below push it
    above, whichever side the builder asked for; the label keeps off the line's own stroke."""
    rising = [30.0] * 50 + [9.0] * 47  # a layer's worth above the line under the label, far above before it
    note = _labelled(rising, 8.0, below)
    assert note["yanchor"] == "top" and note["yshift"] < 0
    falling = [-14.0] * 50 + [7.0] * 47
    note = _labelled(falling, 8.0, below)
    assert note["yanchor"] == "bottom" and note["yshift"] > 0


@pytest.mark.parametrize("below", [False, True])
def test_a_series_lying_on_the_line_leaves_the_builders_side(below):
    """Post-LN's norm sits a hair under √d_model: on the line's stroke, covered by neither side, so the builder's
    choice stands, shifted off the stroke."""
    note = _labelled([7.99996] * 97 + [96.0], 8.0, below)
    assert (note["yanchor"] == "top") is below
    assert (note["yshift"] < 0) is below


def test_on_a_log_axis_the_label_is_placed_in_decades():
    """0.9^l and 1.1^l around the line at 1 on a log axis: the label goes to the side where the data leave the band
    sooner (0.9^l falls a decade in 22 layers, 1.1^l rises one in 24)."""
    grow, fade = [1.1**k for k in range(97)], [0.9**k for k in range(97)]
    fig = {"data": [line("slide", "1.1", list(range(97)), grow, "#000"), line("slide", "0.9", list(range(97)), fade,
           "#000")], "layout": layout("slide", "", "l", "y", ylog=True)}  # fmt: skip
    hline("slide", fig, 1.0, "1: the gradient arrives unchanged")
    note = finish(fig, "slide")["layout"]["annotations"][0]
    assert note["y"] == 0 and note["yanchor"] == "top"


def test_an_overflow_label_wider_than_its_band_takes_two_lines():
    """On the stage a band over layers 21-48 of 48 is narrower than "overflow (inf/NaN) from layer 21" on one line:
    the label breaks (so the x axis need not stretch past the data to hold it); on a page it fits on one line."""
    for theme, lines in (("slide", 2), ("normal", 1)):
        fig: Json = {
            "data": [line(theme, "d", list(range(1, 49)), [1.0] * 48, "#000")],
            "layout": layout(theme, "", "", ""),
        }
        overflow_band(theme, fig, 21, 48, "overflow (inf/NaN) from layer 21")
        assert fig["layout"]["annotations"][0]["text"].count("<br>") == lines - 1
