"""A warm page draws its first charts from the answers handed over with it (app/pages/handover.py): the second visit
sends no chart request and shows the same charts and captions as the first, which asked for them."""

from __future__ import annotations

import pytest

from tests.browser.conftest import PageWatch

PAGES = {
    "/gradients?sweep_to=12": ("grad-profile", "grad-heatmap"),
    "/train": ("train-loss", "train-profile"),
}
CHART_REQUESTS = ("/api/figure/", "/api/sweep")


def visit(context, live_server, path: str, charts: tuple[str, ...]) -> tuple[list[str], dict]:
    watch = PageWatch(context.new_page(), live_server)
    sent: list[str] = []
    watch.page.on("request", lambda r: sent.append(r.url) if any(p in r.url for p in CHART_REQUESTS) else None)
    watch.open(path, charts)
    watch.page.wait_for_load_state("networkidle")
    shown = {c: (watch.figure(c), watch.page.locator(f"[data-caption='{c}']").inner_text()) for c in charts}
    watch.assert_clean()
    watch.page.close()
    return sent, shown


@pytest.mark.parametrize("path", list(PAGES))
def test_a_warm_page_draws_from_the_answers_handed_over(browser, live_server, path):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    try:
        _, first = visit(context, live_server, path, PAGES[path])  # asks (or finds it handed over already)
        sent, second = visit(context, live_server, path, PAGES[path])
    finally:
        context.close()
    assert sent == [], f"a warm page asked again: {sent}"
    assert second == first
    assert all(caption for _, caption in second.values())
