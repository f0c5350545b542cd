"""`make loadtest`: a workshop room against servers on this machine's loopback.

Starts `python -m app` on 127.0.0.1 (or --servers N of them sharing one redis-server, students spread over them
as a load balancer would), then N simulated students (httpx, asyncio) for a fixed time. Each student loads a page
and its default chart (schema, presets, the default trace), changes settings (random depth and norm placement) a
few times, runs a small depth sweep, and starts over. When the server has the real models (GET /api/real_models),
some of those changes are /models sentences instead (--models-share): a sentence of the room's list (soon cached) or
one of the student's own (computed). A page load also fetches the page's own scripts and stylesheets. A monitor polls /api/health throughout: it must stay green
while the compute queue is full. Every trace answer says where it came from (X-Resnorm-Cache): the report gives
the cache hit rate.

Rules (exit 1 if broken): no answer other than 2xx, 429 or 503-with-Retry-After; no 5xx besides that 503;
no timeouts or dropped connections; health always 200; p95 of changed traces under --p95-limit-ms, and of pages
and health under --page-p95-limit-ms and --health-p95-limit-ms when given (`make loadtest ROOM=1`: 200 students,
pages and health under 0.5 s, changed traces without a limit, as 2 cores cannot compute 200 students' changes). Bounded:
--duration seconds (then in-flight requests get at most --timeout more) and at most --max-requests requests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from ipaddress import ip_address
from urllib.parse import urlparse

import httpx

from tools.localserver import free_port, local_server, wait_for_port

POSITIONS = ("pre", "post", "sandwich", "mix")
SWEEP_DEPTHS = [1, 2, 4, 8, 16, 32, 48]  # a small sweep: ~1 s of compute uncached
# Sentences a room types into /models: the lecturer's examples (cached after the first) and the students' own.
SENTENCES = (
    "The residual stream carries every layer's output.",
    "Normalization keeps the activations at a steady scale.",
    "Deep networks train when gradients can flow back.",
    "残差连接让梯度畅通无阻。",
    "层归一化让每个词元的范数保持稳定。",
)
WORDS = ("deep", "norm", "layer", "token", "signal", "gradient", "stream", "block", "scale", "model", "残差", "梯度")
# The page's own scripts and stylesheets (Plotly.js is cached by a browser after the first visit: left out).
ASSET = re.compile(r'(?:src|href)="(/static/[^"]+\.(?:js|css))"')
# Every student is a client of its own (its own connections, as a browser has), all sharing one TLS context: httpx
# builds one per client otherwise, ~30 ms of this process's CPU each, which delayed the whole room's first wave of
# requests by seconds and was counted as the server's latency. The load test speaks plain HTTP to the loopback.
TLS = ssl.create_default_context()


@dataclass
class Tally:
    """Every answer, by request kind."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    problems: list[str] = field(default_factory=list)
    sent: int = 0
    warm: str = ""
    sources: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # X-Resnorm-Cache of every trace
    started: float = field(default_factory=time.monotonic)  # reset when the students start
    timeline: list[tuple[float, str, float]] = field(default_factory=list)  # (s after the start, kind, ms) each

    def record(self, kind: str, outcome: str, seconds: float, problem: str = "") -> None:
        self.latencies[kind].append(seconds * 1000)
        self.timeline.append((round(time.monotonic() - self.started - seconds, 3), kind, round(seconds * 1000, 1)))
        self.statuses[kind][outcome] += 1
        if problem and len(self.problems) < 20:
            self.problems.append(f"{kind}: {problem}")


class Room:
    def __init__(self, base_urls: list[str], args: argparse.Namespace) -> None:
        self.base_urls, self.args = base_urls, args
        self.base_url = base_urls[0]
        self.deadline = time.monotonic() + args.duration
        self.tally = Tally()
        self.page_path: str | None = None
        self.assets: list[str] = []
        self.models: list[str] = []  # real models the server can trace (none: no /models sentences)

    def open(self) -> bool:
        return time.monotonic() < self.deadline and self.tally.sent < self.args.max_requests

    async def request(
        self, client: httpx.AsyncClient, kind: str, method: str, path: str, **kw
    ) -> httpx.Response | None:
        """One request, classified. Returns the response when it was a 2xx, else None (after any Retry-After)."""
        self.tally.sent += 1
        started = time.perf_counter()
        try:
            response = await client.request(method, path, **kw)
            if kind == "sweep" and response.status_code == 200:
                busy = self.sweep_busy(response)
                if busy is not None:  # the stream said "busy" itself: the same back-pressure as a 503
                    self.tally.record(kind, "503", time.perf_counter() - started)
                    await asyncio.sleep(min(busy, 5.0))
                    return None
        except (httpx.HTTPError, ValueError) as exc:
            self.tally.record(kind, "error", time.perf_counter() - started, f"{type(exc).__name__}: {exc}")
            return None
        elapsed, status = time.perf_counter() - started, response.status_code
        if 200 <= status < 300:
            self.tally.record(kind, "ok", elapsed)
            if kind.startswith("trace"):
                self.tally.sources[response.headers.get("x-resnorm-cache", "unknown")] += 1
            return response
        if status in (429, 503) and response.headers.get("retry-after", "").isdigit():
            self.tally.record(kind, str(status), elapsed)
            await asyncio.sleep(min(float(response.headers["retry-after"]), 5.0))
            return None
        self.tally.record(kind, "error", elapsed, f"{method} {path} -> {status} {response.text[:200]}")
        return None

    @staticmethod
    def sweep_busy(response: httpx.Response) -> float | None:
        """Seconds to wait if the NDJSON stream ended with a busy line; ValueError if it ended any other way."""
        lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        last = lines[-1] if lines else {}
        if last.get("type") == "error" and last.get("status") in (429, 503) and "retry_after" in last:
            return float(last["retry_after"])
        if last.get("type") != "done":
            raise ValueError(f"sweep stream ended without 'done' after {len(lines)} lines: {str(last)[:200]}")
        return None

    async def student(self, seed: int, base_url: str) -> None:
        rng = random.Random(seed)
        await asyncio.sleep(rng.uniform(0, 3))  # a room does not press Enter in the same millisecond
        async with httpx.AsyncClient(base_url=base_url, timeout=self.args.timeout, verify=TLS) as client:
            while self.open():
                await self.load_page(client)
                for _ in range(rng.randint(2, 4)):
                    if not self.open():
                        return
                    await asyncio.sleep(rng.uniform(*self.args.think))
                    if self.models and rng.random() < self.args.models_share:
                        await self.request(client, "models", "POST", "/api/real_trace", json=self.sentence(rng))
                        continue
                    body = {"depth": rng.randint(1, self.args.max_depth), "norm_position": rng.choice(POSITIONS)}
                    await self.request(client, "trace_changed", "POST", "/api/trace", json=body)
                if self.open():
                    await asyncio.sleep(rng.uniform(*self.args.think))
                    sweep = {"config": {"norm_position": rng.choice(POSITIONS)}, "depths": SWEEP_DEPTHS}
                    await self.request(client, "sweep", "POST", "/api/sweep", json=sweep)

    def sentence(self, rng: random.Random) -> dict:
        own = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))
        return {"model": rng.choice(self.models), "text": rng.choice(SENTENCES) if rng.random() < 0.5 else own}

    async def load_page(self, client: httpx.AsyncClient) -> None:
        """What a browser opening a page asks for: the HTML, its scripts, the model's schema and presets, the default
        chart."""
        if self.page_path:
            await self.request(client, "page", "GET", self.page_path)
        for asset in self.assets:
            await self.request(client, "static", "GET", asset)
        await self.request(client, "schema", "GET", "/api/schema")
        await self.request(client, "presets", "GET", "/api/presets")
        await self.request(client, "trace_default", "POST", "/api/trace", json={})

    async def monitor_health(self, base_url: str) -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=self.args.timeout) as client:
            while time.monotonic() < self.deadline:
                started = time.perf_counter()
                try:
                    response = await client.get("/api/health")
                    ok = response.status_code == 200
                    self.tally.record(
                        "health",
                        "ok" if ok else "error",
                        time.perf_counter() - started,
                        "" if ok else f"health answered {response.status_code}",
                    )
                except httpx.HTTPError as exc:
                    self.tally.record("health", "error", time.perf_counter() - started, f"health: {exc!r}")
                await asyncio.sleep(1.0)

    async def find_page(self) -> None:
        async with httpx.AsyncClient(base_url=self.base_url, timeout=30) as client:
            response = await client.get(self.args.page)
            if response.status_code == 200 and "text/html" in response.headers.get("content-type", ""):
                self.page_path = self.args.page
                self.assets = sorted({a for a in ASSET.findall(response.text) if "vendor" not in a})
            else:
                print(
                    f"note: GET {self.args.page} answered {response.status_code}; pages are left out", file=sys.stderr
                )

    async def find_models(self) -> None:
        if self.args.models_share <= 0:
            return
        async with httpx.AsyncClient(base_url=self.base_url, timeout=30) as client:
            answer = (await client.get("/api/real_models")).json()
        self.models = [m["name"] for m in answer.get("models", [])] if answer.get("ready") else []
        if not self.models:
            print("note: no real models on the server; the mix has no /models sentences", file=sys.stderr)

    async def wait_for_warm_up(self) -> str:
        """A room's server has been up for a while (or ships a warm cache): start once every server has computed
        the pages' default views, as a lecturer's would have before class. --cold skips this."""
        if self.args.cold:
            return "cold start (students start at once)"
        started = time.monotonic()
        async with httpx.AsyncClient(timeout=30) as client:
            for url in self.base_urls:
                while True:
                    try:
                        warm = (await client.get(f"{url}/api/health")).json().get("warm", {})
                    except httpx.HTTPError:  # a dropped connection on a machine this busy: ask again
                        warm = {"enabled": True}
                    if not warm.get("enabled") or warm.get("done", 0) >= warm.get("total", 0) > 0:
                        break
                    if time.monotonic() - started > self.args.warm_timeout:
                        return f"warm-up unfinished after {self.args.warm_timeout:.0f} s: {warm}"
                    await asyncio.sleep(0.5)
        return f"default views warm ({time.monotonic() - started:.0f} s after start)"

    async def run(self) -> Tally:
        self.tally.warm = await self.wait_for_warm_up()
        await self.find_page()
        await self.find_models()
        self.deadline = time.monotonic() + self.args.duration
        self.tally.started = time.monotonic()
        urls = self.base_urls
        tasks = [self.student(self.args.seed * 1000 + i, urls[i % len(urls)]) for i in range(self.args.students)]
        await asyncio.gather(*(self.monitor_health(url) for url in urls), *tasks)
        return self.tally


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


PAGE_LOAD = ("page", "static", "schema", "presets", "trace_default")


def windows(tally: Tally, kinds: tuple[str, ...], width: float = 15.0) -> list[tuple[float, float]]:
    """(window start, p95 of `kinds` sent in it): the first wave of a room opening the page apart from the rest."""
    by_window: dict[int, list[float]] = defaultdict(list)
    for sent, kind, ms in tally.timeline:
        if kind in kinds:
            by_window[int(max(0.0, sent) // width)].append(ms)
    return [(i * width, percentile(v, 95)) for i, v in sorted(by_window.items())]


def report(tally: Tally, wall_s: float, args: argparse.Namespace) -> tuple[str, int]:
    where = f"{args.servers} servers sharing one Redis" if args.servers > 1 else "one server"
    lines = [
        f"{args.students} students, {args.duration:.0f} s, {where} ({args.workers} worker(s) each) on 127.0.0.1; "
        f"wall {wall_s:.1f} s; {tally.warm}",
        f"{'kind':<14}{'n':>6}{'ok':>6}{'429':>5}{'503':>5}{'err':>5}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}",
    ]
    errors = served = 0
    for kind in sorted(tally.latencies):
        lat, st = tally.latencies[kind], tally.statuses[kind]
        errors += st["error"]
        served += st["ok"] + st["429"] + st["503"]
        lines.append(
            f"{kind:<14}{len(lat):>6}{st['ok']:>6}{st['429']:>5}{st['503']:>5}{st['error']:>5}"
            f"{percentile(lat, 50):>9.0f}{percentile(lat, 95):>9.0f}{max(lat):>9.0f}"
        )
    traces = sum(tally.sources.values())
    hits = traces - tally.sources.get("computed", 0)
    by_source = ", ".join(f"{k} {v}" for k, v in sorted(tally.sources.items(), key=lambda kv: -kv[1]))
    lines.append(f"requests served: {served} ({served / wall_s:.1f}/s), errors: {errors}")
    lines.append(f"cache hit rate of traces: {hits}/{traces} = {100 * hits / max(1, traces):.1f}% ({by_source})")
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = cpu.ru_utime + cpu.ru_stime
    lines.append(f"load generator: {cpu_s:.1f} s of CPU ({100 * cpu_s / wall_s:.0f}% of one core), nice {os.nice(0)}")
    lines.append(
        "p95 ms of a page load's requests (page, static, schema, presets, default trace) by 15 s window: "
        + ", ".join(f"{start:.0f}-{start + 15:.0f} s {p95:.0f}" for start, p95 in windows(tally, PAGE_LOAD))
    )
    page_p95 = percentile(tally.latencies.get("page", []), 95)
    if args.page_p95_limit_ms and page_p95 > args.page_p95_limit_ms:
        errors += 1
        lines.append(f"  problem: p95 of pages {page_p95:.0f} ms > {args.page_p95_limit_ms:.0f} ms")
    health_p95 = percentile(tally.latencies.get("health", []), 95)
    if args.health_p95_limit_ms and health_p95 > args.health_p95_limit_ms:
        errors += 1
        lines.append(f"  problem: p95 of health {health_p95:.0f} ms > {args.health_p95_limit_ms:.0f} ms")
    p95 = percentile(tally.latencies.get("trace_changed", []), 95)
    if args.p95_limit_ms and p95 > args.p95_limit_ms:
        errors += 1
        lines.append(f"  problem: p95 of changed traces {p95:.0f} ms > {args.p95_limit_ms:.0f} ms")
    lines += [f"  problem: {p}" for p in tally.problems]
    return "\n".join(lines), errors


def server_command(port: int, args: argparse.Namespace) -> list[str]:
    return [
        "-m",
        "app",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
        "--log-level",
        "warning",
    ]


@contextmanager
def redis_server() -> Iterator[str]:
    """A redis-server of our own on a free loopback port, no persistence, stopped by its PID."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        if not wait_for_port(process, port, 20):
            raise RuntimeError("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def servers_for(args: argparse.Namespace) -> Iterator[list[str]]:
    """The servers under test: the one at --url, or ours (each with an empty disk cache of its own), no RESNORM_*
    from outside; with --servers > 1 they share a redis-server of our own."""
    if args.url:
        yield [args.url]
        return
    with ExitStack() as stack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESNORM_")}
        if args.compute_nice is not None:
            env["RESNORM_COMPUTE_NICE"] = str(args.compute_nice)
        if args.servers > 1:
            env["RESNORM_REDIS_URL"] = stack.enter_context(redis_server())
        urls = []
        for index in range(args.servers):
            port = free_port()
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"resnorm-load-{index}-"))
            urls.append(
                stack.enter_context(
                    local_server(
                        server_command(port, args), port, timeout_s=120, env={**env, "RESNORM_CACHE_DIR": folder}
                    )
                )
            )
        yield urls


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.load.loadtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers of each server it starts")
    parser.add_argument("--servers", type=int, default=1, help="servers to start, sharing one redis-server if > 1")
    parser.add_argument("--cold", action="store_true", help="start the students at once, before the warm-up")
    parser.add_argument("--warm-timeout", type=float, default=180.0, help="longest wait for the warm-up (s)")
    parser.add_argument(
        "--p95-limit-ms", type=float, default=2000.0, help="largest p95 of changed traces (0 = no limit)"
    )
    parser.add_argument("--url", help="use a running server on this machine's loopback instead of starting one")
    parser.add_argument("--page", default="/", help="the page students open (default /)")
    parser.add_argument("--max-requests", type=int, default=20000, help="stop sending after this many")
    parser.add_argument("--timeout", type=float, default=60.0, help="per-request timeout; a timeout is an error")
    parser.add_argument("--max-depth", type=int, default=96, help="students pick depths 1..this (default 96)")
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(1.0, 4.0),
        metavar=("MIN", "MAX"),
        help="seconds a student pauses between actions",
    )
    parser.add_argument("--models-share", type=float, default=0.2, help="share of changes that are /models sentences")
    parser.add_argument("--page-p95-limit-ms", type=float, default=0.0, help="largest p95 of pages (0 = no limit)")
    parser.add_argument("--health-p95-limit-ms", type=float, default=0.0, help="largest p95 of health (0 = none)")
    parser.add_argument("--compute-nice", type=int, help="RESNORM_COMPUTE_NICE of the servers started here")
    parser.add_argument("--nice", type=int, default=0, help="run this load generator this much nicer than the servers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.url and not ip_address(socket.gethostbyname(urlparse(args.url).hostname or "")).is_loopback:
        parser.error("--url must point at this machine's loopback (127.0.0.0/8)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with servers_for(args) as urls:
        if args.nice:
            os.nice(args.nice)  # after the servers started, so they keep their own priority
        started = time.monotonic()
        tally = asyncio.run(Room(urls, args).run())
        wall = time.monotonic() - started
    text, errors = report(tally, wall, args)
    print(text)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(
                {
                    "args": vars(args),
                    "wall_s": wall,
                    "statuses": tally.statuses,
                    "problems": tally.problems,
                    "trace_sources": tally.sources,
                    "timeline": tally.timeline,
                    "p50_ms": {k: percentile(v, 50) for k, v in tally.latencies.items()},
                    "p95_ms": {k: percentile(v, 95) for k, v in tally.latencies.items()},
                },
                out,
                indent=2,
            )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
