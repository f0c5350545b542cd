"""`make bench`: the speed figures of the README, measured side by side in one run.

1. A depth-96 trace over HTTP vs a bare hand-written build + forward + backward in one process (ratio).
2. A cached identical request; six concurrent identical requests (how many computations).
3. The 1..96 depth sweep, streamed (first row and total).
Runs a real uvicorn server on 127.0.0.1 with the same torch thread count as the bare baseline.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import httpx

from tools.localserver import free_port, local_server, uvicorn_args


def time_trace_ratio(base: str, repeats: int) -> tuple[list[float], list[float], float]:
    import torch

    from tools.bench_baseline import bare_step

    bare, http = [], []
    with httpx.Client(base_url=base, timeout=120) as client:
        client.post("/api/trace", json={"depth": 96, "seed": 10_000})  # warm both sides up
        bare_step(seed=10_000)
        for rep in range(repeats):  # interleaved, so machine noise hits both alike
            started = time.perf_counter()
            bare_step(seed=rep)
            bare.append(time.perf_counter() - started)
            started = time.perf_counter()
            response = client.post("/api/trace", json={"depth": 96, "seed": rep})
            http.append(time.perf_counter() - started)
            assert response.status_code == 200 and not response.json()["summary"]["cached"]
        started = time.perf_counter()
        client.post("/api/trace", json={"depth": 96, "seed": 0})
        cached = time.perf_counter() - started
    del torch
    return bare, http, cached


async def concurrent_identical(base: str, n: int) -> tuple[int, float]:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        started = time.perf_counter()
        responses = await asyncio.gather(*(client.post("/api/trace", json={"depth": 48, "seed": 777}) for _ in range(n)))
        elapsed = time.perf_counter() - started
    return sum(not r.json()["summary"]["cached"] for r in responses), elapsed


def time_sweep(base: str) -> tuple[float, float, int]:
    started, first = time.perf_counter(), None
    rows = 0
    with httpx.Client(base_url=base, timeout=600) as client:
        with client.stream("POST", "/api/sweep", json={"config": {"seed": 4242}}) as response:
            for line in response.iter_lines():
                if '"type":"depth"' in line.replace(" ", ""):
                    rows += 1
                    first = first or time.perf_counter() - started
    return first or 0.0, time.perf_counter() - started, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2, help="torch threads for both sides (default 2)")
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    port = free_port()
    env = {**os.environ, "RESNORM_TORCH_THREADS": str(args.threads), "RESNORM_COMPUTE_SLOTS": "1"}
    with local_server(uvicorn_args(port), port, env=env) as base:
        bare, http, cached = time_trace_ratio(base, args.repeats)
        computed, concurrent_s = asyncio.run(concurrent_identical(base, 6))
        print(f"torch {torch.__version__}, {args.threads} thread(s), {os.cpu_count()} cores, {args.repeats} interleaved repeats")
        print("depth-96 transformer (d_model 64, 4 heads, seq 32, batch 4), build + forward + backward:")
        print(f"  bare hand-written, in process   median {1000 * statistics.median(bare):7.1f} ms   min {1000 * min(bare):7.1f} ms")
        print(f"  POST /api/trace over HTTP       median {1000 * statistics.median(http):7.1f} ms   min {1000 * min(http):7.1f} ms")
        print(f"  ratio trace / bare              median {statistics.median(http) / statistics.median(bare):7.3f}      "
              f"min {min(http) / min(bare):7.3f}   (target <= 1.3, aim 1.1)")
        print(f"  identical request from cache    {1000 * cached:7.1f} ms (target < 50 ms)")
        print(f"  6 concurrent identical requests {computed} computation(s), {1000 * concurrent_s:.0f} ms in all")
        if not args.skip_sweep:
            first, total, rows = time_sweep(base)
            print(f"sweep depths 1..96 (streamed NDJSON): first row {1000 * first:.0f} ms, {rows} rows in {total:.1f} s")


if __name__ == "__main__":
    main()
