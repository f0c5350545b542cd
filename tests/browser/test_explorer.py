"""The explorer pages in headless Chromium: every page and embed draws in both languages, controls change the
chart and the URL, a reload reproduces it, back/forward work, exports produce real files. Screenshots land in
artifacts/screenshots/. Sweeps are kept to depths 1..12 so the suite stays quick."""

from __future__ import annotations

import json
import math
import re
import struct

import pytest

PAGES = [
    ("/", ("tour",)),
    ("/norms", ("norms",)),
    ("/gradients?sweep_to=12", ("grad-profile", "grad-heatmap")),
    ("/compare", ("compare",)),
]
EMBEDS = [
    ("/embed/tour", "tour"),
    ("/embed/norms?depth=24&theme=slide", "norms"),
    ("/embed/grad-profile", "grad-profile"),
    ("/embed/grad-heatmap?sweep_to=12", "grad-heatmap"),
    ("/embed/compare", "compare"),
]
CJK = re.compile(r"[\u4e00-\u9fff]")


def with_lang(path: str, lang: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}lang={lang}"


def shot_name(path: str, lang: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home") + f"-{lang}"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path,charts", PAGES)
def test_page_draws_its_charts(watch, path, charts, lang):
    watch.open(with_lang(path, lang), charts)
    for chart in charts:
        figure = watch.figure(chart)
        assert figure["data"], chart
        assert bool(CJK.search(figure["title"])) == (lang == "zh"), figure["title"]
    assert watch.page.locator("[data-caption]").first.inner_text().strip()
    watch.screenshot(shot_name(path, lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path,chart", EMBEDS)
def test_embed_draws_one_chart_alone(watch, path, chart, lang):
    watch.page.set_viewport_size({"width": 960, "height": 540})
    watch.open(with_lang(path, lang), (chart,))
    assert watch.page.locator("[data-chart]").count() == 1
    assert watch.page.locator("nav, #controls").count() == 0
    box = watch.page.locator(f"[data-chart='{chart}']").bounding_box()
    assert box["height"] > 450 and box["width"] > 900  # fills its frame
    watch.screenshot(shot_name(path, lang))


def test_control_changes_chart_and_url_and_reload_reproduces(watch):
    watch.open("/norms", ("norms",))
    before = watch.figure("norms")
    drawn = watch.drawn("norms")
    watch.page.select_option("#ctl-norm_position", "post")
    watch.page.wait_for_function(f"() => document.querySelector('[data-chart=norms]').dataset.drawn > {drawn}")
    assert "norm_position=post" in watch.page.url
    after = watch.figure("norms")
    assert after != before
    stream = after["data"][0]["y"]
    # Post-LN: LayerNorm (gamma = 1 at init) after every add pins each token to length sqrt(d_model) = 8.
    assert all(math.isclose(v, 8.0, rel_tol=1e-3) for v in stream[1:])
    watch.page.reload()
    watch.wait_ready(("norms",))
    assert watch.figure("norms") == after
    assert watch.page.input_value("#ctl-norm_position") == "post"


def test_back_and_forward_restore_state(watch):
    watch.open("/norms?depth=6", ("norms",))
    first = watch.figure("norms")
    watch.page.fill("#ctl-depth", "9")
    watch.page.press("#ctl-depth", "Enter")
    watch.page.wait_for_function("() => document.querySelector('[data-chart=norms]').dataset.drawn > 1")
    assert "depth=9" in watch.page.url and len(watch.figure("norms")["data"][0]["x"]) == 10
    watch.page.go_back()
    watch.page.wait_for_function("() => document.querySelector('#ctl-depth').value === '6'")
    watch.page.wait_for_function("() => document.querySelector('[data-chart=norms]').data[0].x.length === 7")
    assert watch.figure("norms") == first
    watch.page.go_forward()
    watch.page.wait_for_function("() => document.querySelector('[data-chart=norms]').data[0].x.length === 10")


def test_classroom_link_hides_controls(watch):
    watch.open("/norms?hide=dtype,init,preset&depth=8", ("norms",))
    assert watch.page.locator("#ctl-dtype").count() == 0 and watch.page.locator("#ctl-init").count() == 0
    assert watch.page.locator("#ctl-preset").count() == 0
    assert watch.page.input_value("#ctl-depth") == "8"
    watch.page.select_option("#ctl-norm", "rmsnorm")
    watch.page.wait_for_url(re.compile(r"norm=rmsnorm"))
    assert "hide=dtype,init,preset" in watch.page.url


def test_deepnorm_preset_follows_depth(watch):
    """DeepNorm's shortcut scale is alpha = (2L)^(1/4) (Wang et al. 2022): picking the preset and then changing depth keeps it right."""
    watch.open("/norms?depth=48", ("norms",))
    watch.page.select_option("#ctl-preset", "deepnorm")
    watch.page.wait_for_url(re.compile(r"init=deepnorm"))
    assert math.isclose(float(watch.page.input_value("#ctl-residual_scale")), 96**0.25, rel_tol=1e-5)
    watch.page.fill("#ctl-depth", "8")
    watch.page.press("#ctl-depth", "Enter")
    watch.page.wait_for_function(
        "() => Math.abs(Number(document.querySelector('#ctl-residual_scale').value) - Math.pow(16, 0.25)) < 1e-4"
    )
    assert watch.page.input_value("#ctl-preset") == "deepnorm"


def test_gradient_heatmap_comes_from_the_streamed_sweep(watch):
    watch.open("/gradients?sweep_to=12&depth=6", ("grad-profile", "grad-heatmap"))
    heat = watch.figure("grad-heatmap")["data"][0]
    assert len(heat["z"]) == 12
    for depth, row in enumerate(heat["z"], start=1):  # depth L has layers 0..L, nothing beyond
        filled = [v for v in row if v is not None]
        assert len(filled) == depth + 1
    profile = watch.figure("grad-profile")["data"]
    assert len(profile) in (2, 8) and len(profile[0]["y"]) == 7  # the chosen seed, then with seeds 1-3 (thin)
    # the drawn chart carries no CSV rows (half its bytes); the export asks for them
    csv = _download(watch, "grad-heatmap", "csv").path().read_text(encoding="utf-8").splitlines()
    assert csv[0].startswith("depth,layer,grad_norm") and len(csv) == 1 + sum(d + 1 for d in range(1, 13))


def test_compare_aligns_panels_for_chosen_variants(watch):
    watch.open("/compare?variants=post_ln,pre_ln,rezero&depth=6", ("compare",))
    data = watch.page.evaluate("document.querySelector('[data-chart=compare]').data.map(t => [t.xaxis, t.yaxis])")
    assert len(data) == 6
    layout = watch.page.evaluate("document.querySelector('[data-chart=compare]').layout")
    assert layout["yaxis2"]["matches"] == "y" and layout["yaxis5"]["matches"] == "y4"
    watch.page.select_option("#ctl-variants-3", "custom")
    watch.page.wait_for_url(re.compile(r"variants=post_ln,pre_ln,rezero,custom"))
    watch.page.wait_for_function("() => document.querySelector('[data-chart=compare]').data.length === 8")


def _download(watch, chart: str, kind: str):
    with watch.page.expect_download() as info:
        watch.page.click(f"[data-export='{kind}'][data-chart-key='{chart}']")
    return info.value


def test_exports_produce_real_files(watch, tmp_path):
    watch.open("/norms?depth=6&lang=zh", ("norms",))
    chart = json.loads(_download(watch, "norms", "json").path().read_text(encoding="utf-8"))  # POST /api/figure/norms
    assert chart["chart"] == "norms" and len(chart["rows"]) == 7 and "残差流" in chart["caption"]
    csv = _download(watch, "norms", "csv").path().read_text(encoding="utf-8").splitlines()
    assert csv[0].startswith("layer,act_norm") and len(csv) == 1 + 7
    png = _download(watch, "norms", "png").path().read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1920, 1080)
    svg = _download(watch, "norms", "svg").path().read_text(encoding="utf-8")
    assert "<svg" in svg[:400]
    html = _download(watch, "norms", "html").path().read_text(encoding="utf-8")
    assert len(html) > 1_000_000 and "Plotly.newPlot" in html and "<script src" not in html
    assert "残差流" in html  # the chart's Chinese labels are baked in
    watch.page.click("[data-export='embed'][data-chart-key='norms']")
    snippet = watch.page.input_value("#embed-norms")
    assert re.search(r'<iframe src="http://127\.0\.0\.1:\d+/embed/norms\?depth=6&amp;lang=zh"', snippet)


def test_standalone_html_opens_offline(watch, tmp_path):
    watch.open("/norms?depth=4", ("norms",))
    path = tmp_path / "chart.html"
    _download(watch, "norms", "html").save_as(path)
    watch.page.goto(path.as_uri())
    watch.page.wait_for_selector("#chart .main-svg")
    assert watch.page.evaluate("document.getElementById('chart').data[0].y.length") == 5


def test_bad_link_values_are_dropped_and_named(watch):
    watch.open("/norms?depth=999&norm=banana&d_model=32&residual_scale=0", ("norms",))
    notice = watch.page.inner_text("#status")
    assert "Depth (blocks) = 999 (allowed: a whole number from 1 to 128)" in notice, notice
    assert "Shortcut scale α = 0 (allowed: a number above 0, at most 16)" in notice, notice
    assert "banana (allowed: one of" in notice and "RMSNorm" in notice, notice
    assert "depth=999" not in watch.page.url and "d_model=32" in watch.page.url


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_server_refusal_names_the_setting_in_the_pages_language(watch, lang):
    watch.open(f"/norms?n_heads=3&lang={lang}", ())  # 64 is not divisible by 3: the request model refuses n_heads
    watch.page.wait_for_selector("#status.error")
    status = watch.page.inner_text("#status")
    words = {"en": "Attention heads", "zh": "注意力头数"}[lang]
    assert words in status and "1, 2, 4, 8, 16" in status, status
    if lang == "zh":
        assert not any(word in status for word in ("must", "divide", "allowed", "Input should")), status
    assert watch.page.get_attribute("#ctl-n_heads", "aria-invalid") == "true"
    watch.errors[:] = [e for e in watch.errors if "422" not in e]  # the browser logs the refused check itself


@pytest.mark.parametrize(
    "field, typed, words",
    [
        ("depth", "1000", "Depth (blocks) takes a whole number from 1 to 128. Kept 12."),
        ("residual_scale", "-0.5", "takes a number above 0, at most 16. Kept 1."),
    ],
)
def test_a_typed_value_out_of_range_is_refused_beside_its_field(watch, field, typed, words):
    watch.open("/norms", ("norms",))
    requests: list[str] = []
    watch.page.on("request", lambda r: requests.append(r.url) if r.url.endswith("/api/trace") else None)
    watch.page.fill(f"#ctl-{field}", typed)
    watch.page.press(f"#ctl-{field}", "Enter")
    note = watch.page.wait_for_selector(f"#note-{field}")
    assert words in note.inner_text() and typed in note.inner_text(), note.inner_text()
    assert watch.page.input_value(f"#ctl-{field}") in ("12", "1")  # the old value is back in the field
    assert f"{field}=" not in watch.page.url and requests == []


def test_a_chinese_page_refuses_in_chinese_and_takes_full_width_digits(watch):
    watch.open("/norms?lang=zh", ("norms",))
    watch.page.fill("#ctl-depth", "1000")
    watch.page.press("#ctl-depth", "Enter")
    note = watch.page.wait_for_selector("#note-depth").inner_text()
    assert "“深度（块数）”应为1 到 128 之间的整数。已保留 12。" in note, note
    watch.page.focus("#ctl-depth")
    watch.page.fill("#ctl-depth", "")
    watch.page.keyboard.insert_text("２４")  # typed with a Chinese input method
    watch.page.press("#ctl-depth", "Enter")
    watch.page.wait_for_function("location.search.includes('depth=24')")
    assert watch.page.query_selector("#note-depth") is None


def test_slide_theme_and_log_axis(watch):
    watch.open("/norms?theme=slide&norm_scale=log", ("norms",))
    layout = watch.page.evaluate("document.querySelector('[data-chart=norms]').layout")
    assert layout["yaxis"]["type"] == "log" and layout["font"]["size"] >= 20
    assert "theme-slide" in watch.page.get_attribute("body", "class")
    watch.screenshot("norms-slide-log")


def test_float16_overflow_is_marked(watch):
    """A plain stack without norm in float16 overflows: the chart shows the 65504 line and shades the overflowed layers."""
    watch.open("/norms?norm=none&residual=identity&init=torch&dtype=float16&depth=12&residual_scale=2", ("norms",))
    layout = watch.page.evaluate("document.querySelector('[data-chart=norms]').layout")
    limit = [t["y"] for t in watch.figure("norms")["data"] if t["name"] == "float16 limit 65504"]
    assert limit == [[65504, 65504]]  # a legend entry: its label never sits on the data
    assert any(s["type"] == "rect" for s in layout["shapes"])
    watch.screenshot("norms-float16-overflow")


@pytest.mark.parametrize("path", ["/norms", "/gradients?sweep_to=4", "/compare"])
def test_controls_are_labelled_and_page_fits_a_projector(watch, path):
    watch.open(path)
    unlabelled = watch.page.evaluate("""() => [...document.querySelectorAll('#controls select, #controls input')]
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map(el => el.id || el.name)""")
    assert not unlabelled
    assert (
        watch.page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    )  # no sideways scrolling at 1280x720


def test_keyboard_alone_changes_the_chart(watch):
    watch.open("/norms?depth=4", ("norms",))
    drawn = watch.drawn("norms")
    watch.page.focus("#ctl-norm_position")
    watch.page.keyboard.press("ArrowDown")  # pre -> post
    watch.page.wait_for_url(re.compile(r"norm_position=post"))
    watch.page.wait_for_function(f"() => Number(document.querySelector('[data-chart=norms]').dataset.drawn) > {drawn}")
    for _ in range(40):  # the export buttons are reachable with Tab
        watch.page.keyboard.press("Tab")
        if watch.page.evaluate("() => document.activeElement.dataset.export") == "png":
            break
    else:
        pytest.fail("PNG export button not reachable with Tab")


def test_url_state_round_trips_through_the_schema(watch):
    """state.js: query -> typed state -> query keeps only non-defaults, drops out-of-range values, keeps lang/hide."""
    watch.open("/norms", ("norms",))
    result = watch.page.evaluate("""async () => {
        const s = await import('/static/js/state.js');
        const schema = await (await fetch('/api/schema')).json();
        const specs = s.specsFromSchema(schema);
        const read = s.readQuery(specs, '?depth=48&norm_position=post&residual_scale=0&final_norm=false&d_model=64&lang=zh&hide=dtype');
        return {state: read.state, invalid: read.invalid, query: s.toQuery(specs, read.state, read.extra)};
    }""")
    assert result["state"]["depth"] == 48 and result["state"]["final_norm"] is False
    assert result["invalid"] == ["residual_scale"]  # exclusiveMinimum 0 in the schema
    assert result["query"] == "?depth=48&norm_position=post&final_norm=false&lang=zh&hide=dtype"


def test_compare_variants_can_carry_their_own_changes(watch):
    """Same preset twice, one in float16: a custom variant defined entirely by the link."""
    watch.open("/compare?variants=pre_ln,pre_ln&changes_2=norm:rmsnorm,depth:4&depth=6", ("compare",))
    data = watch.page.evaluate("document.querySelector('[data-chart=compare]').data.map(t => t.x.length)")
    assert data == [7, 7, 5, 5]  # layers 0..6 for the base, 0..4 for the changed variant
    titles = watch.page.evaluate("document.querySelector('[data-chart=compare]').layout.annotations.map(a => a.text)")
    assert any("norm:rmsnorm" in text for text in titles)
    watch.page.fill("#ctl-changes_1", "dtype:float99")
    watch.page.press("#ctl-changes_1", "Enter")
    note = watch.page.wait_for_selector("#note-changes_1").inner_text()
    assert "dtype:float99 is not allowed for Variant 1: changes" in note and "Kept (empty)" in note, note
    assert watch.page.input_value("#ctl-changes_1") == ""  # the old value is back
    assert "changes_1" not in watch.page.url
