"""`resnorm-explorer site`: a reduced static site (depth 12, both languages, one extra sentence, the deck) built once,
served by a plain static file server under /course/, and opened in headless Chromium with every other request
refused; file:// too. Then the same site built with --server: its pages on one origin ask the explorer's API on
another, which answers CORS for the first alone.

The training runs (the deck's and /train's presets) are shortened to 20 steps here (real training, fewer steps),
/train bakes its first three presets (their settings and the page's default: 20 steps), /models bakes its default
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
from app.numbers import fmt
from app.pages import pages
from app.pages.static_pages import read_data_script
from app.pages.static_views import Call

SUB_PATH = "course"
TRAIN_STEPS = 20
SENTENCE = "Residual connections keep the gradient alive."


def _shortened(recorded):
    async def run(request):
        steps = min(request.steps, TRAIN_STEPS)
        update = {"steps": steps, "warmup_steps": min(request.warmup_steps, steps // 2)}
        return await recorded(request.model_validate({**request.model_dump(), **update}))

    return run


def _short_preset(preset):
    """A /train preset whose runs take TRAIN_STEPS steps (the page asks for the charts of what the preset sets)."""
    settings = preset["settings"]
    steps = {"steps": TRAIN_STEPS, "warmup_steps": min(settings["warmup_steps"], TRAIN_STEPS // 2)}
    return {**preset, "settings": {**settings, **steps}}


def _short_training(patch):
    """/train as the test's site has it: its first three presets (8 of 25 runs), every setting at TRAIN_STEPS steps."""
    train = pages()["train"].extra
    patch.setitem(train, "presets", [_short_preset(p) for p in train["presets"][:3]])
    patch.setitem(train, "settings_defaults", {**train["settings_defaults"], "steps": TRAIN_STEPS})


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
            result["sizes"] = build(out, (12,), ("en", "zh"), sentences=((1, SENTENCE),))
        except BaseException as exc:  # re-raised in the test's thread
            result["error"] = exc

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deck, "recorded_events", _shortened(deck.recorded_events))
        # /models bakes one real model, the small one: its sentence set takes seconds, SmolLM2's most of a minute
        patch.setitem(pages()["models"].extra, "default_model", "minilm")
        patch.setitem(pages()["models"].extra, "default_compare", "none")
        patch.setitem(pages()["gradients"].defaults, "sweep_to", 24)  # the heatmap's default rows: 1 to 24, not 96
        _short_training(patch)
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

    def open_(url: str, *prefixes: str):
        allowed[:] = prefixes
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
    """Every answer baked for a page: its own data file's and each other view's (data/<page>/<n>.js)."""
    files = [folder / "data" / f"{page}.js", *sorted((folder / "data" / page).glob("*.js"))]
    return {key: value for file in files for key, value in read_data_script(file.read_text(encoding="utf-8")).items()}


def data_loaded(page) -> list[str]:
    """The data files the page has asked for (its script elements: file:// pages keep no resource timings), as
    paths below the site's data/ folder."""
    names = page.evaluate("[...document.scripts].map((script) => script.src)")
    return sorted(name.split("/data/", 1)[1] for name in names if "/data/" in name)


def redrawn(page, chart: str, before: int) -> None:
    """Wait for `chart`'s next drawing after its `before`-th (a selector, not wait_for_function: the eval that uses
    is refused by the site's own Content-Security-Policy)."""
    selector = f"[data-chart='{chart}'][data-drawn]:not([data-drawn='{before}']) .main-svg"
    page.wait_for_selector(selector, state="attached", timeout=60_000)


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
    from app.pages.static_site import all_views

    views = all_views((12,), ("en", "zh"))
    # /norms: the chart and caption the API built in Python, as baked (English and Chinese)
    for lang, file in (("en", "norms.html"), ("zh", "norms.zh.html")):
        page = sealed(static_base + file, static_base)
        chart = drawn(page, "norms")
        assert page.locator('[data-export="embed"]').first.is_visible()  # each chart alone: embed/<chart>.html
        call = next(c for c in views["norms"][0].calls if c.path == "/api/figure/norms" and c.query["lang"] == lang)
        baked = answers(folder, "norms")[call.key]
        assert chart["caption"] == baked["caption"]
        assert chart["data"][0]["y"] == baked["figure"]["data"][0]["y"]
    # /gradients: the profile as baked, the chosen seed first and then the band of four seeds, caption and all
    page = sealed(static_base + "gradients.html", static_base)
    page.wait_for_selector("[data-caption='grad-profile']:has-text('0–3')", timeout=30_000)
    chart = drawn(page, "grad-profile")
    call = next(
        c for c in views["gradients"][0].calls
        if c.path == "/api/figure/gradients" and c.query["lang"] == "en" and c.body["seeds"] == 4
    )  # fmt: skip
    baked = answers(folder, "gradients")[call.key]
    assert chart["caption"] == baked["caption"] and len(chart["data"]) == 8
    assert chart["data"][0]["y"] == baked["figure"]["data"][0]["y"]
    assert drawn(page, "grad-heatmap")["data"][0]["z"]
    # /models: the built-in sentence through the real models, when this machine had them to bake
    if (folder / "data" / "models.js").exists():
        page = sealed(static_base + "models.html", static_base)
        assert drawn(page, "models-stream")["data"]
        assert "model's card" in page.inner_text("footer")


def test_every_page_draws_every_chart_it_shows_in_both_languages(site, static_base, sealed):
    """Each page of the site in each language: every chart on screen drawn from the baked answers, no notice that a
    view is missing (a page whose answers this machine could not bake says it needs the server instead)."""
    folder, _ = site
    from app.pages.static_pages import DECK, page_file

    for key, page_info in pages().items():
        if key == DECK:
            continue
        for lang in ("en", "zh"):
            page = sealed(static_base + page_file(key, lang), static_base)
            if not (folder / "data" / f"{key}.js").exists():  # /models on a machine without the real models
                assert key == "models" and "needs the explorer's server" in page.inner_text("#status"), key
                continue
            shown = [chart for chart in page_info.charts if page.locator(f"[data-chart='{chart}']").is_visible()]
            assert shown, f"{key} ({lang}) shows no chart"
            charts = [drawn(page, chart) for chart in shown]  # drawn: a chart may have no trace (MiniLM's gradient)
            assert any(chart["data"] for chart in charts), f"{key} ({lang}) drew no trace"
            assert page.locator("#static-notice").is_hidden(), f"{key} ({lang})"
            assert "not in this static copy" not in page.inner_text("#status"), f"{key} ({lang})"


def test_the_deck_presents_from_the_static_server(site, static_base, sealed):
    from app.experiments.lecture import DECK

    page = sealed(static_base + "lecture.html", static_base)
    page.wait_for_selector("[data-chart][data-drawn] .main-svg", state="attached", timeout=30_000)
    assert __version__ in page.inner_text("footer.static-build")
    # following the lecturer needs the server: Q, and a follow link that reached the copy, say so in one line
    page.keyboard.press("q")
    page.wait_for_selector("#status:has-text('need the explorer')", timeout=10_000)
    assert "phones following the lecturer" in page.inner_text("#status")
    page.close()
    page = sealed(static_base + "lecture.zh.html?follow=abcdef", static_base)
    page.wait_for_selector("#status:has-text('服务器')", timeout=10_000)
    assert "手机跟随讲者" in page.inner_text("#status") and "跟随讲者" in page.text_content("#help")
    page.close()  # an open deck would tell the speaker view its own slide (their channel)
    # the speaker view, from the same file: the slide's notes, its measured numbers and its chart as a thumbnail
    chain = next(n for n, slide in enumerate(DECK, start=1) if slide["id"] == "chain")
    speaker = sealed(f"{static_base}lecture.html?view=speaker&slide={chain}", static_base)
    speaker.wait_for_selector("#speaker-thumb-now .main-svg", state="attached", timeout=30_000)
    assert speaker.text_content("#speaker-notes") == DECK[chain - 1]["notes"]["en"]
    assert any(char.isdigit() for char in speaker.text_content("#speaker-numbers"))


def test_a_slide_embeds_from_the_deck_file(site, static_base, sealed):
    """A slide's "Embed this chart" in the site's deck is the deck file with ?embed=<id>: that slide's chart and its
    measured caption alone, from the views baked into the file (nothing fetched); an unknown id says which exist."""
    folder, _ = site
    html = (folder / "lecture.zh.html").read_text(encoding="utf-8")
    assert 'class="embed-link" href="?embed=post-vs-pre"' in html
    page = sealed(static_base + "lecture.zh.html?embed=post-vs-pre", static_base)
    page.wait_for_selector("[data-chart='lecture-post-vs-pre'] .main-svg", state="attached", timeout=30_000)
    page.wait_for_selector("body[data-ready='1']", state="attached", timeout=30_000)
    assert page.locator(".slide").count() == 0  # the deck itself is gone: one chart fills the frame
    assert "√64 = 8" in page.inner_text(".embed-caption")  # the slide's own caption, in the file's language
    page = sealed(static_base + "lecture.html?embed=no-such-slide", static_base)
    page.wait_for_selector("body[data-ready='1']", state="attached", timeout=30_000)
    assert "no chart slide called" in page.inner_text("main") and "post-vs-pre" in page.inner_text("main")


@pytest.mark.parametrize("file", ["norms.zh.html", "compare.html", "chain.html", "lecture.zh.html"])
def test_pages_work_from_file_urls(site, sealed, file):
    folder, _ = site
    page = sealed((folder / file).as_uri(), folder.as_uri())
    page.wait_for_selector("[data-chart][data-drawn] .main-svg", state="attached", timeout=30_000)
    if file == "norms.zh.html":  # a file cannot read Plotly.js for the offline HTML file: the page says so
        page.click("[data-export='html'][data-chart-key='norms']")
        page.wait_for_selector("#status:has-text('http(s)')", timeout=10_000)
        before = int(page.get_attribute("[data-chart='norms']", "data-drawn"))
        page.select_option("#ctl-preset", "deepnorm")  # a preset's answers: its own data file, loaded from disk too
        redrawn(page, "norms", before)
        assert page.locator("#static-notice").is_hidden() and data_loaded(page)[-1].startswith("norms/")


def test_a_baked_preset_view_loads_and_an_unbaked_one_names_the_nearest(site, static_base, sealed):
    from app.pages.static_site import all_views

    views = all_views((12,), ("en",))["norms"]
    number, preset = next((n, v) for n, v in enumerate(views) if v.preset == "llama")
    page = sealed(f"{static_base}norms.html?{urlencode(preset.query)}", static_base)
    assert drawn(page, "norms")["data"]
    assert page.locator("#static-notice").is_hidden()
    assert page.evaluate("document.getElementById('status').textContent") == ""
    assert data_loaded(page) == ["norms.js", f"norms/{number}.js"]  # the page's own file and this view's, no other
    page = sealed(f"{static_base}gradients.html", static_base)
    drawn(page, "grad-heatmap")
    assert data_loaded(page) == ["gradients.js"]  # the default view comes with the page: no preset's heatmaps

    # the presets menu (static/js/presets.js) leads to the very views Python baked, on both model pages
    llama_gradients = next(v for v in all_views((12,), ("en",))["gradients"] if v.preset == "llama")
    for file, chart in (
        ("norms.zh.html", "norms"),
        (f"gradients.html?{urlencode(llama_gradients.query)}", "grad-profile"),
    ):
        page = sealed(static_base + file, static_base)
        drawn(page, chart)
        before = int(page.get_attribute(f"[data-chart='{chart}']", "data-drawn"))
        page.select_option("#ctl-preset", "deepnorm")
        redrawn(page, chart, before)
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
    for html in [*folder.glob("*.html"), *(folder / "embed").glob("*.html")]:
        for target in references(html.read_text(encoding="utf-8")):
            parts = urlsplit(target)
            if parts.scheme in ("data", "mailto") or (parts.scheme and parts.netloc):
                continue
            path = parts.path or html.name  # "?embed=<id>": the same file with a query (the deck's slide embeds)
            assert (html.parent / path).is_file(), f"{html.name} links {target}, which is not in the site"
    assert [p.name for p in folder.rglob("plotly*.js")] == ["plotly.min.js"]
    assert sizes["plotly"] and sizes["data"] and sum(sizes.values()) < 50e6
    assert Call("GET", "/api/presets", {"depth": "12"}).key in answers(folder, "norms")


def test_the_training_lab_shows_each_presets_recorded_run(site, static_base, sealed, monkeypatch):
    folder, _ = site
    from app.pages.static_train import train_views

    _short_training(monkeypatch)  # the views as the site was built
    views = train_views(("en", "zh"))
    baked = answers(folder, "train")

    def recorded(view, chart="train-loss", lang="en"):
        return baked[next(c for c in view.calls if c.path == f"/api/figure/{chart}" and c.query["lang"] == lang).key]

    page = sealed(static_base + "train.html", static_base)
    chart, loss = drawn(page, "train-loss"), recorded(views[0])
    assert [trace["y"] for trace in chart["data"]] == [trace.get("y") for trace in loss["figure"]["data"]]
    assert chart["caption"] == loss["caption"] and loss["claim"]["ended"]  # the whole recorded run, at once
    assert drawn(page, "train-profile")["caption"] == recorded(views[0], "train-profile")["caption"]
    seconds = loss["claim"]["seconds"]  # how long the run took where it was recorded
    assert f"({fmt(seconds)} s" in page.inner_text("#train-progress-text") and page.is_disabled("#train-start")
    assert "recorded when this copy was built" in page.inner_text("main .intro").lower()

    # another preset's button: its own recording (four runs), no notice; in Chinese too
    before = int(page.get_attribute("[data-chart='train-loss']", "data-drawn"))
    page.click("[data-train-preset='fixes']")
    redrawn(page, "train-loss", before)
    fixes = next(v for v in views if v.query.get("runs", "").startswith("post_ln,deepnorm"))
    assert page.inner_text("[data-caption='train-loss']") == recorded(fixes)["caption"]
    assert len(recorded(fixes)["claim"]["runs"]) == 4 and page.locator("#static-notice").is_hidden()
    page = sealed(f"{static_base}train.zh.html?{urlencode(fixes.query)}", static_base)
    assert drawn(page, "train-loss")["caption"] == recorded(fixes, lang="zh")["caption"]

    # settings no recording has: the page says so and names the nearest presets
    page.fill("#ctl-steps", "100")
    page.press("#ctl-steps", "Enter")
    page.wait_for_selector("#static-notice:not([hidden]) a", timeout=10_000)
    links = page.locator("#static-notice a")
    assert links.count() == 3 and links.first.get_attribute("href").startswith("train.zh.html")


def test_embeds_and_the_decks_links_stay_in_the_site(site, static_base, sealed):
    folder, _ = site
    from app.pages.static_site import all_views

    post_ln = next(v for v in all_views((12,), ("zh",))["norms"] if v.preset == "post_ln")
    page = sealed(f"{static_base}norms.zh.html?{urlencode(post_ln.query)}", static_base)
    drawn(page, "norms")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("[data-export='embed'][data-chart-key='norms']")
    snippet = page.input_value("#embed-norms")
    src = snippet.split('src="')[1].split('"')[0].replace("&amp;", "&")
    assert src.startswith(static_base + "embed/norms.zh.html?") and "norm_position=post" in src and "lang=" not in src
    embed = sealed(src, static_base)
    assert drawn(embed, "norms")["data"] and embed.locator("header.site").count() == 0
    assert __version__ in embed.inner_text(".embed-build") and "plotly.js" in embed.inner_text(".embed-build")
    embed = sealed(src.replace("norm_position=post", "norm_position=post&seed=3"), static_base)  # not baked
    embed.wait_for_selector("#static-notice:not([hidden]) a", timeout=10_000)
    assert "不在本课程的静态副本中" in embed.inner_text("#status")
    assert 1 <= embed.locator("#static-notice a").count() <= 3
    assert embed.locator("#static-notice a").first.get_attribute("href").startswith("norms.zh.html")
    for deck in ("lecture.html", "lecture.zh.html"):
        html = (folder / deck).read_text(encoding="utf-8")
        links = references(html)
        assert links and not [link for link in links if "127.0.0.1" in link or "/embed/" in link]
        suffix = ".zh.html" if "zh" in deck else ".html"
        assert f'class="explorer" href="norms{suffix}?' in html


def test_footers_say_where_the_numbers_were_computed(site):
    folder, sizes = site
    pages = [html for html in folder.glob("*.html") if not html.name.startswith("lecture")]
    assert len(pages) == 2 * 11
    for html in pages:
        footer = html.read_text(encoding="utf-8").split('<footer class="site">')[1].split("</footer>")[0]
        assert "on this server" not in footer and "在本服务器上" not in footer, html.name
    assert "when this static copy was built" in (folder / "chain.html").read_text(encoding="utf-8")
    intros = {"models.html": "when this copy was built", "models.zh.html": "在生成本副本时"}
    for html, when in intros.items() if (folder / "data" / "models.js").exists() else ():  # real models baked
        intro = (folder / html).read_text(encoding="utf-8").split('<p class="intro">')[1].split("</p>")[0]
        assert when in intro and "this server" not in intro and "本服务器" not in intro, html  # when, not where
    assert set(sizes) == {"plotly", "scripts", "pages", "embeds", "data", "train", "deck"} and sizes["train"] > 0


def test_embeds_and_decks_carry_the_build_and_licence_lines(site):
    """Every file a reader may land on says which version built it and when, and the licences: Plotly.js's, and the
    notice of model-derived data wherever the real models' measurements are drawn."""
    folder, _ = site
    from app.experiments.lecture import slides_real

    models = (folder / "data" / "models.js").exists()
    embeds = sorted((folder / "embed").glob("*.html"))
    assert embeds
    for html in embeds:
        line = html.read_text(encoding="utf-8").split('<p class="embed-build">')[1].split("</p>")[0]
        assert __version__ in line and "plotly.js" in line and "LICENSE.plotly.js.txt" in line, html.name
        said = "model card" in line or "说明页" in line
        assert said == (models and html.name.startswith("models-")), html.name
        assert ("all-MiniLM-L6-v2 (Apache-2.0)" in line) == said, html.name  # the model the test's site baked
    for deck in ("lecture.html", "lecture.zh.html"):
        html = (folder / deck).read_text(encoding="utf-8")
        line = html.split('<footer class="static-build"')[1].split("</footer>")[0]
        assert __version__ in line and "plotly.js" in line, deck
        assert ("model card" in line or "说明页" in line) == bool(slides_real.SLIDES), deck
        assert ("SmolLM2-135M-Instruct (Apache-2.0)" in line) == bool(slides_real.SLIDES), deck


def test_a_baked_sentence_on_the_real_models_page(site, static_base, sealed):
    folder, _ = site
    if not (folder / "data" / "models.js").exists():
        pytest.skip("this machine has no real models to bake")
    page = sealed(f"{static_base}models.html?{urlencode({'text': SENTENCE})}", static_base)
    assert drawn(page, "models-stream")["data"] and page.locator("#static-notice").is_hidden()
    page = sealed(f"{static_base}models.html?{urlencode({'text': 'Not baked.'})}", static_base)
    page.wait_for_selector("#static-notice:not([hidden]) a", timeout=10_000)
    assert SENTENCE in page.inner_text("#static-notice")


# ---- --server URL: the pages on one origin, the explorer's API on another -------------------------------------


@pytest.fixture(scope="module")
def server_copy(site, tmp_path_factory):
    """(the copy's base URL, the API's, its folder): a copy built with --server on a static server of its own, and the app under
    uvicorn in a thread, its RESNORM_CORS_ORIGINS listing the copy's origin."""
    import os

    import uvicorn

    from app.cli.site import build
    from app.main import create_app
    from app.services import deck
    from app.settings import get_settings
    from tools.localserver import free_port

    root = tmp_path_factory.mktemp("server-copy")
    (root / SUB_PATH).mkdir()
    static = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=static.serve_forever, daemon=True).start()
    origin, api = f"http://127.0.0.1:{static.server_port}", f"http://127.0.0.1:{free_port()}"
    thread = threading.Thread(target=build, args=(root / SUB_PATH, (12,), ("en",)), kwargs={"server": api})
    with pytest.MonkeyPatch.context() as patch:  # the decks: the first build's recordings, from its caches
        patch.setattr(deck, "recorded_events", _shortened(deck.recorded_events))
        thread.start()
        thread.join()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(os.environ, "RESNORM_CORS_ORIGINS", origin)
        get_settings.cache_clear()
        app = create_app()
    get_settings.cache_clear()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=int(api.rsplit(":", 1)[1]), log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        threading.Event().wait(0.05)
    yield f"{origin}/{SUB_PATH}/", api, str(root / SUB_PATH)
    server.should_exit = True
    static.shutdown()


def test_a_copy_built_with_a_server_asks_it_across_origins(server_copy, sealed):
    base, api, _ = server_copy
    page = sealed(f"{base}norms.html", base, api)  # no data/ folder: the API answers, from its cache here
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    assert drawn(page, "norms")["data"] and (Path(server_copy[2]) / "data").exists() is False
    before = int(page.get_attribute("[data-chart='norms']", "data-drawn"))
    page.fill("#ctl-depth", "5")  # a depth no build computed: the API runs the model now
    page.press("#ctl-depth", "Enter")
    redrawn(page, "norms", before)
    assert len(page.evaluate("document.querySelector(\"[data-chart='norms']\").data[0].y")) == 6  # layers 0..5
    assert any(url.startswith(f"{api}/api/figure/norms") for url in asked)
    assert page.locator("#static-notice").is_hidden()
    assert f"on the explorer's server at {api}" in page.inner_text("footer.site")
    csp = page.get_attribute("meta[http-equiv='Content-Security-Policy']", "content")
    assert f"connect-src 'self' {api};" in csp


def test_an_https_copy_of_an_http_server_explains_mixed_content(server_copy, browser):
    """Served over https (the files answered by Playwright for https://course.test), asking an http server that is
    not this machine: one line says why the browser refuses."""
    base, api, _ = server_copy
    import urllib.request

    html = urllib.request.urlopen(f"{base}compare.html").read().decode()
    html = html.replace(api, "http://explorer.test:8000")
    context = browser.new_context()
    context.route("**/*", lambda route: route.abort())
    context.route("https://course.test/compare.html", lambda route: route.fulfill(body=html, content_type="text/html"))
    context.route(
        "https://course.test/assets/**",
        lambda route: route.fulfill(
            body=urllib.request.urlopen(base + route.request.url.split("course.test/")[1]).read()
        ),
    )
    page = context.new_page()
    page.goto("https://course.test/compare.html")
    page.wait_for_selector("#static-notice:not([hidden])", timeout=30_000)
    assert page.inner_text("#static-notice").startswith("This page was opened over https but its server")
    assert "http://explorer.test:8000" in page.inner_text("#static-notice")
    context.close()
