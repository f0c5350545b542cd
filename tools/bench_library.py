"""`make bench`: `rx.trace(depth=96)` in a notebook's process against the server's compute time for the same model.

A real server (default configuration, an empty cache, no warm-up) and a fresh Python process that imports the
library as a notebook does, leaving torch's threads at their default (the library pins its own for each call and
gives them back). That process alternates: one `rx.trace(depth=96, seed=...)`, timed around the call, then one
`POST /api/trace` for another seed, whose `summary.elapsed_ms` is the compute process's own time for the trace.
Call 1 of each side is the warm-up (imports, first allocations); the ratio compares the medians of calls 2-6.
Target: rx / server <= 1.1. The machine's other load moves both sides alike, but not exactly: rerun when in doubt.
Also printed: the library's own time around each call's trace (the call's wall time less the trace's elapsed_ms,
measured in the same call), which the machine's load hardly moves.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from tools.localserver import bench_server

CALLER = """
import json, sys, time
import httpx, torch
import resnorm_explorer as rx

base, calls, depth, pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
default_threads = torch.get_num_threads()
rx_s, inner_s, server_s = [], [], []
with httpx.Client(base_url=base, timeout=600) as client:
    for call in range(calls):
        started = time.perf_counter()
        traced = rx.trace(depth=depth, seed=1000 + call)
        rx_s.append(time.perf_counter() - started)
        inner_s.append(traced.summary["elapsed_ms"] / 1000)
        time.sleep(pause)  # each side starts on a machine the other has left: freeing a model, writing the cache
        answer = client.post("/api/trace", json={"depth": depth, "seed": 2000 + call})
        assert answer.headers["x-resnorm-cache"] == "computed", answer.headers
        server_s.append(answer.json()["summary"]["elapsed_ms"] / 1000)
        time.sleep(pause)
assert torch.get_num_threads() == default_threads  # given back after every call
print(json.dumps({"rx": rx_s, "inner": inner_s, "server": server_s, "threads": default_threads}))
"""


def measure(base: str, calls: int, depth: int, pause: float) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CALLER, base, str(calls), str(depth), str(pause)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"the caller's process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=6, help="calls of each side; the first is left out [6]")
    parser.add_argument("--depth", type=int, default=96)
    parser.add_argument(
        "--pause",
        type=float,
        default=1.0,
        help="seconds between calls, so neither side's after-work lands on the other",
    )
    args = parser.parse_args()
    with bench_server() as (base, server_threads):
        times = measure(base, args.calls, args.depth, args.pause)
    rx_s, server_s = times["rx"][1:], times["server"][1:]
    ratio = statistics.median(rx_s) / statistics.median(server_s)
    # the library's own cost (validation, settings in and out, the result object): the call around its trace
    around = [outer - inner for outer, inner in zip(times["rx"][1:], times["inner"][1:], strict=True)]
    print(
        f"rx.trace(depth={args.depth}) in a fresh process (torch's default {times['threads']} thread(s), the library "
        f"pins its own) against POST /api/trace's compute time (server: {server_threads} thread(s) a run), "
        f"{os.cpu_count()} cores, calls 2-{args.calls} alternating:"
    )
    print(f"  rx.trace, around the call     median {1000 * statistics.median(rx_s):7.1f} ms   {_ms(rx_s)}")
    print(f"  server's compute process      median {1000 * statistics.median(server_s):7.1f} ms   {_ms(server_s)}")
    print(
        f"  first calls (warm-up, left out): rx {1000 * times['rx'][0]:.0f} ms, server {1000 * times['server'][0]:.0f} ms"
    )
    print(f"  ratio rx / server             median {ratio:6.3f}   (target <= 1.1)")
    print(
        f"  the library around its own trace (same call, load-independent): median {1000 * statistics.median(around):.1f} ms "
        f"= {statistics.median(o / i for o, i in zip(times['rx'][1:], times['inner'][1:], strict=True)):.3f}x the trace"
    )


def _ms(values: list[float]) -> str:
    return "[" + ", ".join(f"{1000 * v:.0f}" for v in values) + "] ms"


if __name__ == "__main__":
    main()
