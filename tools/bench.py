"""`make bench`: the speed figures of docs/benchmarks.md, measured side by side in one run.

1. A depth-96 trace over HTTP vs a bare hand-written build + forward + backward in one process (ratio; target <= 1.1).
2. A cached identical request; six concurrent identical requests (how many computations).
3. The 1..96 depth sweep over HTTP vs the same 96 bare models built and run one after another (ratio; target <= 1.0).
Runs a real uvicorn server on 127.0.0.1 in its default configuration (compute processes, one per slot), with an
empty cache of its own and no warm-up; the bare side uses as many torch threads as one of the server's runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

import httpx

from tools.localserver import bench_server


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
            assert response.status_code == 200 and response.headers["x-resnorm-cache"] == "computed"
        started = time.perf_counter()
        client.post("/api/trace", json={"depth": 96, "seed": 0})
        cached = time.perf_counter() - started
    del torch
    return bare, http, cached


async def concurrent_identical(base: str, n: int) -> tuple[int, float]:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        started = time.perf_counter()
        responses = await asyncio.gather(
            *(client.post("/api/trace", json={"depth": 48, "seed": 777}) for _ in range(n))
        )
        elapsed = time.perf_counter() - started
    return sum(r.headers["x-resnorm-cache"] == "computed" for r in responses), elapsed


def time_sweep(base: str, seed: int) -> tuple[float, float, int]:
    started, first = time.perf_counter(), None
    rows = 0
    with (
        httpx.Client(base_url=base, timeout=600) as client,
        client.stream("POST", "/api/sweep", json={"config": {"seed": seed}}) as response,
    ):
        for line in response.iter_lines():
            if '"type":"depth"' in line.replace(" ", ""):
                rows += 1
                first = first or time.perf_counter() - started
    return first or 0.0, time.perf_counter() - started, rows


def time_bare_sweep(seed: int, depths: range = range(1, 97)) -> float:
    from tools.bench_baseline import bare_step

    started = time.perf_counter()
    for depth in depths:
        bare_step(depth=depth, seed=seed + depth)
    return time.perf_counter() - started


def sweep_ratio(base: str, repeats: int) -> tuple[list[float], list[float], float]:
    """Bare and HTTP sweeps interleaved, each HTTP sweep with a new seed (never from the cache)."""
    bare, http, first = [], [], 0.0
    for rep in range(repeats):
        bare.append(time_bare_sweep(seed=100 * rep))
        first, total, rows = time_sweep(base, seed=5_000 + rep)
        assert rows == 96, rows
        http.append(total)
    return bare, http, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=25)  # with 7 or 15, one run's median ratio swung by ±0.05
    parser.add_argument("--sweep-repeats", type=int, default=2)
    parser.add_argument("--skip-sweep", action="store_true")
    args = parser.parse_args()

    import torch

    with bench_server() as (base, threads):
        torch.set_num_threads(threads)
        bare, http, cached = time_trace_ratio(base, args.repeats)
        computed, concurrent_s = asyncio.run(concurrent_identical(base, 6))
        sweeps = None if args.skip_sweep else sweep_ratio(base, args.sweep_repeats)
    print(
        f"torch {torch.__version__}, {threads} thread(s) on the bare side, {os.cpu_count()} cores, "
        f"{args.repeats} interleaved repeats"
    )
    print("depth-96 transformer (d_model 64, 4 heads, seq 32, batch 4), build + forward + backward:")
    print(
        f"  bare hand-written, in process   median {1000 * statistics.median(bare):7.1f} ms   min {1000 * min(bare):7.1f} ms"
    )
    print(
        f"  POST /api/trace over HTTP       median {1000 * statistics.median(http):7.1f} ms   min {1000 * min(http):7.1f} ms"
    )
    print(f"  identical request from cache    {1000 * cached:7.1f} ms (target < 50 ms)")
    print(f"  6 concurrent identical requests {computed} computation(s), {1000 * concurrent_s:.0f} ms in all")
    if sweeps:
        bare_sweep, http_sweep, first = sweeps
        print(
            f"sweep depths 1..96: bare one after another median {statistics.median(bare_sweep):5.1f} s; "
            f"POST /api/sweep median {statistics.median(http_sweep):5.1f} s (first row {1000 * first:.0f} ms)"
        )
    print("ratios (lower is faster):")
    print(
        f"  trace / bare build+forward+backward   median {statistics.median(http) / statistics.median(bare):6.3f}"
        f"   min {min(http) / min(bare):6.3f}   (target <= 1.1)"
    )
    if sweeps:
        print(
            f"  sweep / bare models one after another median {statistics.median(http_sweep) / statistics.median(bare_sweep):6.3f}"
            f"   min {min(http_sweep) / min(bare_sweep):6.3f}   (target <= 1.0)"
        )


if __name__ == "__main__":
    main()
