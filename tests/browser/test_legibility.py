"""Legible at projector distance (issue 18, item 4): no chart text that covers other text or the line it explains, is
cut off by its chart or the screen, and no equation broken mid-expression, on every slide of the deck (both languages,
the 16:9 stage at 1280x720 and 1920x1080, a phone) and on every page (both languages, desktop and phone).

The detector is tests/browser/legibility.js, run in the page. The deck is walked once per language and screen (a
module-scoped cache); each slide is then its own test, so a slide that cannot pass yet is an xfail naming the slide
and its cause, and the others still count. Screenshots of every checked slide and page land in
artifacts/screenshots/legibility/ for a person to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from app.experiments.lecture import DECK
from tests.browser.conftest import SCREENSHOTS
from tests.browser.screens import DEVICES, every_page, with_lang

DETECTOR = (Path(__file__).with_name("legibility.js")).read_text(encoding="utf-8")
SHOTS = SCREENSHOTS / "legibility"
SCREENS = {
    "1280x720": {"viewport": {"width": 1280, "height": 720}},
    "1920x1080": {"viewport": {"width": 1920, "height": 1080}},
    "phone": DEVICES["phone"],
}
# Slides that cannot pass yet, by slide id (never by number: the deck is reordered), with the cause.
KNOWN: dict[tuple[str, str], str] = {
    # Found when the deck's three-seed slide met legible.js: on a 390 px phone its legend rows wrap up into the chart
    # title and down onto the right panel's y title. Moving the legend under the plot clipped other pages' legends;
    # open (xfails only while the fault is there).
    ("norm-collapse", "phone"): "phone: slide 6's legend rows wrap into the chart title and the right panel's y title",
}


class DeckWalk:
    """Opens the deck once per (language, screen), shows every slide in turn and records the detector's findings."""

    def __init__(self, browser, base: str) -> None:
        self.browser, self.base = browser, base
        self.found: dict[tuple[str, str], dict[str, list[str]]] = {}
        self.route: tuple[str, str] | None = None
        self.label = ""  # screenshot name prefix

    def problems(self, lang: str, screen: str, slide_id: str) -> list[str]:
        if (lang, screen) not in self.found:
            self.found[lang, screen] = self._walk(lang, screen)
        return self.found[lang, screen][slide_id]

    def _walk(self, lang: str, screen: str) -> dict[str, list[str]]:
        context = self.browser.new_context(**SCREENS[screen], locale="en-US")
        page = context.new_page()
        if self.route:  # (pattern, module text): serve this module instead (the detector's own test)
            pattern, body = self.route
            page.route(pattern, lambda route: route.fulfill(body=body, content_type="text/javascript"))
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(f"{self.base}/lecture?lang={lang}")
            page.wait_for_selector("body[data-ready='1']", state="attached", timeout=60_000)
            found = {}
            for number, slide in enumerate(DECK, start=1):
                show_drawn(page, number, slide["id"])
                page.wait_for_timeout(150)  # the chart's own after-draw adjustments (legend room, resize)
                root = "document.body" if screen == "phone" else f"document.getElementById('{slide['id']}')"
                found[slide["id"]] = page.evaluate(f"(() => {{ const check = {DETECTOR}; return check({root}); }})()")
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"{self.label}deck-{lang}-{screen}-{number:02d}-{slide['id']}.png"))
            assert not errors, errors
            return found
        finally:
            context.close()


def show_drawn(page, number: int, slide_id: str, tries: int = 10) -> None:
    """Show slide `number` and wait until its chart and caption are drawn. A busy server (a cold cache, other work on
    the machine) may answer a slide's request with 503; the deck draws a failed slide again when it is shown again,
    so after 30 s without a caption show the slide again."""
    for attempt in range(tries):
        if attempt:
            page.evaluate("() => { location.hash = '#' + document.querySelector('.slide').id; }")
        page.evaluate("id => { location.hash = '#' + id; }", slide_id)
        page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=number)
        try:
            page.wait_for_function(
                """id => { const s = document.getElementById(id);
                   return s.dataset.claimChecked || s.dataset.training === 'idle'; }""",
                arg=slide_id,
                timeout=30_000,
            )
            # a predict slide: the student's view once the answer is shown (its question stays above it)
            page.evaluate("id => document.querySelector(`#${id} [data-reveal]`)?.click()", slide_id)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"slide {number} ({slide_id}) was not drawn after {tries} tries")


@pytest.fixture(scope="module")
def deck_walk(browser, live_server):
    return DeckWalk(browser, live_server)


def check(problems: list[str], key: tuple[str, str]) -> None:
    if key in KNOWN and problems:
        pytest.xfail(KNOWN[key])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("slide_id", [s["id"] for s in DECK])
@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_slide_is_legible(deck_walk, lang, screen, slide_id):
    check(deck_walk.problems(lang, screen, slide_id), (slide_id, screen))


# legible.js with every fix switched off: what the deck looks like without it (the state issue 18 describes).
NO_FIXES = """export async function legible() {}
export function fitEquations() {}
export function typesetFigure(figure) { return figure; }
export async function legibleImage(figure, size, format) {
  return window.Plotly.toImage({ data: figure.data, layout: { ...figure.layout, ...size } }, { format, ...size });
}
"""


def test_the_detector_finds_the_faults_legible_js_fixes(browser, live_server):
    """The detector is not blind: with legible.js switched off, the deck at 1280x720 shows each kind of fault issue
    18 lists (ticks running together, a title on a line, a note hiding its line, a cut-off axis title, an equation
    broken mid-expression, touching bar labels, raw underscores)."""
    walk = DeckWalk(browser, live_server)
    walk.route, walk.label = ("**/js/legible.js", NO_FIXES), "without-legible-"
    found = walk._walk("en", "1280x720")
    problems = [p for slide in found.values() for p in slide]
    kinds = {
        kind for kind in ("overlap", "on-line", "clipped", "wrap", "typeset") if any(f"{kind}:" in p for p in problems)
    }
    assert kinds == {"overlap", "on-line", "clipped", "wrap", "typeset"}, problems
    assert any("tick" in p and "overlap" in p for p in problems), problems
    assert any("bar label" in p and "overlap" in p for p in problems), problems


TRAINING = [s["id"] for s in DECK if s["chart"] and any(src["api"] == "train" for src in s["chart"]["sources"])]


@pytest.mark.parametrize("slide_id", TRAINING)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_training_slides_are_legible_after_training(browser, live_server, lang, slide_id):
    """A training slide changes when T is pressed: its loss curves, and the labels that must stay off them. The
    server keeps a finished run, so the second language replays the first one's training."""
    context = browser.new_context(**SCREENS["1280x720"], locale="en-US")
    try:
        page = context.new_page()
        page.goto(f"{live_server}/lecture?lang={lang}#{slide_id}")
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=60_000)
        page.wait_for_function("id => document.body.dataset.slide && location.hash === '#' + id", arg=slide_id)
        page.keyboard.press("t")
        page.wait_for_function(
            "id => document.getElementById(id).dataset.training === 'done'", arg=slide_id, timeout=600_000
        )
        page.wait_for_timeout(300)
        problems = page.evaluate(
            f"(() => {{ const check = {DETECTOR}; return check(document.getElementById('{slide_id}')); }})()"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"deck-{lang}-trained-{slide_id}.png"))
    finally:
        context.close()
    check(problems, (slide_id, "trained"))


def page_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.split("?")[0].lower()).strip("-") or "home"


PAGES = [(path, charts) for path, charts in every_page() if not path.startswith("/embed/") and path != "/lecture"]


@pytest.mark.parametrize("device", ["desktop", "phone"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path,charts", PAGES, ids=[page_name(p) for p, _ in PAGES])
def test_every_page_is_legible(open_device, path, charts, lang, device):
    watch = open_device(device)
    watch.open(with_lang(path, lang), charts)
    watch.page.wait_for_timeout(150)
    problems = watch.page.evaluate(f"(() => {{ const check = {DETECTOR}; return check(document.body); }})()")
    SHOTS.mkdir(parents=True, exist_ok=True)
    watch.page.screenshot(path=str(SHOTS / f"page-{page_name(path)}-{lang}-{device}.png"), full_page=True)
    check(problems, (page_name(path), device))
