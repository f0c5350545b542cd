"""`python -m tools.bench_pages [--base REF]`: how long each explorer page takes to put its first chart on screen, from
the start of navigation to the animation frame after the chart is drawn (static/js/charts.js sets data-drawn), on a
warm server and a warm browser; median of 5. With --base, the same pages of another commit (a git worktree of REF,
served by this checkout's Python) in the same run, visits interleaved, and the ratio new / base side by side: the
draw-once issue's "no page more than 10 % slower". The ratio is the median of paired visits (the two commits' visits
to a page one after the other, in alternating order), with a bootstrap 90 % interval: a page is "within 10 %" only
when the whole interval is at most 1.10, "slower" when all of it is above, else the run cannot tell. Needs Playwright
and Chromium (the test extras); development only.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import urllib.request
from contextlib import ExitStack
from pathlib import Path

from tools.bench_lecture import wait_for_warm_up
from tools.chromium import CHROMIUM, CHROMIUM_ARGS
from tools.localserver import free_port, local_server, uvicorn_args

ROOT = Path(__file__).resolve().parents[1]
# Each page's first chart and a query that keeps its sweep short (the heatmap streams after the profile).
PAGES = {
    "/": "tour",
    "/norms": "norms",
    "/gradients?sweep_to=12": "grad-profile",
    "/compare": "compare",
    "/train": "train-loss",
}

# Installed before the page's own scripts: the frame after a chart first gets data-drawn.
ON_SCREEN = """(() => {
  new MutationObserver((changes, observer) => changes.forEach(({ target }) => {
    if (!target.dataset || !target.dataset.drawn || window.__benchDrawn !== undefined) return;
    window.__benchDrawn = null;
    requestAnimationFrame(() => { window.__benchDrawn = performance.now(); });
    observer.disconnect();
  })).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-drawn'] });
})();"""


def first_chart_ms(context, base: str, path: str) -> float:
    page = context.new_page()
    page.add_init_script(ON_SCREEN)
    page.goto(base + path)
    page.wait_for_function("() => typeof window.__benchDrawn === 'number'", timeout=120_000)
    elapsed = page.evaluate("window.__benchDrawn")
    page.close()
    return float(elapsed)


def serve(stack: ExitStack, cwd: Path) -> str:
    """A uvicorn server of the checkout at cwd (its own app package, templates and scripts), warm, on a free port."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    base = stack.enter_context(local_server(uvicorn_args(port), port, env=env, cwd=str(cwd), timeout_s=120))
    wait_for_warm_up(base)
    return base


def worktree(stack: ExitStack, ref: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), ref], check=True,
                   capture_output=True)  # fmt: skip
    stack.callback(lambda: subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)],
                                          capture_output=True))  # fmt: skip
    stack.callback(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


def interval(ratios: list[float], draws: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The bootstrap 90 % interval of the median of paired ratios (Efron 1979): resampled with replacement."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(draws))
    return medians[int(0.05 * draws)], medians[int(0.95 * draws) - 1]


def verdict(low: float, high: float, bound: float = 1.10) -> str:
    if high <= bound:
        return "within 10 %"
    return "slower" if low > bound else "cannot tell"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="", help="a commit to compare with (e.g. HEAD~5), served from a worktree")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES), help="only these pages")
    args = parser.parse_args()
    pages = {path: PAGES[path] for path in args.pages}
    with ExitStack() as stack, sync_playwright() as playwright:
        servers = {"new": serve(stack, ROOT)}
        if args.base:
            servers["base"] = serve(stack, worktree(stack, args.base))
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        contexts = {name: browser.new_context(viewport={"width": 1280, "height": 800}) for name in servers}
        times: dict[tuple[str, str], list[float]] = {}
        for name, base in servers.items():  # warm the browser's cache and the server's answers
            for path in pages:
                first_chart_ms(contexts[name], base, path)
        for k in range(args.repeats):  # interleaved: both commits see the same moments of a noisy machine
            for path in pages:
                for name, base in list(servers.items())[:: 1 if k % 2 == 0 else -1]:  # who goes first alternates
                    times.setdefault((name, path), []).append(first_chart_ms(contexts[name], base, path))
        load = os.getloadavg()[0]
        head = f"{'page':26s} {'new median':>11s}"
        more = f" {'base median':>12s} {'new / base, paired':>19s} {'90 % interval':>14s}  verdict"
        print(head + (more if args.base else "") + f"   (ms; load {load:.1f})")
        for path in pages:
            new = statistics.median(times[("new", path)])
            line = f"{path:26s} {new:11.0f}"
            if args.base:
                old = statistics.median(times[("base", path)])
                ratios = [a / b for a, b in zip(times[("new", path)], times[("base", path)], strict=True)]
                low, high = interval(ratios)
                line += f" {old:12.0f} {statistics.median(ratios):19.2f} {low:6.2f} – {high:5.2f}  {verdict(low, high)}"
            print(line)
        urllib.request.urlcleanup()


if __name__ == "__main__":
    main()
