"""/compare built in Python (app/figures/compare.py): each variant's sentence from its own numbers, the norms row on
a log axis when the values span more than three decades, bad variants refused by name."""

from __future__ import annotations

import copy
import math

import plotly.graph_objects as go

from app.config import TraceConfig, preset_config
from app.figures import apply_patch
from app.numbers import fmt


def variant(key: str, **fields) -> dict:
    base = TraceConfig(**fields)
    config = base if key == "custom" else preset_config(key, base)
    return {"key": key, "changes": "", "config": config.model_dump()}


def test_each_variant_is_said_from_its_own_trace(client):
    body = {"variants": [variant("post_ln", depth=12), variant("pre_ln_2017", depth=12), variant("plain", depth=12)]}
    chart = client.post("/api/figure/compare?lang=en", json=body).json()
    traces = [client.post("/api/trace", json=v["config"]).json() for v in body["variants"]]
    post, pre, plain = chart["claim"]["variants"]
    root = math.sqrt(traces[0]["config"]["d_model"])
    assert post["pinned"] and f"held at √d_model = {fmt(root)}" in chart["caption"]
    act = [traces[1]["embedding"]["act_norm"], *(layer["act_norm"] for layer in traces[1]["layers"])]
    assert not pre["pinned"] and pre["direction"] == "grew" and pre["ratio"] == act[-1] / act[0]
    assert f"grew ×{fmt(act[-1] / act[0])} from the embedding to layer 12" in chart["caption"]
    g = [layer["grad_norm"] for layer in traces[2]["layers"]]
    assert plain["survival"] == g[0] / g[-1] and f"{fmt(g[0] / g[-1])} × the last layer's gradient" in chart["caption"]
    assert "Post-LN pins every layer's norm" not in chart["caption"]  # no fixed sentence about variants not shown
    names = [a["text"] for a in chart["figure"]["layout"]["annotations"] if a.get("name") == "column-title"]
    assert names == [
        "<b>Original Transformer (Post-LN)</b>",
        "<b>Pre-LN, 2017 recipe</b>",
        "<b>Plain deep net (no residual)</b>",
    ]
    assert len(chart["figure"]["data"]) == 6 and len(chart["rows"]) == 3 * 13
    go.Figure(chart["figure"])  # valid Plotly


def test_the_norms_row_turns_log_when_one_variant_explodes(client):
    body = {"variants": [variant("pre_ln_2017", depth=48), variant("custom", depth=48, norm="none")]}
    chart = client.post("/api/figure/compare?lang=zh", json=body).json()
    assert chart["claim"]["norm_log"] and chart["figure"]["layout"]["yaxis"]["type"] == "log"
    linear = apply_patch(copy.deepcopy(chart["figure"]), chart["patches"]["norm_linear"])
    assert linear["layout"]["yaxis"]["type"] == linear["layout"]["yaxis2"]["type"] == "linear"
    assert linear["layout"]["yaxis3"]["type"] == "log"  # the gradients row keeps its own scale
    assert "增长为" in chart["caption"] and "自定义" in chart["caption"]
    calm = client.post("/api/figure/compare", json={"variants": [variant("post_ln"), variant("pre_ln_2017")]}).json()
    assert not calm["claim"]["norm_log"] and calm["figure"]["layout"]["yaxis"]["type"] == "linear"


def test_bad_variants_are_refused_by_name(client):
    bad = client.post("/api/figure/compare", json={"variants": [{"key": "nope"}, {"key": "custom"}]}).json()
    assert bad["errors"][0]["field"] == "variants.0.key" and "post_ln" in bad["errors"][0]["allowed"]
    one = client.post("/api/figure/compare", json={"variants": [{"key": "custom"}]})
    assert one.status_code == 422 and one.json()["errors"][0]["field"] == "variants"
    assert (
        client.post("/api/figure/compare", json={"variants": [{"key": "custom", "colour": 1}] * 2}).status_code == 422
    )


def test_the_tour_says_what_its_two_traces_measured(client):
    """/'s thumbnail: Post-LN held at √d (its largest deviation given), Pre-LN's growth worked out from /api/trace."""
    chart = client.post("/api/figure/tour?lang=en", json={"depth": 24}).json()
    post = client.post("/api/trace", json={"depth": 24, "norm_position": "post"}).json()
    pre = client.post("/api/trace", json={"depth": 24, "norm_position": "pre"}).json()
    root = math.sqrt(post["config"]["d_model"])
    worst = 100 * max(abs(layer["act_norm"] / root - 1) for layer in post["layers"])
    assert f"length √64 = 8 (off by at most {fmt(worst)} %)" in chart["caption"]
    growth = pre["layers"][-1]["act_norm"] / pre["embedding"]["act_norm"]
    assert f"grew ×{fmt(growth)} from the embedding to layer 24" in chart["caption"]
    assert "keeps getting longer" not in chart["caption"] and chart["claim"]["post_pinned"]
    assert [t["name"] for t in chart["figure"]["data"]] == ["Post-LN: N(x + f(x))", "Pre-LN: x + f(N(x))"]
    shallow = client.post("/api/figure/tour?lang=zh", json={"depth": 2}).json()
    assert "2 块" in shallow["figure"]["layout"]["title"]["text"]
    assert client.post("/api/figure/tour", json={"depth": 500}).json()["errors"][0]["field"] == "depth"


def test_the_notebook_comparison_is_the_pages_json(client):
    """rx.compare(...).figure() is /compare's chart of the same variants (the page's custom settings, each with its
    varied fields as its changes), to the key."""
    import app as rx
    from tests.test_figures_norms import plain

    pair = rx.compare(depth=5, norm_position=["post", "pre"], lang="zh")
    variants = [
        {"key": "custom", "changes": f"norm_position:{p}", "config": TraceConfig(depth=5, norm_position=p).model_dump()}
        for p in ("post", "pre")
    ]
    page = client.post("/api/figure/compare?lang=zh", json={"variants": variants}).json()
    assert plain(pair.figure()) == page["figure"]
    assert pair.names == ["自定义 + norm_position:post", "自定义 + norm_position:pre"]
    logged = apply_patch(copy.deepcopy(page["figure"]), page["patches"]["norm_log"])
    assert plain(pair.figure(log=True)) == logged
    projected = apply_patch(copy.deepcopy(page["figure"]), page["patches"]["slide"])
    assert plain(pair.figure(theme="slide")) == projected != page["figure"]


def test_post_ln_and_pre_ln_keep_their_colours_in_any_column():
    """Where the norm sits has one colour in every view (the deck, /, /compare, the notebook): the first Post-LN column
    vermillion and the first Pre-LN column blue wherever they stand; every column still has its own colour."""
    from app.figures.compare import column_colors
    from app.figures.style import PALETTE

    def variant(position: str, residual: str = "identity") -> dict:
        return {"trace": {"config": {"norm_position": position, "residual": residual}}}

    order = [variant("pre", "rezero"), variant("pre"), variant("post"), variant("pre")]
    colors = column_colors(order)
    assert colors[2] == PALETTE["vermillion"] and colors[1] == PALETTE["blue"]
    assert len(set(colors)) == 4
    assert column_colors([variant("post"), variant("pre")]) == [PALETTE["vermillion"], PALETTE["blue"]]
