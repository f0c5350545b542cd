"""Bytes a student downloads on a first visit to every page (and on a second one), measured in headless Chromium.

Starts a server on 127.0.0.1 (or uses --url on this machine's loopback), opens every page of the navigation in a
fresh browser profile, waits until its charts are drawn, and adds up what crossed the wire: response headers and
bodies as sent (gzipped where the server gzips). Then reloads each page in the same profile: what a browser cache
with long-lived versioned URLs saves. `--root DIR` serves another checkout (e.g. an older commit, for before/after).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from contextlib import nullcontext
from urllib.parse import urlparse

from tools.chromium import CHROMIUM, CHROMIUM_ARGS
from tools.localserver import free_port, local_server, uvicorn_args


def visit(page, url: str) -> dict[str, int]:
    """Bytes by kind (html, js, css, api, other) for one load of `url`, until the page says it is ready."""
    sizes: dict[str, int] = defaultdict(int)

    def finished(request) -> None:
        response = request.response()
        if response is None:
            return
        size = request.sizes()
        kind = classify(request.url, response.headers.get("content-type", ""))
        sizes[kind] += max(0, size["responseBodySize"]) + max(0, size["responseHeadersSize"])
        if response.headers.get("x-resnorm-cache") == "computed":
            sizes["computed"] += 1  # a trace this visit had to compute (none once the warm-up is done)

    page.on("requestfinished", finished)
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", state="attached", timeout=180_000)
    page.wait_for_load_state("networkidle")
    page.remove_listener("requestfinished", finished)
    return dict(sizes)


def classify(url: str, content_type: str) -> str:
    path = urlparse(url).path
    if path.startswith("/api/"):
        return "api"
    for kind in ("html", "javascript", "css"):
        if kind in content_type:
            return {"javascript": "js"}.get(kind, kind)
    return "other"


def wait_for_warm_up(base: str, timeout_s: float = 300.0) -> None:
    """Measure what a student meets in class: the server has computed every default view (an older server without
    a warm-up answers no "warm" and is measured as it is)."""
    import time

    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        warm = httpx.get(f"{base}/api/health", timeout=30).json().get("warm")
        if not warm or warm["done"] >= warm["total"] > 0:
            return
        time.sleep(0.5)


def nav_pages(base: str) -> list[str]:
    """Every page the navigation of the home page links (so an older server is measured on its own pages)."""
    import re

    import httpx

    html = httpx.get(base + "/", timeout=60).text
    return list(dict.fromkeys(re.findall(r'<a href="(/[^"?]*)\?lang=[a-z]+" data-nav=', html)))


def measure(base: str, chromium: str) -> dict[str, dict[str, dict[str, int]]]:
    from playwright.sync_api import sync_playwright

    results: dict[str, dict[str, dict[str, int]]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        for path in nav_pages(base):
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            first = visit(page, base + path)
            again = visit(page, base + path)
            results[path] = {"first": first, "again": again}
            context.close()
        browser.close()
    return results


def report(results: dict[str, dict[str, dict[str, int]]]) -> str:
    kinds = ("html", "js", "css", "api", "other")
    lines = [
        f"{'page':<12}{'first visit kB':>16}  (" + " ".join(f"{k:>7}" for k in kinds) + f")  {'again kB':>9}  computed"
    ]
    total_first = total_again = 0
    for path, r in results.items():
        computed = r["first"].pop("computed", 0) + r["again"].pop("computed", 0)
        first, again = sum(r["first"].values()), sum(r["again"].values())
        total_first, total_again = total_first + first, total_again + again
        parts = " ".join(f"{r['first'].get(k, 0) / 1000:7.1f}" for k in kinds)
        lines.append(f"{path:<12}{first / 1000:>16.1f}  ({parts})  {again / 1000:>9.1f}  {computed:>8}")
    lines.append(f"{'all pages':<12}{total_first / 1000:>16.1f}{'':>46}{total_again / 1000:>9.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.load.first_visit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server on this machine's loopback instead of starting one")
    parser.add_argument("--root", help="serve the checkout in this folder (default: this one)")
    parser.add_argument("--chromium", default=CHROMIUM)
    args = parser.parse_args(argv)
    if args.url and urlparse(args.url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("--url must point at this machine's loopback")
    port = free_port()
    env = {**os.environ, "RESNORM_WARM": "1"}
    server = (
        nullcontext(args.url)
        if args.url
        else local_server(uvicorn_args(port), port, env=env, cwd=args.root, timeout_s=120)
    )
    with server as base:
        wait_for_warm_up(base)
        print(report(measure(base, args.chromium)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
