"""The /norms chart built in Python (app/figures/norms.py): valid Plotly, the same object on the page, in the
notebook and in the exports, and a caption that says only what its numbers show."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import plotly.graph_objects as go
import pytest

from app.config import TraceConfig
from app.experiments.trace import run_trace
from app.figures import build, charts, strings
from app.figures.chart import apply_patch
from app.figures.words import FLAT_WITHIN, direction

SMALL = {"d_model": 32, "n_heads": 4, "seq_len": 8, "batch": 2}


@cache
def traced(**fields: object) -> dict:
    return run_trace(TraceConfig(**fields))


def plain(figure: go.Figure) -> dict:
    """A graph_objects figure as the JSON a page receives (no uid, which plotly adds per trace)."""
    data = figure.to_plotly_json()
    for trace in data["data"]:
        trace.pop("uid", None)
    return data


@pytest.mark.parametrize(
    "fields",
    [{}, {"norm_position": "post"}, {"depth": 48, "norm": "none"}, {"dtype": "float16", "depth": 48, "norm": "none"}],
)
@pytest.mark.parametrize("theme", ["normal", "slide"])
def test_the_plain_dict_figure_is_valid_plotly_unchanged(fields, theme):
    """graph_objects validates every key; it neither drops nor adds one to what the server sends."""
    chart = build("norms", traced(**fields), "en")
    shown = chart.view(*(["slide"] if theme == "slide" else []))
    validated = go.Figure(shown)
    validated.layout.template = None  # plotly.py's default template: the page has none (app/notebook/charts.py)
    assert plain(validated) == shown


def test_the_slide_patch_is_the_slide_theme():
    from app.figures import norms

    trace = traced()
    chart = build("norms", trace, "en")
    slide = norms.figure(trace, "en", "slide", norms.law_choice(trace))
    assert chart.view("slide") == slide and chart.figure != slide
    assert slide["layout"]["font"]["size"] == 22 and slide["data"][0]["line"]["width"] == 5


def test_the_scale_patches_only_switch_the_y_axis():
    chart = build("norms", traced(), "en")
    log = chart.view("log")
    assert log["layout"]["yaxis"]["type"] == "log" and log["data"] == chart.figure["data"]
    assert apply_patch(log, chart.patches["linear"]) == chart.figure


def test_every_chart_string_has_both_languages_and_reaches_the_pages_table():
    from app.pages import get_registry

    table = get_registry().strings
    assert set(charts()) == {
        *("norms", "gradients", "grad-heatmap", "compare", "tour", "chain", "softmax-probs", "softmax-sweep"),
        *("precision-overflow", "layernorm", "layernorm-geometry", "norm-speed", "batch-dependence", "batch-padding"),
        *("train-loss", "train-profile"),
        *("models-stream", "models-set", "models-tokens", "models-cosine", "models-branches", "models-gradient"),
        *("models-grad-tokens", "models-sink", "models-heads", "models-dims", "models-intervention"),
    }
    for key, (english, chinese) in strings().items():
        assert english and chinese and table[key] == (english, chinese), key


def test_the_notebook_figure_is_the_pages_json(client):
    """rx.trace(...).figure() is the figure POST /api/figure/norms hands the page, to the key; with theme="slide",
    that figure with the page's own slide patch."""
    import copy

    import app as rx

    cases: list[tuple[dict[str, Any], str]] = [({"depth": 8}, "en"), ({"depth": 8, "norm_position": "post"}, "zh")]
    for fields, lang in cases:
        page = client.post(f"/api/figure/norms?lang={lang}", json=fields).json()
        traced = rx.trace(**fields)
        assert plain(traced.figure(lang=lang)) == page["figure"]
        projected = apply_patch(copy.deepcopy(page["figure"]), page["patches"]["slide"])
        assert plain(traced.figure(lang=lang, theme="slide")) == projected != page["figure"]
        assert page["caption"] == build("norms", run_trace(TraceConfig(**fields)), lang).caption


def test_the_endpoint_answers_the_builder_and_caches_it(client):
    first = client.post("/api/figure/norms?lang=en", json={"depth": 6})
    again = client.post("/api/figure/norms?lang=en", json={"depth": 6})
    assert first.status_code == 200 and first.json() == again.json()
    assert again.headers["X-Resnorm-Cache"] == "chart"
    body = first.json()
    assert set(body) == {"chart", "figure", "caption", "claim", "rows", "patches"}
    assert [row["layer"] for row in body["rows"]] == list(range(7))
    assert set(body["patches"]) == {"slide", "log", "linear"}
    assert client.post("/api/figure/norms?lang=zh", json={"depth": 6}).json()["caption"] != body["caption"]


def test_the_endpoint_refuses_bad_requests_by_name(client):
    assert client.post("/api/figure/nothing", json={}).status_code == 404
    deep = client.post("/api/figure/norms", json={"depth": 100000})
    assert deep.status_code == 422 and deep.json()["errors"][0]["field"] == "depth"


@pytest.mark.parametrize(
    ("values", "word"),
    [
        ([1.0, 5.0], "grew"),
        ([5.0, 1.0], "shrank"),
        ([1.0, FLAT_WITHIN], "flat"),
        ([1.0, 1 / FLAT_WITHIN], "flat"),
        ([1.0, None, 2.0], "overflow"),
        ([1.0, math.nan], "overflow"),
        ([1.0, 0.0], "underflow"),
        ([3.0], "flat"),
    ],
)
def test_one_direction_rule(values, word):
    assert direction(values) == word


# ---- the findings a student made off the default path ---------------------------------------------------------------


def test_deep_stack_without_a_norm_is_geometric_on_a_log_axis():
    """depth 48, no norm: ×1.1×10¹⁰; on a linear axis it looked flat then vertical and a straight ramp was called a
    law. Here: a log axis, and the law named is geometric, ×1.61 a block (a ratio the caption states)."""
    chart = build("norms", traced(depth=48, norm="none"), "en")
    assert chart.figure["layout"]["yaxis"]["type"] == "log"
    assert chart.claim["law"]["key"] == "exp" and chart.claim["log_scale"]
    assert "×1.61" in chart.caption and "a line" not in chart.caption.split("fits")[0]


def test_mix_batchnorm_names_a_law_fitted_after_its_post_ln_blocks():
    chart = build("norms", traced(norm_position="mix", norm="batchnorm"), "en")
    assert chart.claim["fit_from"] == 3 and "from layer 3" in chart.caption
    law = chart.claim["law"]
    assert law is None or law["error"] <= 0.8 * min(
        f["error"] for k, f in chart.claim["fits"].items() if k != law["key"] and k != "power"
    )


def test_a_power_at_the_grids_edge_is_never_named():
    for fields in ({"norm_position": "sandwich", "norm": "dyt"}, {"norm_position": "mix", "norm": "batchnorm"}):
        law = build("norms", traced(**fields), "en").claim["law"]
        assert law is None or law["p"] not in (0.25, 2.0), fields


@pytest.mark.parametrize(
    ("residual", "word"), [("none", "shrank"), ("highway", "shrank"), ("rezero", "stayed within ×1.2")]
)
def test_a_stream_that_does_not_grow_is_not_said_to(residual, word):
    text = build("norms", traced(residual=residual), "en").caption
    assert word in text and "longer" not in text and "grew" not in text, text


def test_post_ln_without_a_shortcut_has_no_add():
    text = build("norms", traced(norm_position="post", residual="none"), "en").caption
    assert "after the add" not in text and "at the end of every block" in text, text


def test_depth_one_compares_the_block_with_the_embedding():
    text = build("norms", traced(depth=1), "en").caption
    assert "from layer 1 to layer 1" not in text and "at layer 1" in text, text


def test_a_large_shortcut_scale_is_measured_until_the_entries_overflow():
    """α = 16: the stream's norm was reported inf at layer 8 while its entries were finite (the squares overflow
    float32); the recorder recomputes such snapshots in float64."""
    trace = traced(residual_scale=16.0)
    first_inf = next(k for k, layer in enumerate(trace["layers"], 1) if not math.isfinite(layer["act_max_abs"]))
    assert all(math.isfinite(layer["act_norm"]) for layer in trace["layers"][: first_inf - 1])
    assert build("norms", trace, "en").claim["overflow_layer"] == first_inf


@pytest.mark.parametrize(("fields", "words"), [({"norm": "none"}, "norm position"), ({"final_norm": False}, "final")])
def test_a_control_that_changes_nothing_says_why(fields, words):
    """With no norm, the position changes nothing; the final norm acts after the chart's last layer."""
    base = {**SMALL, "depth": 4, **fields}
    ours = traced(**base)
    other = traced(**{**base, "norm_position": "post"} if "norm" in fields else {**base, "final_norm": True})
    assert [l["act_norm"] for l in ours["layers"]] == [l["act_norm"] for l in other["layers"]]
    assert words in build("norms", ours, "en").caption


def test_the_sqrt_d_line_is_a_legend_entry_not_a_label_on_the_data():
    chart = build("norms", traced(norm_position="post"), "en")
    root = [trace for trace in chart.figure["data"] if trace["name"].startswith("Theory √d_model")]
    assert len(root) == 1 and root[0]["y"] == [8.0, 8.0] and "annotations" not in chart.figure["layout"]
