"""`resnorm-explorer site`: a reduced static site (depth 12, both languages, the deck) built once, served by a plain
static file server under /course/, and opened in headless Chromium with every other request refused; file:// too.

The deck's training runs are shortened to 20 steps here (real training, fewer steps), /models bakes its default
model without the comparison and /gradients' heatmap opens on depths 1 to 24, so the build fits the test's time;
everything else is the command's own build.
"""

from __future__ import annotations

import functools
import threading
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from app import __version__
from app.pages import PAGES
from app.pages.static_pages import read_data_script
from app.pages.static_views import Call

SUB_PATH = "course"
TRAIN_STEPS = 20


def _shortened(recorded):
    async def run(request):
        steps = min(request.steps, TRAIN_STEPS)
        update = {"steps": steps, "warmup_steps": min(request.warmup_steps, steps // 2)}
        return await recorded(request.model_validate({**request.model_dump(), **update}))

    return run


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(folder, sizes): the site built in a thread of its own (Playwright's event loop holds this one)."""
    from app.cli.site import build
    from app.services import deck

    root = tmp_path_factory.mktemp("static-root")
    out = root / SUB_PATH
    out.mkdir()
    result: dict = {}

    def run() -> None:
        try:
            result["sizes"] = build(out, (12,), ("en", "zh"), "http://127.0.0.1:8000")
        except BaseException as exc:  # re-raised in the test's thread
            result["error"] = exc

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deck, "recorded_events", _shortened(deck.recorded_events))
        # /models bakes one real model, the small one: its sentence set takes seconds, SmolLM2's most of a minute
        patch.setitem(PAGES["models"].extra, "default_model", "minilm")
        patch.setitem(PAGES["models"].extra, "default_compare", "none")
        patch.setitem(PAGES["gradients"].defaults, "sweep_to", 24)  # the heatmap's default rows: 1 to 24, not 96
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    if "error" in result:
        raise result["error"]
    return out, result["sizes"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def static_base(site):
    """A plain static file server (no app, no API) with the site under /course/."""
    folder, _ = site
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder.parent)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/{SUB_PATH}/"
    server.shutdown()


@pytest.fixture
def sealed(browser):
    """open(url) -> page: every request that is not the static server's (or the file itself) is refused and listed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    refused: list[str] = []
    errors: list[str] = []
    allowed: list[str] = []

    def route(route) -> None:
        url = route.request.url
        if any(url.startswith(prefix) for prefix in allowed) or url.startswith("data:"):
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    context.route("**/*", route)

    def open_(url: str, prefix: str):
        allowed[:] = [prefix]
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.extend([message.text] if message.type == "error" else []))
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=30_000)
        return page

    yield open_
    context.close()
    assert not refused, f"requests that left the site: {refused}"
    assert not errors, errors


def answers(folder: Path, page: str) -> dict:
    return read_data_script((folder / "data" / f"{page}.js").read_text(encoding="utf-8"))


def drawn(page, chart: str) -> dict:
    page.wait_for_selector(f"[data-chart='{chart}'][data-drawn] .main-svg", state="attached", timeout=30_000)
    return page.evaluate(
        """key => { const gd = document.querySelector(`[data-chart="${key}"]`);
                    return {data: gd.data.map(t => ({y: t.y, z: t.z})),
                            caption: document.querySelector(`[data-caption="${key}"]`)?.textContent || ''}; }""",
        chart,
    )


def test_pages_draw_their_baked_answers_under_a_sub_path(site, static_base, sealed):
    folder, _ = site
    from app.pages.static_views import all_views

    views = all_views((12,), ("en", "zh"))
    # /norms: the chart and caption the API built in Python, as baked (English and Chinese)
    for lang, file in (("en", "norms.html"), ("zh", "norms.zh.html")):
        page = sealed(static_base + file, static_base)
        chart = drawn(page, "norms")
        assert page.locator('[data-export="embed"]').first.is_hidden()  # no /embed/ pages in a static copy
        call = next(c for c in views["norms"][0].calls if c.path == "/api/figure/norms" and c.query["lang"] == lang)
        baked = answers(folder, "norms")[call.key]
        assert chart["caption"] == baked["caption"]
        assert chart["data"][0]["y"] == baked["figure"]["data"][0]["y"]
    # /gradients: the profile as baked, the chosen seed first and then the band of four seeds, caption and all
    page = sealed(static_base + "gradients.html", static_base)
    page.wait_for_function(
        "() => document.querySelector(\"[data-caption='grad-profile']\").textContent.includes('0–3')"
    )
    chart = drawn(page, "grad-profile")
    call = next(
        c for c in views["gradients"][0].calls
        if c.path == "/api/figure/gradients" and c.query["lang"] == "en" and c.body["seeds"] == 4
    )  # fmt: skip
    baked = answers(folder, "gradients")[call.key]
    assert chart["caption"] == baked["caption"] and len(chart["data"]) == 8
    assert chart["data"][0]["y"] == baked["figure"]["data"][0]["y"]
    assert drawn(page, "grad-heatmap")["data"][0]["z"]
    # the tour, in both languages
    for file in ("index.html", "index.zh.html"):
        assert len(drawn(sealed(static_base + file, static_base), "tour")["data"]) == 2
    # /models: the built-in sentence through the real models, when this machine had them to bake
    if (folder / "data" / "models.js").exists():
        page = sealed(static_base + "models.html", static_base)
        assert drawn(page, "models-stream")["data"]
        assert "model's card" in page.inner_text("footer")


def test_the_deck_presents_from_the_static_server(site, static_base, sealed):
    page = sealed(static_base + "lecture.html", static_base)
    page.wait_for_selector("[data-chart][data-drawn] .main-svg", state="attached", timeout=30_000)
    assert __version__ in page.inner_text("footer.static-build")


@pytest.mark.parametrize("file", ["norms.zh.html", "compare.html", "lecture.zh.html"])
def test_pages_work_from_file_urls(site, sealed, file):
    folder, _ = site
    page = sealed((folder / file).as_uri(), folder.as_uri())
    page.wait_for_selector("[data-chart][data-drawn] .main-svg", state="attached", timeout=30_000)


def test_a_baked_preset_view_loads_and_an_unbaked_one_names_the_nearest(site, static_base, sealed):
    from app.pages.static_views import all_views

    preset = next(v for v in all_views((12,), ("en",))["norms"] if v.preset == "llama")
    page = sealed(f"{static_base}norms.html?{urlencode(preset.query)}", static_base)
    assert drawn(page, "norms")["data"]
    assert page.locator("#static-notice").is_hidden()
    assert page.evaluate("document.getElementById('status').textContent") == ""

    # the presets menu (static/js/presets.js) leads to the very views Python baked, on both model pages
    llama_gradients = next(v for v in all_views((12,), ("en",))["gradients"] if v.preset == "llama")
    for file, chart in (
        ("norms.zh.html", "norms"),
        (f"gradients.html?{urlencode(llama_gradients.query)}", "grad-profile"),
    ):
        page = sealed(static_base + file, static_base)
        before = drawn(page, chart) and int(page.get_attribute(f"[data-chart='{chart}']", "data-drawn"))
        page.select_option("#ctl-preset", "deepnorm")
        page.wait_for_function(
            f"document.querySelector(\"[data-chart='{chart}']\").dataset.drawn > {before}", timeout=30_000
        )
        assert "init=deepnorm" in page.url and page.locator("#static-notice").is_hidden()

    page = sealed(f"{static_base}norms.html?depth=12&norm=rmsnorm&activation=relu&seed=3", static_base)
    page.wait_for_selector("#static-notice:not([hidden]) a", timeout=10_000)
    assert "not in this static copy" in page.inner_text("#status")
    links = page.locator("#static-notice a")
    assert 1 <= links.count() <= 3
    href = links.first.get_attribute("href")
    assert href.startswith("norms.html")
    links.first.click()
    page.wait_for_load_state()
    page.wait_for_selector("[data-chart='norms'][data-drawn] .main-svg", state="attached", timeout=30_000)
    assert page.locator("#static-notice").is_hidden()


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.found += [value for name, value in attrs if name in ("href", "src") and value and value[0] != "#"]


def references(html: str) -> list[str]:
    """Every href and src of the page's elements (not the text of its scripts)."""
    parser = _References()
    parser.feed(html)
    return parser.found


def test_every_link_and_file_resolves_and_plotly_ships_once(site):
    folder, sizes = site
    for html in folder.glob("*.html"):
        for target in references(html.read_text(encoding="utf-8")):
            parts = urlsplit(target)
            if parts.scheme in ("data", "mailto") or (parts.scheme and parts.netloc):
                continue
            assert (folder / parts.path).is_file(), f"{html.name} links {target}, which is not in the site"
    assert [p.name for p in folder.rglob("plotly*.js")] == ["plotly.min.js"]
    assert sizes["plotly"] and sizes["data"] and sum(sizes.values()) < 50e6
    assert Call("GET", "/api/presets", {"depth": "12"}).key in answers(folder, "norms")
