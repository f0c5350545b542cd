"""/models in a real browser: both models drawn side by side, the first-token sink in the heatmap, a new sentence
through the URL, both languages and a phone."""

from __future__ import annotations

import pytest

from app.models.pretrained.sources import packaged_source

pytestmark = pytest.mark.skipif(
    packaged_source("minilm") is None or packaged_source("smollm2") is None,
    reason="the packaged models are not installed",
)
CHARTS = ("models-stream", "models-tokens", "models-gradient", "models-sink", "models-dims")


def test_models_page_draws_both_models_and_the_sink(watch):
    watch.open("/models?lang=en", charts=CHARTS)
    names = [trace["name"] for trace in watch.figure("models-stream")["data"]]
    assert any("SmolLM2" in n and "first token" in n for n in names)
    assert any("MiniLM" in n for n in names)
    assert "148" in watch.page.inner_text('[data-caption="models-tokens"]')
    heat = watch.figure("models-tokens")["data"][0]
    assert len(heat["z"]) == 31 and len(heat["z"][0]) == 10  # 30 blocks + the stream before them, 10 tokens
    dims = watch.page.inner_text('[data-caption="models-dims"]')
    assert "dimension 507" in dims and "a massive activation by Sun et al. 2024" in dims and "Block 12's MLP" in dims
    sink = watch.page.inner_text('[data-caption="models-sink"]')
    assert "0.12 (block 12)" in sink
    assert "not pinned" in watch.page.inner_text('[data-caption="models-stream"]')  # MiniLM: 1.94x after the norm
    assert "10 of at most 256 tokens" in watch.page.inner_text("#models-token-count")
    watch.screenshot("models-en")


def test_models_page_in_chinese_with_a_chinese_sentence(watch):
    watch.open("/models?lang=zh&text=残差连接让深层网络可以训练。&compare=none", charts=CHARTS)
    assert "逐层残差流范数" in watch.page.inner_text("body")
    ticks = watch.page.evaluate("() => document.querySelector('[data-chart=\"models-tokens\"]').layout.xaxis.ticktext")
    assert "残 1/3" in ticks
    watch.screenshot("models-zh")
