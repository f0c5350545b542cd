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
