"""Browser-test fixtures: a live uvicorn server on 127.0.0.1 and Debian's Chromium driven by Playwright.

Without /usr/bin/chromium the tests skip locally but FAIL when the CI environment variable is set.
Screenshots land in artifacts/screenshots/ (gitignored) for a human to look at.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser.screens import DEVICES
from tools.chromium import CHROMIUM, CHROMIUM_ARGS
from tools.localserver import free_port, local_server, uvicorn_args

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def _chromium_present():
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM}: install Debian's chromium package"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {
        **browser_context_args,
        "viewport": {"width": 1280, "height": 720},
        "locale": "en-US",
        "accept_downloads": True,
    }


@pytest.fixture(scope="session")
def live_server():
    """The real app under uvicorn in a child process; yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "RESNORM_COMPUTE_SLOTS": os.environ.get("RESNORM_COMPUTE_SLOTS", "2"),
        # A deck walk asks for many depth-96 traces at once; on a loaded 2-core machine the default 10 s wait for a
        # compute slot answers 503 before a slot frees. The 503 path itself is tested in tests/test_compute.py.
        "RESNORM_QUEUE_TIMEOUT_S": os.environ.get("RESNORM_QUEUE_TIMEOUT_S", "90"),
    }
    try:
        with local_server(uvicorn_args(port), port, env=env, cwd=str(ROOT)) as base:
            yield base
    except RuntimeError as exc:
        pytest.fail(f"the live server did not start: {exc}")


# Trace types drawn on this page that the served Plotly.js bundle does not register. Plotly draws such a trace as
# nothing, silently (its log level hides "Unrecognized trace type"), and the bundle is a partial one (static/vendor).
UNREGISTERED_TRACES = """() => {
  if (!window.Plotly) return [];
  const known = new Set(Object.keys(window.Plotly.PlotSchema.get().traces));
  return [...document.querySelectorAll('.js-plotly-plot')].flatMap((gd) => (gd.data || [])
    .map((trace) => trace.type || 'scatter').filter((type) => !known.has(type)).map((type) => `${gd.id || gd.dataset.chart}: ${type}`));
}"""


class PageWatch:
    """Collects console errors, page errors and requests to any host but the test server; at the end, checks that
    every chart on the page drew with a trace type the served Plotly.js registers."""

    def __init__(self, page, base_url: str):
        self.page, self.base = page, base_url
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.expected: list[str] = []  # console errors a test provokes on purpose (see expect)
        host = urlparse(base_url).netloc
        page.on("console", self._on_console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

        def on_request(request):
            parsed = urlparse(request.url)
            if parsed.scheme in ("http", "https", "ws", "wss") and parsed.netloc != host:
                self.foreign.append(request.url)

        page.on("request", on_request)

    def _on_console(self, message) -> None:
        if message.type == "error" and not any(text in message.text for text in self.expected):
            self.errors.append(f"console: {message.text}")

    def expect(self, text: str) -> None:
        """Console errors containing text are the test's doing (e.g. the browser's own line for each request made while
        the test holds the page offline), not the page's."""
        self.expected.append(text)

    def open(self, path: str, charts: tuple[str, ...] = (), timeout: float = 60_000):
        """Go to path and wait until the page is ready and every named chart has been drawn."""
        self.page.goto(self.base + path)
        self.wait_ready(charts, timeout)

    def wait_ready(self, charts: tuple[str, ...] = (), timeout: float = 60_000):
        self.page.wait_for_selector("body[data-ready='1']", state="attached", timeout=timeout)
        for chart in charts:
            self.page.wait_for_selector(
                f"[data-chart='{chart}'][data-drawn] :is(.main-svg, .slide-table)", state="attached", timeout=timeout
            )

    def drawn(self, chart: str) -> int:
        return int(self.page.get_attribute(f"[data-chart='{chart}']", "data-drawn") or 0)

    def figure(self, chart: str) -> dict:
        """The drawn figure's data (x/y of every trace), to compare charts across reloads."""
        return self.page.evaluate(
            """key => { const gd = document.querySelector(`[data-chart="${key}"]`);
                        return {data: gd.data.map(t => ({name: t.name, x: t.x, y: t.y, z: t.z, visible: t.visible})),
                                title: gd.layout.title && gd.layout.title.text}; }""",
            chart,
        )

    def screenshot(self, name: str):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    def unregistered_traces(self) -> list[str]:
        if self.page.is_closed() or not self.page.url.startswith(self.base):
            return []
        return self.page.evaluate(UNREGISTERED_TRACES)

    def assert_clean(self):
        assert not self.errors, self.errors
        assert not self.foreign, f"requests to other hosts: {self.foreign}"
        missing = self.unregistered_traces()
        assert not missing, f"charts drew trace types the Plotly.js bundle lacks (static/vendor/README.md): {missing}"


@pytest.fixture
def watch(page, live_server):
    w = PageWatch(page, live_server)
    yield w
    w.assert_clean()


@pytest.fixture
def open_device(browser, live_server):
    """open_device(device, **context_options) -> a PageWatch on a fresh page of that size; checked clean at the end."""
    opened = []

    def open_(device: str, **options) -> PageWatch:
        context = browser.new_context(**DEVICES[device], locale="en-US", **options)
        watch = PageWatch(context.new_page(), live_server)
        opened.append((context, watch))
        return watch

    yield open_
    for context, watch in opened:
        try:
            watch.assert_clean()
        finally:
            context.close()
