"""/chain built in Python (app/figures/chain.py): the verdicts and the gaps named from the products themselves."""

from __future__ import annotations

import plotly.graph_objects as go

from app.numbers import fmt


def test_g_zero_names_the_zeros_not_an_overflow_and_keeps_a_readable_axis(client):
    """g = 0: the plain product is exactly 0 (gaps on a log axis), the shortcut's exactly 1; nothing overflowed."""
    chart = client.post("/api/figure/chain?lang=en", json={"derivative": 0, "depth": 12}).json()
    assert chart["claim"]["zero"] and not chart["claim"]["overflow"]
    assert "exactly 0" in chart["caption"] and "float64 number" not in chart["caption"]
    yaxis = chart["figure"]["layout"]["yaxis"]
    assert yaxis["range"] == [-1.0, 1.0] and yaxis["dtick"] == 1  # a decade each side of the 1s, not one value
    assert chart["claim"]["plain_verdict"] == "underflowed" and chart["claim"]["residual_verdict"] == "kept"
    go.Figure(chart["figure"])


def test_the_caption_states_the_lessons_exact_products(client):
    lesson = client.get("/api/chain", params={"derivative": 0.01, "depth": 96}).json()
    chart = client.post("/api/figure/chain?lang=zh", json={"derivative": 0.01, "depth": 96}).json()
    assert fmt(lesson["residual_final"], digits=6, lang="zh") in chart["caption"] and "2.59927" in chart["caption"]
    assert [row["plain"] for row in chart["rows"]] == lesson["plain"]
    big = client.post("/api/figure/chain?lang=en", json={"derivative": 10, "depth": 1000}).json()
    assert big["claim"]["overflow"] and "largest float64 number" in big["caption"]
    assert client.post("/api/figure/chain", json={"derivative": -1}).json()["errors"][0]["field"] == "derivative"
