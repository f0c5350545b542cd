"""The lesson pages in Chromium: the drawn numbers are the physics (recomputed here), controls and buttons
drive the URL, reloads reproduce the chart, both languages render, embeds draw alone."""

from __future__ import annotations

import json
import math
import urllib.request
from itertools import pairwise

import pytest

from tests.conftest import layernorm_by_hand, rmsnorm_by_hand


def api(live_server: str, path: str) -> dict:
    with urllib.request.urlopen(live_server + path, timeout=60) as response:
        return json.loads(response.read())


def set_slider(watch, name: str, value: float) -> None:
    watch.page.evaluate(
        """([name, value]) => { const s = document.getElementById(`slider-${name}`);
        s.value = String(value); s.dispatchEvent(new Event('input', {bubbles: true})); }""",
        [name, value],
    )


def wait_redraw(watch, chart: str, before: int) -> None:
    watch.page.wait_for_function(
        '([key, n]) => Number(document.querySelector(`[data-chart="${key}"]`).dataset.drawn || 0) > n',
        arg=[chart, before],
    )


def test_chain_draws_the_exact_powers_and_the_case_buttons_drive_the_url(watch):
    watch.open("/chain", charts=("chain",))  # the page opens on the shortcut's case (Page.defaults), g = 0.01
    figure = watch.figure("chain")
    plain, residual = figure["data"][0]["y"], figure["data"][1]["y"]
    assert len(plain) == 96
    assert plain[-1] == pytest.approx(0.01**96, rel=1e-12) and residual[-1] == pytest.approx(1.01**96, rel=1e-12)
    assert watch.page.get_attribute("#case-shortcut", "aria-pressed") == "true"
    before = watch.drawn("chain")
    watch.page.click("#case-explode")
    wait_redraw(watch, "chain", before)
    assert "derivative=1.1" in watch.page.url
    assert watch.figure("chain")["data"][0]["y"][-1] == pytest.approx(1.1**96, rel=1e-12)
    caption = watch.page.text_content("[data-caption='chain']")
    assert f"{1.1**96:.6g}" in caption  # the exact value, not "12000"
    watch.page.click("#case-vanish")
    wait_redraw(watch, "chain", before + 1)
    assert "derivative=0.9" in watch.page.url  # the API's default is not the page's: written into the link
    assert watch.figure("chain")["data"][0]["y"][-1] == pytest.approx(0.9**96, rel=1e-12)
    shown = watch.figure("chain")
    watch.page.reload()
    watch.wait_ready(("chain",))
    assert watch.figure("chain")["data"] == shown["data"]
    watch.screenshot("lesson-chain-en")


def test_chain_depth_control_and_chinese_page(watch):
    watch.open("/chain?lang=zh&derivative=0.5&depth=20", charts=("chain",))
    assert watch.figure("chain")["data"][0]["y"][-1] == pytest.approx(0.5**20, rel=1e-12)
    before = watch.drawn("chain")
    watch.page.fill("#ctl-depth", "30")
    watch.page.press("#ctl-depth", "Enter")
    wait_redraw(watch, "chain", before)
    assert "depth=30" in watch.page.url and len(watch.figure("chain")["data"][0]["y"]) == 30
    assert "链式乘积" in watch.page.text_content("h1")
    watch.screenshot("lesson-chain-zh")


def test_layernorm_side_by_side_with_sliders_and_steps(watch):
    watch.open("/layernorm", charts=("layernorm",))
    data = watch.figure("layernorm")["data"]
    assert data[0]["y"] == [8, 2, 2, 4]
    assert data[1]["y"] == pytest.approx(layernorm_by_hand([8, 2, 2, 4])[2], rel=1e-9)
    assert [round(v, 3) for v in data[1]["y"]] == [1.633, -0.816, -0.816, 0.0]
    assert data[2]["y"] == pytest.approx(rmsnorm_by_hand([8, 2, 2, 4]), rel=1e-9)
    assert (
        watch.page.locator("#steps-layernorm li").count() == 6 and watch.page.locator("#steps-rmsnorm li").count() == 4
    )
    before = watch.drawn("layernorm")
    set_slider(watch, "gamma", 2)
    wait_redraw(watch, "layernorm", before)
    before = watch.drawn("layernorm")
    set_slider(watch, "beta", 0.5)
    watch.page.wait_for_function("() => window.location.search.includes('beta=0.5')")
    watch.page.wait_for_function(
        "n => Number(document.querySelector('[data-chart=\"layernorm\"]').dataset.drawn) > n", arg=before
    )
    data = watch.figure("layernorm")["data"]
    assert data[1]["y"] == pytest.approx(layernorm_by_hand([8, 2, 2, 4], gamma=[2.0] * 4, beta=[0.5] * 4)[2], rel=1e-9)
    assert data[2]["y"] == pytest.approx(rmsnorm_by_hand([8, 2, 2, 4], gamma=[2.0] * 4), rel=1e-9)  # RMSNorm has no β
    before = watch.drawn("layernorm")
    watch.page.fill("#vec-x", "1, 2, 3, 4, 10")
    watch.page.press("#vec-x", "Enter")
    wait_redraw(watch, "layernorm", before)
    assert "x=1,2,3,4,10" in watch.page.url
    assert watch.figure("layernorm")["data"][1]["y"] == pytest.approx(
        layernorm_by_hand([1, 2, 3, 4, 10], gamma=[2.0] * 5, beta=[0.5] * 5)[2], rel=1e-9
    )
    watch.page.click("#play-steps")
    assert watch.page.locator("#steps-layernorm li.pending").count() > 0
    watch.page.wait_for_function("() => !document.querySelector('#steps li.pending')", timeout=10_000)
    watch.screenshot("lesson-layernorm-en")


def test_layernorm_chinese(watch):
    watch.open("/layernorm?lang=zh", charts=("layernorm",))
    assert "手算" in watch.page.text_content("h1")
    assert "均值" in watch.page.text_content("#steps-layernorm")
    watch.screenshot("lesson-layernorm-zh")


def test_layernorm_takes_full_width_digits_and_separators(watch):
    watch.open("/layernorm?lang=zh", charts=("layernorm",))
    before = watch.drawn("layernorm")
    watch.page.fill("#vec-x", "８，２、２；４，１")  # typed with a Chinese input method
    watch.page.press("#vec-x", "Enter")
    wait_redraw(watch, "layernorm", before)
    assert "x=8,2,2,4,1" in watch.page.url
    assert watch.figure("layernorm")["data"][1]["y"] == pytest.approx(layernorm_by_hand([8, 2, 2, 4, 1])[2], rel=1e-9)


@pytest.mark.parametrize(
    "lang, typed, words",
    [
        (
            "en",
            "8, 2, x, 4",
            "x is not allowed here: entry 3 of Input vector x takes a finite number. Kept 8, 2, 2, 4.",
        ),
        ("zh", "8", "“输入向量 x”应为2 到 4096 个数，用逗号分隔。已保留 8, 2, 2, 4。"),
    ],
)
def test_layernorm_refuses_a_vector_beside_the_box_before_sending(watch, lang, typed, words):
    watch.open(f"/layernorm?lang={lang}", charts=("layernorm",))
    sent: list[str] = []
    watch.page.on("request", lambda r: sent.append(r.url) if "/api/layernorm" in r.url else None)
    watch.page.fill("#vec-x", typed)
    watch.page.press("#vec-x", "Enter")
    note = watch.page.wait_for_selector("#note-x").inner_text()
    assert words in note, note
    assert watch.page.input_value("#vec-x") == "8, 2, 2, 4" and sent == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_batchnorm_moves_the_groups_when_the_width_no_longer_takes_them(watch, lang):
    watch.open(f"/batchnorm?lang={lang}", charts=("batch-dependence",))
    refused: list[int] = []
    watch.page.on("response", lambda r: refused.append(r.status) if r.status >= 400 else None)
    watch.page.fill("#ctl-d_model", "6")
    watch.page.press("#ctl-d_model", "Enter")
    watch.page.wait_for_function("location.search.includes('d_model=6') && location.search.includes('groups=3')")
    assert "1, 2, 3" in watch.page.inner_text("#note-groups") or "1、2、3" in watch.page.inner_text("#note-groups")
    watch.page.wait_for_selector("[data-chart='batch-dependence'][aria-busy]", state="detached")
    watch.page.fill("#ctl-groups", "4")  # 4 does not divide 6: refused beside the field, 3 kept
    watch.page.press("#ctl-groups", "Enter")
    assert watch.page.wait_for_selector("#note-groups").inner_text().endswith(("Kept 3.", "已保留 3。"))
    assert watch.page.input_value("#ctl-groups") == "3" and refused == []


def test_softmax_scale_collapses_the_distribution(watch):
    watch.open("/softmax", charts=("softmax-probs", "softmax-sweep"))
    probs = watch.figure("softmax-probs")["data"][0]["y"]
    z = [2.0, 1.0, 0.5, 0.0, -1.0]
    expected = [math.exp(v) / sum(math.exp(u) for u in z) for v in z]
    assert probs == pytest.approx(expected, rel=1e-9)
    sweep = watch.figure("softmax-sweep")["data"]
    entropy, jacobian = sweep[0]["y"], sweep[2]["y"]
    assert all(b < a for a, b in pairwise(entropy))
    assert jacobian[-1] < 1e-30 < jacobian[0]
    before = watch.drawn("softmax-probs")
    watch.page.fill("#ctl-scale", "20")
    watch.page.press("#ctl-scale", "Enter")
    wait_redraw(watch, "softmax-probs", before)
    assert "scale=20" in watch.page.url
    assert max(watch.figure("softmax-probs")["data"][0]["y"]) > 0.99999
    watch.screenshot("lesson-softmax-en")


def test_precision_shows_the_float16_overflow_depth(watch, live_server):
    answer = api(live_server, "/api/precision")
    layer = answer["snowball"]["overflow_layer"]
    assert layer is not None
    watch.open("/precision?lang=zh", charts=("precision-overflow",))
    assert watch.page.locator("#formats-body tr").count() == 3
    assert f"第 {layer} 块" in watch.page.text_content("[data-caption='precision-overflow']")
    float16 = watch.figure("precision-overflow")["data"][1]["y"]
    assert all(v is not None for v in float16[: layer - 1]) and all(v is None for v in float16[layer - 1 :])
    watch.screenshot("lesson-precision-zh")
    before = watch.drawn("precision-overflow")
    watch.page.select_option("#ctl-norm", "layernorm")
    wait_redraw(watch, "precision-overflow", before)
    assert "norm=layernorm" in watch.page.url
    assert all(v is not None for v in watch.figure("precision-overflow")["data"][1]["y"])


@pytest.mark.parametrize("chart", ["chain", "layernorm", "softmax-sweep", "precision-overflow"])
def test_lesson_embeds_draw_alone(watch, chart):
    watch.open(f"/embed/{chart}?lang=zh", charts=(chart,))
    assert watch.page.locator("[data-chart]").count() == 1


def test_chain_csv_export_holds_the_computed_products(watch):
    watch.open("/chain?derivative=1.1&depth=12", charts=("chain",))
    with watch.page.expect_download() as info:
        watch.page.click("[data-export='csv'][data-chart-key='chain']")
    rows = info.value.path().read_text(encoding="utf-8").strip().splitlines()
    assert rows[0] == "layer,plain,residual" and len(rows) == 13
    layer, plain, residual = rows[-1].split(",")
    assert int(layer) == 12 and float(plain) == pytest.approx(1.1**12, rel=1e-12)
    assert float(residual) == pytest.approx(2.1**12, rel=1e-12)


@pytest.mark.parametrize(
    "path, chart, says, never",
    [
        ("/softmax?logits=5,5,5", "softmax-sweep", "tied", "almost no gradient"),  # p stays 1/3 at every scale
        ("/softmax?scale=316", "softmax-sweep", "one-hot", "At s = 316 it is 9.37×10⁻¹³⁸. At s = 316"),
        ("/chain?derivative=0", "chain", "exactly 0", "largest float64 number"),  # nothing overflowed
        ("/chain?derivative=10&depth=400", "chain", "largest float64 number", "exactly 0"),
    ],
)
def test_lesson_captions_follow_their_numbers(watch, path, chart, says, never):
    watch.open(path, charts=(chart,))
    caption = watch.page.inner_text(f"[data-caption='{chart}']")
    assert says in caption and never not in caption, caption
