"""/train in a real browser: nothing runs until Start; Start draws live loss curves and a per-layer profile;
Stop aborts the fetch and the server run ends; presets set the URL; both languages."""

from __future__ import annotations

import json
import re
import time
import urllib.request

SMALL = "depth=2&steps=40&runs=pre_ln_2017,post_ln"


def _active(base: str) -> int:
    with urllib.request.urlopen(base + "/api/train/status", timeout=5) as response:
        return json.load(response)["active"]


def _wait(watch, expression: str, timeout: float = 60.0) -> None:
    """Poll a JS expression from Python (the page's CSP forbids wait_for_function's string evaluation)."""
    deadline = time.monotonic() + timeout
    while not watch.page.evaluate(f"() => Boolean({expression})"):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        time.sleep(0.1)


def _runs(figure: dict) -> list[dict]:
    """The runs' curves ("1. …", "2. …"), not the uniform guess's reference line."""
    return [trace for trace in figure["data"] if re.match(r"\d+\. ", trace["name"] or "")]


def _loss_lengths(watch) -> list[int]:
    return [len(trace["y"] or []) for trace in _runs(watch.figure("train-loss"))]


def test_start_trains_every_run_and_draws_both_charts(watch):
    watch.open(f"/train?lang=en&{SMALL}", charts=("train-loss", "train-profile"))
    assert _loss_lengths(watch) == []  # a link alone never starts a run
    assert watch.page.inner_text("#train-progress-text") == "Choose the runs and settings, then press Start."
    watch.page.click("#train-start")
    _wait(watch, "document.querySelector('#train-progress-text').textContent.startsWith('Finished')", 60)
    _wait(watch, "document.querySelector('[data-caption=\"train-loss\"]').textContent.includes('accuracy')")
    assert _loss_lengths(watch) == [40, 40]
    names = [trace["name"] for trace in _runs(watch.figure("train-loss"))]
    assert names[0].startswith("1. Pre-LN") and names[1].startswith("2. Original Transformer")
    assert "uniform guess: ln 15 = 2.71" in [trace["name"] for trace in watch.figure("train-loss")["data"]]
    profile = watch.figure("train-profile")
    shown = [trace for trace in profile["data"] if trace["visible"] is not False]
    assert "step 40" in profile["title"] and len(shown) == 2
    assert all(len(trace["x"]) == 3 for trace in shown)  # embedding + 2 blocks
    assert "layer 1 gets" in watch.page.inner_text('[data-caption="train-profile"]')
    assert watch.page.get_attribute("#train-stop", "disabled") is not None
    watch.screenshot("train-en")


def test_stop_cancels_the_server_run_in_chinese(watch, live_server):
    watch.open("/train?lang=zh&depth=2&steps=2000", charts=("train-loss",))
    assert "训练" in watch.page.inner_text("h1")
    watch.page.click("#train-start")
    _wait(watch, "document.querySelector('#train-progress').value > 0.01", 30)
    assert _active(live_server) == 1
    watch.page.click("#train-stop")
    _wait(watch, "document.querySelector('#train-progress-text').textContent.includes('停止')")
    deadline = time.monotonic() + 15
    while _active(live_server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _active(live_server) == 0
    assert 0 < max(_loss_lengths(watch)) < 2000
    watch.screenshot("train-zh-stopped")


def test_preset_sets_the_url_and_is_marked(watch):
    watch.open("/train?lang=en", charts=("train-loss",))
    assert watch.page.get_attribute("[data-train-preset='post_vs_pre']", "aria-pressed") == "true"
    watch.page.click("[data-train-preset='fixes']")
    _wait(watch, "location.search.includes('runs=')")
    assert "runs=post_ln,deepnorm,rezero,post_ln_gpt2" in watch.page.url
    assert watch.page.get_attribute("[data-train-preset='fixes']", "aria-pressed") == "true"
    assert watch.page.get_attribute("[data-train-preset='post_vs_pre']", "aria-pressed") == "false"
    assert watch.page.input_value("#ctl-runs-2") == "rezero"
