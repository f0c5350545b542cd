"""Budget errors that help (issue 18, item 6), in the browser: the page names the setting to blame in its own
language with the largest value that fits, sends no model request over the budget, keeps its last chart, and the
controls refuse a size over its limit before anything is sent. Today's page blamed depth, in English, and blanked."""

from __future__ import annotations

import json

import pytest

MESSAGES = {
    "en": ("Width d_model can be at most 120 (it is 512)", "Depth (blocks) to 7"),
    "zh": ("“宽度 d_model”最大只能是 120（当前为 512）", "“深度（块数）”不超过 7"),
}


def model_requests(watch) -> list[dict]:
    return [json.loads(r.post_data or "{}") for r in watch.requests if r.url.endswith("/api/trace")]


@pytest.fixture
def recorded(watch):
    watch.requests = []
    watch.page.on("request", lambda request: watch.requests.append(request))
    return watch


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_over_the_budget_blames_d_model_in_the_pages_language(recorded, lang):
    recorded.open(f"/norms?depth=128&d_model=512&lang={lang}")
    status = recorded.page.locator("#status").inner_text()
    caption = recorded.page.locator("[data-caption='norms']").inner_text()
    for part in MESSAGES[lang]:
        assert part in status and part in caption, (status, caption)
    assert "…" not in caption
    assert recorded.page.locator("#ctl-d_model").get_attribute("aria-invalid") == "true"
    assert model_requests(recorded) == []  # nothing over the budget was sent


def test_the_controls_refuse_a_width_over_its_limit_and_keep_the_chart(recorded):
    recorded.open("/norms?depth=128", ("norms",))
    before = recorded.figure("norms")
    assert recorded.page.locator("#ctl-d_model").get_attribute("max") == "120"  # from POST /api/budget
    recorded.page.locator("details.group summary").first.click()
    recorded.page.fill("#ctl-d_model", "512")
    recorded.page.locator("#ctl-d_model").dispatch_event("change")
    recorded.page.wait_for_timeout(500)
    assert "can be at most 120" in recorded.page.locator("#status").inner_text()
    assert "d_model=512" not in recorded.page.url
    assert all(body.get("d_model") != 512 for body in model_requests(recorded))
    assert recorded.figure("norms") == before


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_train_says_its_budget_before_start_in_words(watch, lang):
    """Two 12-block d_model-128 runs of 2000 steps are several times the training budget: the page says so beside
    Start in the page's language (how many times too much, the most steps that fit), and Start sends nothing."""
    watch.open(f"/train?steps=2000&d_model=128&depth=12&lang={lang}")
    started: list[str] = []
    watch.page.on("request", lambda r: started.append(r.url) if r.url.endswith("/api/train") else None)
    text = watch.page.locator("#train-progress-text")
    words = {"en": "Too much training for this server", "zh": "训练量超出本服务器的允许范围"}[lang]
    watch.page.wait_for_function(f"document.getElementById('train-progress-text').textContent.includes('{words}')")
    watch.page.click("#train-start")
    watch.page.wait_for_timeout(500)
    message = text.inner_text()
    assert any(part in message for part in ("at most", "最多只能训练")), message
    assert "e+" not in message and "multiply-adds" not in message, message
    assert started == []
