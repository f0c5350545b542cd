"""A chart built in Python (app/figures/) as a notebook shows it: the page's figure, to the key, as
plotly.graph_objects (tests/test_figures_*.py compare them with the JSON the pages receive)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..figures import Chart

THEMES = ("normal", "slide")


def chart_figure(chart: Chart, theme: str = "normal", *views: str) -> go.Figure:
    """A built chart as the page draws it, in the normal theme or (theme="slide") with the projector's sizes, with the
    named views (log, linear, ...) applied after the theme."""
    if theme not in THEMES:
        raise ValueError(f"theme: normal or slide; got {theme!r}")
    return plotly_figure(chart.view(*(["slide"] if theme == "slide" else []), *views))


def plotly_figure(figure: dict[str, Any]) -> go.Figure:
    """A builder's figure (app/figures/) as graph_objects, to the key what the page draws: no template (plotly.py's
    default one would restyle it)."""
    fig = go.Figure(figure)
    fig.layout.template = None
    return fig
