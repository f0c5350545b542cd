"""A room of phones following the lecturer: N server-sent-event streams held open, the presenter's slide changes sent
one after another, and for each change the time from the presenter's request (what the deck sends on a key press)
to the moment the last follower read it.

    python -m tests.load.follow_load --followers 200 --changes 20 [--workers 2] [--base http://127.0.0.1:8000]

Without --base a server is started on a free loopback port (RESNORM_WARM=0, its own cache folder) and stopped at
the end. The CI smoke test (tests/test_follow_live.py) runs the same code with 20 followers.

Each phone is a plain HTTP/1.1 connection read chunk by chunk (the answer is chunked, one event a chunk): an httpx
stream cost about 0.2 ms of this process's CPU per event, 40 ms for 200 phones, which the measured time included.
This process's own CPU during the changes is reported beside the times.
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
from urllib.parse import urlsplit

import httpx

CONNECT_TIMEOUT_S = 30.0
CHANGE_TIMEOUT_S = 10.0
START_TIMEOUT_S = 180.0  # two workers importing torch on a busy machine


@dataclass
class Follower:
    seen: dict[int, float] = field(default_factory=dict)  # seq -> when this follower read it (perf_counter)
    slides: dict[int, int] = field(default_factory=dict)  # seq -> slide
    wake: asyncio.Event = field(default_factory=asyncio.Event)


async def _follow(url: str, follower: Follower) -> None:
    """One phone's event stream: GET, the status and headers, then each chunk's events as they arrive."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        request = f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n"
        writer.write(request.encode())
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"{url}: {status.decode().strip()}")
        while (await reader.readuntil(b"\r\n")) != b"\r\n":
            pass  # headers: text/event-stream, chunked
        buffer = b""
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            buffer += (await reader.readexactly(size + 2))[:-2]
            *events, buffer = buffer.split(b"\n\n")
            for event in events:
                _heard(event, follower)
    finally:
        writer.close()


def _heard(event: bytes, follower: Follower) -> None:
    """One server-sent event: a `slide` event's data is recorded with the time it was read."""
    lines = event.decode().split("\n")
    if "event: slide" in lines:
        data = json.loads(next(line[6:] for line in lines if line.startswith("data: ")))
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
    generator_cpu_s: float = 0.0  # this process's CPU during the changes

    def summary(self) -> dict:
        return {
            "followers": self.followers,
            "changes": len(self.latencies_s),
            "last_follower_max_s": round(max(self.latencies_s), 3),
            "last_follower_median_s": round(sorted(self.latencies_s)[len(self.latencies_s) // 2], 3),
            "first_follower_max_s": round(max(self.first_s), 3),
            "every_follower_on_the_right_slide": self.slides_right,
            "load_generator_cpu_ms_per_change": round(1000 * self.generator_cpu_s / len(self.latencies_s), 1),
        }


async def run_followers(bases: list[str], followers: int, changes: int, total_slides: int = 20) -> FollowResult:
    """Open a session on bases[0], `followers` streams spread over `bases`, then `changes` slide changes."""
    async with httpx.AsyncClient(timeout=30) as presenter:
        opened = (await presenter.post(f"{bases[0]}/api/follow", json={"slide": 0})).raise_for_status().json()
        room, key = opened["room"], opened["key"]
        crowd = [Follower() for _ in range(followers)]
        streams = [
            asyncio.create_task(_follow(f"{bases[i % len(bases)]}/api/follow/{room}/events", f))
            for i, f in enumerate(crowd)
        ]
        try:
            await _until(crowd, opened["seq"], CONNECT_TIMEOUT_S)
            latencies, first, right = [], [], True
            cpu_before = _cpu_s()
            for i in range(changes):
                slide = 1 + i % (total_slides - 1)
                pressed = time.perf_counter()
                moved = (await presenter.put(f"{bases[0]}/api/follow/{room}", json={"key": key, "slide": slide})).json()
                await _until(crowd, moved["seq"], CHANGE_TIMEOUT_S)
                latencies.append(max(f.seen[moved["seq"]] for f in crowd) - pressed)
                first.append(min(f.seen[moved["seq"]] for f in crowd) - pressed)
                right = right and all(f.slides[moved["seq"]] == slide for f in crowd)
            cpu = _cpu_s() - cpu_before
        finally:
            for task in streams:
                task.cancel()
            failed = [r for r in await asyncio.gather(*streams, return_exceptions=True) if not _cancelled(r)]
    if failed:
        raise RuntimeError(f"{len(failed)} follower streams failed, the first with {failed[0]!r}")
    return FollowResult(followers, latencies, first, right, cpu)


def _cancelled(result: object) -> bool:
    return result is None or isinstance(result, asyncio.CancelledError)


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
        # no model runs here: no compute processes to start (each imports torch)
        env = {**os.environ, "RESNORM_CACHE_DIR": cache, "RESNORM_WARM": "0", "RESNORM_COMPUTE_PROCESSES": "0"}
        serve = ["-m", "app", "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers)]
        with local_server(serve, port, env=env, timeout_s=START_TIMEOUT_S) as base:
            return _report(asyncio.run(run_followers([base], args.followers, args.changes)), args.target_s)


def _report(result: FollowResult, target_s: float) -> int:
    summary = {**result.summary(), "load_generator_cpu_s": round(_cpu_s(), 2), "load_average_1min": os.getloadavg()[0]}
    print(json.dumps(summary))
    return 0 if result.slides_right and summary["last_follower_max_s"] < target_s else 1


if __name__ == "__main__":
    sys.exit(main())
