"""A room of phones following the lecturer: N server-sent-event streams held open, the presenter's slide changes sent
one after another, and for each change the time from the presenter's request (what the deck sends on a key press)
to the moment the last follower read it.

    python -m tests.load.follow_load --followers 200 --changes 20 [--workers 2] [--base http://127.0.0.1:8000]

Without --base a server is started on a free loopback port (RESNORM_WARM=0, its own cache folder) and stopped at
the end. The CI smoke test (tests/test_follow_live.py) runs the same code with 20 followers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass, field

import httpx

CONNECT_TIMEOUT_S = 30.0
CHANGE_TIMEOUT_S = 10.0


@dataclass
class Follower:
    seen: dict[int, float] = field(default_factory=dict)  # seq -> when this follower read it (perf_counter)
    slides: dict[int, int] = field(default_factory=dict)  # seq -> slide
    wake: asyncio.Event = field(default_factory=asyncio.Event)


async def _follow(client: httpx.AsyncClient, url: str, follower: Follower) -> None:
    async with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
        response.raise_for_status()
        event = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "slide":
                data = json.loads(line[6:])
                follower.seen[data["seq"]] = time.perf_counter()
                follower.slides[data["seq"]] = data["slide"]
                follower.wake.set()


async def _until(followers: list[Follower], seq: int, timeout_s: float) -> None:
    deadline = time.perf_counter() + timeout_s
    for follower in followers:
        while seq not in follower.seen:
            follower.wake.clear()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                missing = sum(seq not in f.seen for f in followers)
                raise TimeoutError(f"{missing} of {len(followers)} followers never saw change {seq}")
            await asyncio.wait_for(follower.wake.wait(), remaining)


@dataclass
class FollowResult:
    followers: int
    latencies_s: list[float]  # per change: the presenter's request to the last follower
    first_s: list[float]  # per change: to the first follower
    slides_right: bool

    def summary(self) -> dict:
        return {
            "followers": self.followers,
            "changes": len(self.latencies_s),
            "last_follower_max_s": round(max(self.latencies_s), 3),
            "last_follower_median_s": round(sorted(self.latencies_s)[len(self.latencies_s) // 2], 3),
            "first_follower_max_s": round(max(self.first_s), 3),
            "every_follower_on_the_right_slide": self.slides_right,
        }


async def run_followers(bases: list[str], followers: int, changes: int, total_slides: int = 20) -> FollowResult:
    """Open a session on bases[0], `followers` streams spread over `bases`, then `changes` slide changes."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx.Timeout(CONNECT_TIMEOUT_S, read=None)
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client, httpx.AsyncClient(timeout=30) as presenter:
        opened = (await presenter.post(f"{bases[0]}/api/follow", json={"slide": 0})).raise_for_status().json()
        room, key = opened["room"], opened["key"]
        crowd = [Follower() for _ in range(followers)]
        streams = [
            asyncio.create_task(_follow(client, f"{bases[i % len(bases)]}/api/follow/{room}/events", f))
            for i, f in enumerate(crowd)
        ]
        try:
            await _until(crowd, opened["seq"], CONNECT_TIMEOUT_S)
            latencies, first, right = [], [], True
            for i in range(changes):
                slide = 1 + i % (total_slides - 1)
                pressed = time.perf_counter()
                moved = (await presenter.put(f"{bases[0]}/api/follow/{room}", json={"key": key, "slide": slide})).json()
                await _until(crowd, moved["seq"], CHANGE_TIMEOUT_S)
                latencies.append(max(f.seen[moved["seq"]] for f in crowd) - pressed)
                first.append(min(f.seen[moved["seq"]] for f in crowd) - pressed)
                right = right and all(f.slides[moved["seq"]] == slide for f in crowd)
        finally:
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
    return FollowResult(followers, latencies, first, right)


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--followers", type=int, default=200)
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers of the server started here")
    parser.add_argument("--base", action="append", help="a running server (repeat for several); default: start one")
    parser.add_argument("--target-s", type=float, default=1.0, help="exit 1 when the slowest change takes longer")
    args = parser.parse_args(argv)
    if args.base:
        return _report(asyncio.run(run_followers(args.base, args.followers, args.changes)), args.target_s)
    from tools.localserver import free_port, local_server

    port = free_port()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "RESNORM_CACHE_DIR": cache, "RESNORM_WARM": "0", "RESNORM_WORKERS": str(args.workers)}
        serve = ["-m", "app", "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers)]
        with local_server(serve, port, env=env) as base:
            return _report(asyncio.run(run_followers([base], args.followers, args.changes)), args.target_s)


def _report(result: FollowResult, target_s: float) -> int:
    summary = {**result.summary(), "load_generator_cpu_s": round(_cpu_s(), 2)}
    print(json.dumps(summary))
    return 0 if result.slides_right and summary["last_follower_max_s"] < target_s else 1


if __name__ == "__main__":
    sys.exit(main())
