"""Framing in a real browser: slides (any other site) may frame /embed/ charts, and nothing else."""

from __future__ import annotations


def _framed(page, url: str):
    """Put url in an iframe of a page that is not of this origin; return the iframe's frame once it settled."""
    page.set_content(f'<iframe id="f" src="{url}" width="900" height="600"></iframe>')
    page.wait_for_timeout(500)
    return page.frame_locator("#f"), page.frames[1]


def test_embed_chart_draws_inside_another_sites_frame(page, live_server):
    frame_locator, _ = _framed(page, live_server + "/embed/norms?depth=6")  # about:blank parent, as file:// slides
    frame_locator.locator("[data-chart='norms'][data-drawn] .main-svg").first.wait_for(state="attached", timeout=60_000)


def test_ordinary_pages_refuse_to_be_framed(page, live_server):
    refused: list[str] = []

    def on_console(message) -> None:
        if "frame" in message.text.lower():
            refused.append(message.text)

    page.on("console", on_console)
    _, frame = _framed(page, live_server + "/norms")
    page.wait_for_timeout(1000)
    assert frame.locator("[data-chart]").count() == 0  # the browser showed nothing of the page
    assert refused, "Chromium should report the refused frame (frame-ancestors 'none')"
