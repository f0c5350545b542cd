"""The lecture deck in Chromium: walk every slide in both languages with the keys a clicker sends, the URL and
reload, the speaker view in sync, a training slide on T, the offline file from file:// with the network blocked,
printing (one PDF page per slide), an embed, a phone. Screenshots of every slide land in
artifacts/screenshots/lecture/ for a human to look at."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.request
from pathlib import Path

import pytest

from app.experiments.lecture import DECK
from tests.browser.conftest import ROOT, SCREENSHOTS, UNREGISTERED_TRACES, PageWatch
from tests.browser.screens import DEVICES
from tools.localserver import free_port, local_server, uvicorn_args

SHOTS = SCREENSHOTS / "lecture"
NUMBER = {s["id"]: i for i, s in enumerate(DECK, start=1)}
TRAINING = {s["id"] for s in DECK if s["chart"] and any(src["api"] == "train" for src in s["chart"]["sources"])}
KEYS = ["ArrowRight", "Space", "PageDown"]  # what presentation clickers and keyboards send


class Export:
    """The offline file, requested in a thread as soon as the module starts: its first export records the training
    runs (about a minute), which then overlaps the other tests instead of adding to them."""

    def __init__(self, base: str) -> None:
        self.files: dict[str, bytes] = {}
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._fetch, args=(base,), daemon=True)
        self.thread.start()

    def _fetch(self, base: str) -> None:
        try:
            for lang in ("zh", "en"):
                with urllib.request.urlopen(f"{base}/lecture.html?lang={lang}", timeout=900) as response:
                    self.files[lang] = response.read()
        except Exception as exc:  # reported by the test that needs the file
            self.error = exc

    def file(self, lang: str, timeout: float = 900) -> bytes:
        self.thread.join(timeout)
        assert self.error is None, self.error
        return self.files[lang]


@pytest.fixture(scope="module")
def export(live_server):
    return Export(live_server)


def current(watch) -> dict:
    return watch.page.evaluate("""() => { const s = document.querySelector('.slide.current');
        return {id: s.id, index: Number(s.dataset.slide), url: location.href, checked: s.dataset.claimChecked || '',
                claim: s.querySelector('[data-claim]').textContent}; }""")


def wait_slide(watch, number: int) -> None:
    watch.page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=number)


def wait_drawn(watch, slide_id: str) -> None:
    """The slide's chart (or table) is on screen and its caption holds measured numbers."""
    watch.page.wait_for_function(
        """id => { const s = document.getElementById(id);
        return s.dataset.claimChecked || s.dataset.training === 'idle'; }""",
        arg=slide_id,
        timeout=120_000,
    )


def hidden(watch, slide_id: str) -> list[str]:
    """Which of a slide's chart and lead a student cannot see (visibility: hidden)."""
    return watch.page.evaluate(
        """id => [...document.querySelectorAll(`#${id} .slide-figure, #${id} .lead`)]
           .filter(e => getComputedStyle(e).visibility === 'hidden').map(e => e.className)""",
        slide_id,
    )


def overflowing(watch, slide_id: str) -> list[str]:
    """Boxes of the slide whose text does not fit (a lecturer would not put a cut-off sentence on screen)."""
    return watch.page.evaluate(
        """id => { const s = document.getElementById(id);
        return [...s.querySelectorAll('.slide-title, .slide-text, figcaption, .claim')]
          .filter(e => e.scrollHeight > e.clientHeight + 2 || e.scrollWidth > e.clientWidth + 2).map(e => e.className); }""",
        slide_id,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_walk_the_whole_deck_with_keys(watch, export, lang):
    SHOTS.mkdir(parents=True, exist_ok=True)
    watch.open(f"/lecture?lang={lang}")
    assert watch.page.title().startswith("讲座" if lang == "zh" else "Lecture")
    for number, slide in enumerate(DECK, start=1):
        wait_slide(watch, number)
        state = current(watch)
        assert (
            state["id"] == slide["id"]
            and f"slide={number}" in state["url"]
            and state["url"].endswith(f"#{slide['id']}")
        )
        wait_drawn(watch, slide["id"])
        if slide.get("predict"):  # the question alone first; the next key shows the answer on the same slide
            assert hidden(watch, slide["id"]) == ["lead", "slide-figure"], slide["id"]
            watch.page.keyboard.press(KEYS[number % len(KEYS)])
            watch.page.wait_for_function("id => document.getElementById(id).matches('.revealed')", arg=slide["id"])
            assert current(watch)["id"] == slide["id"] and hidden(watch, slide["id"]) == []
        state = current(watch)
        if slide["id"] not in TRAINING:
            assert state["checked"] == "ok", (slide["id"], state["claim"])
            assert "{" not in state["claim"] and state["claim"].strip()
        if slide["chart"]:
            assert watch.page.locator(f"#{slide['id']} :is(.main-svg, .slide-table)").count() > 0  # a summary: a table
        assert not overflowing(watch, slide["id"]), (slide["id"], overflowing(watch, slide["id"]))
        watch.page.screenshot(path=str(SHOTS / f"{lang}-{number:02d}-{slide['id']}.png"))
        watch.page.keyboard.press(KEYS[number % len(KEYS)])
    assert current(watch)["id"] == DECK[-1]["id"]  # past the end stays on the last slide
    watch.page.keyboard.press("Home")
    wait_slide(watch, 1)
    watch.page.keyboard.press("End")
    wait_slide(watch, len(DECK))
    watch.page.keyboard.press("PageUp")
    wait_slide(watch, len(DECK) - 1)


def shown(value: float, digits: int) -> str:
    """What the deck's formatNumber writes: 6 significant digits, ×10 with a superscript power when small."""
    mantissa, _, power = f"{value:.{digits - 1}e}".partition("e")
    superscript = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mantissa}×10{str(int(power)).translate(superscript)}" if abs(value) < 1e-3 else f"{value:.{digits}g}"


def test_captions_show_the_exact_numbers(watch):
    watch.open(f"/lecture?slide={NUMBER['chain']}")
    wait_drawn(watch, "chain")
    claim = current(watch)["claim"]
    assert shown(0.9**96, 6) in claim and shown(1.1**96, 6) in claim  # as Python computes them
    assert shown(0.9**96, 6) == "4.04838×10⁻⁵"
    watch.page.keyboard.press("ArrowRight")  # the chain product asks first: this key shows its answer
    watch.page.keyboard.press("ArrowRight")
    wait_drawn(watch, "shortcut")
    assert f"{1.01**96:.6g}" in current(watch)["claim"]


def test_a_predict_slide_asks_first_and_shows_the_answer_on_the_next_key(watch):
    predicting = [s["id"] for s in DECK if s.get("predict")]
    assert len(predicting) >= 3
    watch.open(f"/lecture?slide={NUMBER['live-gradient']}")
    wait_drawn(watch, "live-gradient")  # drawn meanwhile, at its size, behind the question
    assert hidden(watch, "live-gradient") == ["lead", "slide-figure"]
    assert watch.page.is_visible("#live-gradient .predict-question") and watch.page.is_visible("#live-gradient .reveal")
    watch.page.click("#live-gradient [data-reveal]")  # the button (a touch screen), or → below
    assert hidden(watch, "live-gradient") == [] and not watch.page.is_visible("#live-gradient .reveal")
    watch.page.keyboard.press("ArrowRight")
    wait_slide(watch, NUMBER["live-gradient"] + 1)
    watch.page.keyboard.press("ArrowLeft")  # back again: the answer stays shown
    wait_slide(watch, NUMBER["live-gradient"])
    assert hidden(watch, "live-gradient") == []
    watch.page.emulate_media(media="print")  # print shows the question and the answer
    assert hidden(watch, "float16") == [] and hidden(watch, "chain") == []
    watch.page.emulate_media(media="screen")
    watch.open(f"/lecture?slide={NUMBER['chain']}&predict=off")  # self-study: every answer at once
    wait_drawn(watch, "chain")
    assert hidden(watch, "chain") == [] and not watch.page.is_visible("#chain .reveal")
    watch.page.keyboard.press("ArrowRight")
    wait_slide(watch, NUMBER["chain"] + 1)


def test_try_it_recomputes_the_chart_and_its_checked_caption_inside_the_slide(watch):
    slide = next(s for s in DECK if s["id"] == "post-vs-pre-grad")
    twelve = next(o for o in slide["try_it"]["options"] if o["key"] == "12")
    watch.open(f"/lecture?slide={NUMBER['post-vs-pre-grad']}&predict=off")
    wait_drawn(watch, "post-vs-pre-grad")
    drawn = watch.page.get_attribute("#post-vs-pre-grad [data-slide-chart]", "data-drawn")
    watch.page.click("#post-vs-pre-grad [data-option='12']")
    watch.page.wait_for_function(
        "n => document.querySelector('#post-vs-pre-grad [data-slide-chart]').dataset.drawn !== n", arg=drawn
    )
    wait_drawn(watch, "post-vs-pre-grad")
    state = current(watch)
    assert state["id"] == "post-vs-pre-grad" and state["checked"] == "ok"
    post = urllib.request.urlopen(  # the 12-block Post-LN model, asked of the API directly
        urllib.request.Request(
            f"{watch.base}/api/trace",
            data=json.dumps(twelve["chart"]["sources"][0]["body"]).encode(),
            headers={"Content-Type": "application/json"},
        )
    )
    ratio = json.loads(post.read())["summary"]["grad_survival"]
    assert "block 12" in state["claim"] and f"{ratio:.3g}" in state["claim"]
    assert watch.page.get_attribute("#post-vs-pre-grad [data-option='12']", "aria-pressed") == "true"
    assert "12 blocks" in watch.page.text_content("#post-vs-pre-grad .settings")
    figure = watch.figure("lecture-post-vs-pre-grad")
    assert len(figure["data"][0]["y"]) == 13  # the embedding and 12 blocks
    watch.page.click("#post-vs-pre-grad [data-option='96']")  # back to the slide's own
    watch.page.wait_for_function(
        "() => document.querySelector('#post-vs-pre-grad .claim').textContent.includes('block 96')"
    )


def test_typed_numbers_recompute_the_geometry_slide_on_the_server(watch):
    """The LayerNorm geometry slide takes three typed numbers: Apply sends them, the server draws and checks the
    caption; numbers it would refuse are refused beside the entries and nothing is sent; a listed vector fills them."""
    watch.open(f"/lecture?slide={NUMBER['layernorm-geometry']}")
    wait_drawn(watch, "layernorm-geometry")
    page, chart = watch.page, "#layernorm-geometry [data-slide-chart]"
    entries = page.locator("#layernorm-geometry [data-entry]")
    for i, value in enumerate(["3", "1", "-1"]):
        entries.nth(i).fill(value)
    drawn = page.get_attribute(chart, "data-drawn")
    page.click("#layernorm-geometry [data-try-apply]")
    page.wait_for_function("([c, n]) => document.querySelector(c).dataset.drawn !== n", arg=[chart, drawn])
    wait_drawn(watch, "layernorm-geometry")
    asked = json.loads(
        urllib.request.urlopen(f"{watch.base}/api/lecture/slide/layernorm-geometry?option=3,1,-1").read()
    )
    state = current(watch)
    assert state["claim"] == asked["caption"] and "μ = 1" in state["claim"] and state["checked"] == "ok"
    assert "x=3,1,-1" in page.get_attribute("#layernorm-geometry a.explorer", "href")
    entries.nth(0).fill("1e9")
    entries.nth(0).press("Enter")
    assert "1000" in page.text_content("#layernorm-geometry .field-note") and current(watch)["claim"] == state["claim"]
    page.click("#layernorm-geometry [data-option='2,2,2']")
    page.wait_for_function("() => document.querySelector('#layernorm-geometry .claim').textContent.includes('0/0')")
    assert [entries.nth(i).input_value() for i in range(3)] == ["2", "2", "2"]
    assert page.locator("#layernorm-geometry .field-note").count() == 0
    watch.assert_clean()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_agenda_section_jumps_to_its_first_slide(watch, lang):
    watch.open(f"/lecture?slide={NUMBER['agenda']}&lang={lang}")
    watch.page.click("[data-agenda='placement']")
    wait_slide(watch, NUMBER["block-diagram"])
    assert current(watch)["id"] == "block-diagram"
    watch.page.keyboard.press("Home")
    wait_slide(watch, 1)


def test_the_url_holds_the_slide_and_reload_lands_there(watch):
    n = NUMBER["drift"]  # a slide that does not ask first: the key moves on
    watch.open(f"/lecture?lang=zh&slide={n}&theme=normal")
    assert current(watch)["id"] == DECK[n - 1]["id"]
    watch.page.keyboard.press("ArrowRight")
    wait_slide(watch, n + 1)
    watch.page.reload()
    watch.wait_ready()
    state = current(watch)
    assert state["id"] == DECK[n]["id"] and "theme=normal" in state["url"] and "lang=zh" in state["url"]
    watch.open("/lecture#drift")
    drift = next(i for i, s in enumerate(DECK, start=1) if s["id"] == "drift")
    assert current(watch)["id"] == "drift" and f"slide={drift}" in current(watch)["url"]


def test_speaker_view_follows_the_deck_and_drives_it(watch):
    n = NUMBER["model"]
    watch.open(f"/lecture?slide={n}")
    with watch.page.expect_popup() as popup:
        watch.page.keyboard.press("s")
    speaker = popup.value
    speaker.wait_for_selector("body[data-ready='1']", state="attached")
    speaker.wait_for_function(f"() => document.body.dataset.slide === '{n}'")
    assert speaker.text_content("#speaker-notes") == DECK[n - 1]["notes"]["en"]
    assert speaker.text_content("#speaker-next-title") == DECK[n]["title"]["en"]
    # the section this slide belongs to, with the agenda's planned minutes
    assert (
        speaker.text_content("#speaker-section") == "The problem: the chain product · 5 min planned · slide 1 of 2 here"
    )
    watch.page.keyboard.press("ArrowRight")  # the deck moves: the speaker view follows
    speaker.wait_for_function(f"() => document.body.dataset.slide === '{n + 1}'")
    assert DECK[n].get("predict") and hidden(watch, DECK[n]["id"])  # the chain product asks first
    speaker.keyboard.press("ArrowRight")  # from the speaker view: the deck shows the answer, on the same slide
    watch.page.wait_for_function("id => document.getElementById(id).matches('.revealed')", arg=DECK[n]["id"])
    assert watch.page.evaluate("document.body.dataset.slide") == str(n + 1)
    speaker.keyboard.press("ArrowRight")  # the speaker view moves: the deck follows
    wait_slide(watch, n + 2)
    assert DECK[n + 1]["id"] == "shortcut" and speaker.text_content("#speaker-section").startswith("The shortcut")
    assert re.fullmatch(r"\d+:\d\d", speaker.text_content("#speaker-elapsed"))
    assert re.fullmatch(r"\D*\d+:\d\d", speaker.text_content("#speaker-slide-elapsed").strip())
    # the current and the next slide as thumbnails with their charts, and the numbers to read out
    speaker.wait_for_selector("#speaker-thumb-now .main-svg", state="attached", timeout=60_000)
    speaker.wait_for_selector("#speaker-thumb-next .main-svg", state="attached", timeout=60_000)
    assert speaker.get_attribute("#speaker-thumb-now", "data-slide") == str(n + 2)
    assert speaker.get_attribute("#speaker-thumb-next", "data-slide") == str(n + 3)
    speaker.wait_for_function("() => /\\d/.test(document.getElementById('speaker-numbers').textContent)")
    numbers = speaker.text_content("#speaker-numbers")
    assert "{" not in numbers and f"{1.01**96:.6g}" in numbers  # the shortcut slide's measured 1.01⁹⁶
    SHOTS.mkdir(parents=True, exist_ok=True)
    speaker.screenshot(path=str(SHOTS / "speaker-view.png"))
    speaker.close()


@pytest.fixture
def untrained_server(tmp_path):
    """A server of its own with an empty cache: the session's server has the deck's runs recorded by the export."""
    port = free_port()
    env = {**os.environ, "RESNORM_CACHE_DIR": str(tmp_path), "RESNORM_WARM": "0"}
    with local_server(uvicorn_args(port), port, env=env, cwd=str(ROOT)) as base:
        yield base


def test_a_training_slide_trains_on_t_and_keeps_the_run(page, untrained_server):
    watch = PageWatch(page, untrained_server)
    posted: list[str] = []  # one request: the server trains and streams the chart built from the runs so far
    page.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    watch.open(f"/lecture?slide={NUMBER['train-shortcut']}")
    wait_drawn(watch, "train-shortcut")
    assert page.get_attribute("#train-shortcut", "data-training") == "idle"
    assert page.get_attribute("#train-shortcut", "data-claim-checked") is None  # nothing measured, nothing checked
    page.keyboard.press("t")
    page.wait_for_function("() => document.getElementById('train-shortcut').dataset.training === 'running'")
    page.wait_for_function(  # the curves drawn while they grow, not only once finished
        """() => (document.querySelector('#train-shortcut [data-slide-chart]').data || [])
                 .some((t) => t.y && t.y.length > 2 && t.y.length < 300)""",
        timeout=120_000,
    )
    page.wait_for_function("() => document.getElementById('train-shortcut').dataset.claimChecked", timeout=300_000)
    assert current(watch)["checked"] == "ok", current(watch)["claim"]
    assert [url.split("?")[0] for url in posted] == [f"{untrained_server}/api/lecture/slide/train-shortcut/train"]
    assert page.get_attribute("#train-shortcut", "data-training") == "done"
    lines = page.evaluate(
        "() => document.querySelector('#train-shortcut [data-slide-chart]').data.map((t) => t.y.length)"
    )
    assert lines[:3] == [2, 300, 300], lines  # the uniform guess (its two ends), then both runs' 300 steps
    page.screenshot(path=str(SHOTS / "en-trained-train-shortcut.png"))
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")  # back again: the finished run is still there
    assert page.get_attribute("#train-shortcut", "data-training") == "done"
    page.reload()  # and after a reload: the server keeps the finished run
    wait_drawn(watch, "train-shortcut")
    assert page.get_attribute("#train-shortcut", "data-training") == "done" and current(watch)["checked"] == "ok"
    watch.assert_clean()
    # the trained chart alone on a phone (its 24 px slide type): drawn, and every legend entry inside the chart
    phone = page.context.browser.new_context(**DEVICES["phone"])
    try:
        embed = phone.new_page()
        embed.goto(f"{untrained_server}/embed/lecture-train-shortcut")
        embed.wait_for_selector(".js-plotly-plot[data-drawn]", state="attached", timeout=30_000)
        entries = embed.evaluate(
            """() => { const svg = document.querySelector('.main-svg').getBoundingClientRect();
                 const box = document.querySelector('.legend rect.bg').getBoundingClientRect();   // the legend's clip
                 return [...document.querySelectorAll('.legend .traces text')].map((t) => {
                   const r = t.getBoundingClientRect();
                   return [t.textContent, r.left >= Math.max(svg.left, box.left) - 1 && r.right <= Math.min(svg.right, box.right) + 1]; }); }"""
        )
        assert len(entries) == 3 and all(inside for _, inside in entries), entries
        embed.screenshot(path=str(SHOTS / "en-trained-train-shortcut-embed-phone.png"))
    finally:
        phone.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_offline_file_presents_from_file_without_network(page, export, tmp_path, lang):
    path: Path = tmp_path / f"resnorm-lecture-{lang}.html"
    path.write_bytes(export.file(lang))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.route(re.compile(r"^(https?|wss?)://"), lambda route: route.abort())
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-all-drawn='1']", state="attached", timeout=120_000)
    for slide in DECK:
        if slide["chart"]:
            assert page.get_attribute(f"#{slide['id']}", "data-claim-checked") == "ok", slide["id"]
        if slide["chart"]:
            assert page.locator(f"#{slide['id']} :is(.main-svg, .slide-table)").count() > 0, slide["id"]
    assert page.evaluate(UNREGISTERED_TRACES) == []  # the inlined Plotly.js draws every slide's trace types
    # try it, offline: every option was recorded with the file
    chain = next(i for i, s in enumerate(DECK, start=1) if s["id"] == "chain")
    page.evaluate("() => { location.hash = '#chain'; }")
    page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=chain)
    page.click("#chain [data-reveal]")
    page.click("#chain [data-option='12']")
    page.wait_for_function("() => document.querySelector('#chain .claim').textContent.includes('¹²')")
    assert f"{0.9**12:.6g}" in page.text_content("#chain .claim") and page.is_visible("#chain .try-note")
    assert page.get_attribute("#chain", "data-claim-checked") == "ok"
    # typed numbers need the server: the geometry slide offers its listed vectors only, and says so
    page.evaluate("() => { location.hash = '#layernorm-geometry'; }")
    assert page.locator("#layernorm-geometry [data-entry]").count() == 0
    assert ("server" if lang == "en" else "服务器") in page.text_content("#layernorm-geometry .try-note")
    page.click("#layernorm-geometry [data-option='80,20,20']")
    page.wait_for_function("() => document.querySelector('#layernorm-geometry .claim').textContent.includes('μ = 40')")
    assert page.get_attribute("#layernorm-geometry", "data-claim-checked") == "ok"
    page.keyboard.press("End")
    page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=len(DECK))
    assert not errors, errors
    assert all(url.startswith("file:") for url in requests), requests
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"offline-{lang}-last.png"))


def test_print_gives_one_landscape_page_per_slide(watch):
    watch.open("/lecture")
    watch.page.wait_for_selector("body[data-all-drawn='1']", state="attached", timeout=120_000)
    pdf = watch.page.pdf(prefer_css_page_size=True, print_background=True)
    pages = re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf)
    assert len(pages) == len(DECK)
    size = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    assert size, "the PDF states no page size"
    assert float(size.group(1)) > float(size.group(2))  # landscape, 16:9
    assert float(size.group(1)) / float(size.group(2)) == pytest.approx(16 / 9, rel=0.01)


def test_a_slide_chart_embeds_alone(watch):
    watch.open("/embed/lecture-post-vs-pre?lang=zh", charts=("lecture-post-vs-pre",))
    caption = watch.page.text_content(".embed-caption")
    assert "Post-LN" in caption and "{" not in caption


def test_phone_shows_one_slide_at_the_window_width(browser, live_server):
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.goto(f"{live_server}/lecture?slide={NUMBER['live-gradient']}&lang=zh")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.wait_for_selector("#live-gradient .main-svg", state="attached")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "phone-zh-05.png"), full_page=True)
    page.close()


def test_phone_opens_a_slide_at_the_top_of_the_page(browser, live_server):
    """The deck writes the slide's id into the URL (#train-shortcut); once loaded, the browser scrolls to that
    element, which on a phone hid the site header. A slide without a drawn chart showed it."""
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page.goto(f"{live_server}/lecture?slide={NUMBER['train-shortcut']}&lang=en")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.wait_for_function("location.hash === '#train-shortcut' && document.readyState === 'complete'")
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert page.evaluate("window.scrollY") == 0 and page.locator("header.site").bounding_box()["y"] == 0
    page.close()


def test_a_touch_screen_gets_buttons_a_swipe_and_its_own_hint(open_device):
    phone = open_device("phone")
    phone.open("/lecture?slide=1&lang=zh")
    assert phone.page.is_visible(".hint-touch") and not phone.page.is_visible(".hint-keys")
    assert "→" not in phone.page.inner_text("#title .keys-hint")  # no keys to press on a phone
    phone.page.click("[data-deck-next]")
    phone.page.wait_for_function("() => document.body.dataset.slide === '2'")
    phone.page.click("[data-deck-prev]")
    phone.page.wait_for_function("() => document.body.dataset.slide === '1'")
    swipe = """dx => { const deck = document.getElementById('deck');
        const at = (x) => new Touch({identifier: 1, target: deck, clientX: x, clientY: 300});
        deck.dispatchEvent(new TouchEvent('touchstart', {touches: [at(250)], changedTouches: [at(250)], bubbles: true}));
        deck.dispatchEvent(new TouchEvent('touchend', {touches: [], changedTouches: [at(250 + dx)], bubbles: true})); }"""
    phone.page.evaluate(swipe, -150)  # right to left: the next slide
    phone.page.wait_for_function("() => document.body.dataset.slide === '2'")
    phone.page.evaluate(swipe, 150)
    phone.page.wait_for_function("() => document.body.dataset.slide === '1'")
    phone.page.evaluate(swipe, -20)  # a tap or a small drag does not turn the page
    phone.page.wait_for_timeout(200)
    assert phone.page.evaluate("document.body.dataset.slide") == "1"
    assert phone.page.evaluate("document.documentElement.scrollWidth") <= 390


def test_with_a_mouse_the_buttons_leave_the_footer_clear_until_the_mouse_moves(watch):
    opacity = "() => getComputedStyle(document.querySelector('.deck-nav')).opacity"
    watch.open("/lecture?slide=5")
    watch.page.mouse.move(5, 5)  # a mouse on the projector's laptop, then left alone
    watch.page.wait_for_function(f"() => ({opacity})() === '0'", timeout=10_000)  # the source line under them reads
    watch.page.mouse.move(300, 300)
    watch.page.wait_for_function(f"() => ({opacity})() === '1'")
    watch.page.click("[data-deck-next]")  # and they work
    watch.page.wait_for_function("() => document.body.dataset.slide === '6'")


def test_the_room_panel_opens_from_the_deck(watch):
    watch.open("/lecture?slide=5")
    watch.page.keyboard.press("q")
    watch.page.wait_for_selector("#room[open]")
    watch.page.wait_for_selector("#room[data-ready='1']", state="attached", timeout=30_000)
    assert "slide=5" in watch.page.get_attribute("#room", "data-address")
    watch.page.keyboard.press("Escape")
    watch.page.wait_for_selector("#room:not([open])", state="attached")
    watch.page.click("[data-deck-qr]")
    watch.page.wait_for_selector("#room[open]")


def test_slides_off_the_reference_model_say_so_in_large_type(watch):
    watch.open(f"/lecture?slide={NUMBER['model']}")
    note = watch.page.locator("#model .departs")
    assert note.inner_text().startswith("Not the reference model")
    assert float(note.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 20
    assert watch.page.locator("#live-gradient .departs").count() == 0
