"""`python -m app.bench_lecture`: how fast the lecture deck puts its first chart on screen (target: under 1 s on a
warm server), measured in headless Chromium against a real uvicorn server on 127.0.0.1.

Cold: the first visit after the server started (every trace computed). Warm: later visits (the server's cache answers).
Each figure is milliseconds from the start of navigation until the slide's chart is drawn and its caption filled.
Needs Playwright and Chromium (the test extras); development only.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics

from app.localserver import free_port, local_server, uvicorn_args

SLIDES = {"model": 2, "live-gradient": 5, "alternatives": 18}   # one trace; three traces; twelve traces
CHROMIUM = os.environ.get("RESNORM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def first_chart_ms(browser, base: str, slide_id: str, number: int) -> float:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{base}/lecture?slide={number}")
    page.wait_for_function("id => document.getElementById(id).dataset.claimChecked", arg=slide_id, timeout=300_000)
    elapsed = page.evaluate("performance.now()")
    page.close()
    return elapsed


def next_slide_ms(browser, base: str) -> float:
    """A key press to the next slide's chart, once the deck has drawn everything in the background."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{base}/lecture?slide=4")
    page.wait_for_selector("body[data-all-drawn='1']", state="attached", timeout=300_000)
    started = page.evaluate("performance.now()")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.body.dataset.slide === '5'")
    elapsed = page.evaluate("performance.now()") - started
    page.close()
    return elapsed


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    port = free_port()
    with local_server(uvicorn_args(port), port, cwd=os.getcwd()) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        print(f"{'slide':16s} {'cold (ms)':>10s} {'warm median (ms)':>17s} {'warm max (ms)':>14s}   target: warm < 1000")
        for slide_id, number in SLIDES.items():
            cold = first_chart_ms(browser, base, slide_id, number)
            warm = [first_chart_ms(browser, base, slide_id, number) for _ in range(args.repeats)]
            print(f"{slide_id:16s} {cold:10.0f} {statistics.median(warm):17.0f} {max(warm):14.0f}")
        print(f"next slide after the background drawing: {next_slide_ms(browser, base):.0f} ms")
        browser.close()


if __name__ == "__main__":
    main()
