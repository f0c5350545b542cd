"""The new variants in Chromium: /batchnorm draws the served numbers in both languages and keeps its state in the
URL, the speed chart on /layernorm shows medians with their spread, and the explorer pages take block=parallel,
residual=dense and norm=groupnorm from the URL into their controls and their traces."""

from __future__ import annotations

import json
import urllib.request

import pytest


def post(live_server: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        live_server + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_batchnorm_page_draws_the_served_numbers(watch, live_server, lang):
    watch.open(f"/batchnorm?lang={lang}&batch=16&seed=3", charts=("batch-dependence", "batch-padding"))
    served = post(live_server, "/api/batch_dependence", {"norm": "batchnorm", "batch": 16, "seed": 3})
    lines = {trace["name"]: trace for trace in watch.figure("batch-dependence")["data"]}
    assert lines["BatchNorm"]["y"] == pytest.approx([row["same_sequence_change"] for row in served["by_batch"]])
    for norm in ("LayerNorm", "RMSNorm", "GroupNorm"):
        assert max(lines[norm]["y"]) <= 1e-12
    padding = {trace["name"]: trace for trace in watch.figure("batch-padding")["data"]}
    assert padding["BatchNorm"]["y"] == pytest.approx([p["output_change"] for p in served["padding"]])
    caption = watch.page.text_content("[data-caption='batch-dependence']")
    assert f"{served['same_sequence_change']:.3g}" in caption and "16" in caption
    assert watch.page.locator("#batch-table-body tr").count() == 4
    assert watch.page.input_value("#ctl-batch") == "16"
    assert watch.page.evaluate("document.documentElement.scrollWidth") <= 1280
    watch.screenshot(f"lesson-batchnorm-{lang}")


def test_batchnorm_groups_error_names_the_field(watch):
    watch.open("/batchnorm?d_model=12&groups=8")
    watch.page.wait_for_function("document.getElementById('status').textContent.includes('groups')")
    assert "1, 2, 3, 4, 6" in watch.page.text_content("#status")
    watch.errors[:] = [e for e in watch.errors if "422" not in e]  # the browser logs the refused request itself


def test_norm_speed_chart_shows_medians_with_their_spread(watch):
    watch.open("/layernorm", charts=("layernorm", "norm-speed"))
    traces = watch.page.evaluate("""() => document.querySelector('[data-chart="norm-speed"]').data
        .map((t) => ({ name: t.name, y: t.y, plus: t.error_y.array, minus: t.error_y.arrayminus }))""")
    assert len(traces) == 3 and all(len(t["y"]) == 4 for t in traces)
    assert all(v > 0 for t in traces for v in t["y"] + t["plus"] + t["minus"])
    caption = watch.page.text_content("[data-caption='norm-speed']")
    assert "RMSNorm took" in caption and "ATen" in caption


@pytest.mark.parametrize("path, chart", [("/norms", "norms"), ("/compare", "compare")])
def test_explorer_takes_the_new_variants_from_the_url(watch, path, chart):
    query = "block=parallel&residual=dense&norm=groupnorm&norm_groups=4&depth=8"
    extra = "&variants=pre_ln,custom" if path == "/compare" else ""
    watch.open(f"{path}?{query}{extra}", charts=(chart,))
    assert watch.page.input_value("#ctl-block") == "parallel"
    assert watch.page.input_value("#ctl-residual") == "dense"
    assert watch.page.input_value("#ctl-norm") == "groupnorm" and watch.page.input_value("#ctl-norm_groups") == "4"
    assert watch.page.evaluate("document.documentElement.scrollWidth") <= 1280
    if chart == "compare":  # GPT-2 against the dense custom stack: the caption says what the extra weights cost
        caption = watch.page.text_content("[data-caption='compare']")
        assert "parameters" in caption and "multiply-adds" in caption
    watch.screenshot(f"variants-{chart}")
