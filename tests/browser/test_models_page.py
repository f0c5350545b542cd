"""/models in a real browser: every chart built in Python and drawn, both models side by side, the attention sink
beside the first token's norm, the sentence set and the intervention, a new sentence through the URL, both
languages."""

from __future__ import annotations

import pytest

from app.figures import real_charts
from app.models.real.sources import packaged_source

pytestmark = pytest.mark.skipif(
    packaged_source("minilm") is None or packaged_source("smollm2") is None,
    reason="the packaged models are not installed",
)
CHARTS = tuple(kind.key for kind in real_charts())


def test_models_page_draws_both_models_and_the_sink(watch):
    watch.open("/models?lang=en", charts=CHARTS, timeout=300_000)  # SmolLM2 loads, then the set: 16 traces
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
    stream = watch.page.inner_text('[data-caption="models-stream"]')  # MiniLM: 1.94x after block 5's last norm
    assert "in blocks 1–4: pinned there; not in blocks 5–6 (up to 1.94× apart)" in stream
    assert "As Sun et al. 2024 found in LLaMA2" in watch.page.inner_text('[data-caption="models-intervention"]')
    points = watch.figure("models-intervention")["data"][0]
    assert len(points["y"]) == 3 * 8  # the English set's eight sentences, three patches each
    assert "16 of 16 sentences" in watch.page.inner_text('[data-caption="models-set"]')
    assert "10 of at most 256 tokens" in watch.page.inner_text("#models-token-count")
    watch.screenshot("models-en")


def test_models_page_in_chinese_with_a_chinese_sentence(watch):
    watch.open("/models?lang=zh&text=残差连接让深层网络可以训练。&compare=none", charts=CHARTS, timeout=300_000)
    assert "逐层残差流范数" in watch.page.inner_text("body")
    ticks = watch.page.evaluate("() => document.querySelector('[data-chart=\"models-tokens\"]').layout.xaxis.ticktext")
    assert "残 1/3" in ticks
    watch.screenshot("models-zh")
