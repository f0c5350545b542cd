"""/gradients' heatmap built in Python (app/figures/heatmap.py): each cell recomputed from the sweep's traces, the
rows not yet swept left empty, the model row's sentence from that row's own numbers; and the notebook's rx.sweep
figure is the page's."""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import pytest

import app as rx
from app.figures import build
from app.figures.heatmap import colour_range

SMALL = {"d_model": 32, "n_heads": 4, "seq_len": 8, "batch": 2}


def heatmap(client, depths: list[int], lang: str = "en", **extra: object) -> dict:
    body = {"config": {**SMALL, "depth": 4}, "depths": depths, **extra}
    response = client.post(f"/api/figure/grad-heatmap?lang={lang}", json=body)
    assert response.status_code == 200, response.text
    out = response.json()
    go.Figure(out["figure"])
    return out


def test_each_cell_is_that_layers_gradient_over_the_last_layers(client):
    out = heatmap(client, [1, 2, 3, 4, 5, 6], csv=True)
    z, custom = out["figure"]["data"][0]["z"], out["figure"]["data"][0]["customdata"]
    for depth in (1, 4, 6):
        trace = client.post("/api/trace", json={**SMALL, "depth": depth}).json()
        grads = [trace["embedding"]["grad_norm"], *(layer["grad_norm"] for layer in trace["layers"])]
        row = [g / grads[-1] for g in grads]
        assert custom[depth - 1][: depth + 1] == pytest.approx(row, rel=5e-3)  # the hover's 3 digits
        assert z[depth - 1][: depth + 1] == pytest.approx([math.log10(v) for v in row], abs=5e-3)  # 0.01 decade
        assert all(v is None for v in z[depth - 1][depth + 1 :])  # that network has no such layer
    exact = [r for r in out["rows"] if r["depth"] == 6]
    assert [r["layer"] for r in exact] == list(range(7)) and exact[-1]["grad_norm"] == trace["layers"][-1]["grad_norm"]


def test_rows_not_swept_yet_are_empty_and_the_axes_already_reach_upto(client):
    out = heatmap(client, [1, 3], upto=6)
    z = out["figure"]["data"][0]["z"]
    assert len(z) == 6 and all(v is None for v in z[1]) and z[2][0] is not None
    assert out["figure"]["layout"]["yaxis"]["range"] == [0.5, 6.5] and out["claim"]["rows_drawn"] == 2
    assert out["claim"]["model_row"] is None and "Row" not in out["caption"]  # the model (depth 4) not swept yet
    assert out["rows"] == []  # the exact rows only for an export: the figure holds the colours
    assert heatmap(client, [1, 3], upto=6, csv=True)["rows"] and not heatmap(client, [1, 3], upto=6, csv=True,
                                                                            partial=True)["rows"]  # fmt: skip
    refused = client.post("/api/figure/grad-heatmap", json={"config": SMALL, "depths": [1, 5], "upto": 3})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "upto"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_model_rows_sentence_reads_that_row(client, lang):
    out = heatmap(client, [1, 2, 3, 4], lang, csv=True)
    model = out["claim"]["model_row"]
    row = [r["grad_norm"] for r in out["rows"] if r["depth"] == 4 and r["layer"] >= 1]
    assert model["depth"] == 4 and model["ratio"] == pytest.approx(row[0] / row[-1])
    assert model["faint"] == sum(1 for g in row if g / row[-1] < 0.1) and model["finite_blocks"] == 4
    assert ("Row 4" if lang == "en" else "第 4 行") in out["caption"]


def test_absolute_colours_are_the_gradients_themselves(client):
    out = heatmap(client, [1, 2], relative=False)
    trace = client.post("/api/trace", json={**SMALL, "depth": 2}).json()
    assert out["figure"]["data"][0]["customdata"][1][1] == pytest.approx(trace["layers"][0]["grad_norm"], rel=5e-3)
    assert out["figure"]["data"][0]["colorscale"] == "Viridis" and "size itself" in out["caption"]


def test_an_overflowed_row_is_grey_not_a_colour():
    rows = [{"depth": 2, "grad_norm": [None, 2.0], "act_norm": [1.0, None], "embedding_grad_norm": 4.0}]
    chart = build("grad-heatmap", {"config": {"depth": 2}, "upto": 2, "relative": True, "rows": rows})
    assert chart.figure["data"][0]["z"][1] == [pytest.approx(math.log10(4 / 2), abs=5e-3), None, 0.0]
    assert chart.claim["model_row"]["finite_blocks"] == 1


@pytest.mark.parametrize(
    "values, relative, expected",
    [([-3.2, 0.4], True, (-4, 4)), ([-0.2, 0.1], True, (-1, 1)), ([2.1, 2.1], False, (2, 3))],
)
def test_the_colour_range_is_whole_decades_and_symmetric_when_relative(values, relative, expected):
    assert colour_range([values], relative) == expected


def test_the_sweep_can_stream_progress_only(client):
    lines = client.post("/api/sweep?rows=false", json={"config": SMALL, "depths": [1, 2]}).text.splitlines()
    depth_lines = [line for line in map(json.loads, lines) if line["type"] == "depth"]
    assert len(depth_lines) == 2
    assert {tuple(sorted(d)) for d in depth_lines} == {("cached", "depth", "index", "source", "total", "type")}


def test_the_notebook_sweep_figure_is_the_pages(client):
    ours = rx.sweep(1, 3, progress=False, d_model=32, n_heads=4, seq_len=8, batch=2)  # SMALL, typed
    page = client.post("/api/figure/grad-heatmap?lang=zh", json={"config": SMALL, "depths": [1, 2, 3]}).json()
    data = ours.figure(lang="zh").to_plotly_json()
    for trace in data["data"]:
        trace.pop("uid", None)
    assert data == page["figure"]
