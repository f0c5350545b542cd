"""Compare two checkouts' depth-96 traces against the same bare model, interleaved in one run.

`python -m tools.bench_ab OTHER_CHECKOUT [THIS_CHECKOUT] --rounds 40` starts one server from each checkout (default
configuration, empty caches of their own, no warm-up) and, each round, times one bare build + forward + backward in
this process and one trace from each server (their order alternating). On a shared machine the noise moves separate
`make bench` runs by more than most changes do; side by side, it hits both versions alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from tools.localserver import free_port, local_server, uvicorn_args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="a checkout of the repository (e.g. a git worktree of another commit)")
    parser.add_argument("b", type=Path, nargs="?", default=Path.cwd(), help="another one (default: this folder)")
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()

    import torch

    from tools.bench_baseline import bare_step

    torch.set_num_threads(1)  # as each of the servers' compute processes
    times: dict[str, list[float]] = {"bare": [], "A": [], "B": []}
    # the servers stop (ExitStack) before their cache folders go
    with tempfile.TemporaryDirectory(prefix="resnorm-ab-") as caches, ExitStack() as stack:
        clients = {}
        for name, checkout in (("A", args.a), ("B", args.b)):
            port = free_port()
            env = {**os.environ, "RESNORM_WARM": "0", "RESNORM_CACHE_DIR": os.path.join(caches, name)}
            base = stack.enter_context(local_server(uvicorn_args(port), port, env=env, cwd=str(checkout.resolve())))
            clients[name] = stack.enter_context(httpx.Client(base_url=base, timeout=120))
            clients[name].post("/api/trace", json={"depth": 96, "seed": 10_000})  # warm up
        bare_step(seed=10_000)
        for round_ in range(args.rounds):
            started = time.perf_counter()
            bare_step(seed=round_)
            times["bare"].append(time.perf_counter() - started)
            for name in ("A", "B") if round_ % 2 == 0 else ("B", "A"):
                started = time.perf_counter()
                response = clients[name].post("/api/trace", json={"depth": 96, "seed": round_})
                times[name].append(time.perf_counter() - started)
                assert response.status_code == 200 and response.headers["x-resnorm-cache"] == "computed"
    bare = statistics.median(times["bare"])
    print(f"{args.rounds} rounds; A = {args.a}, B = {args.b}")
    for name, values in times.items():
        print(
            f"  {name:4s} median {1000 * statistics.median(values):6.1f} ms   min {1000 * min(values):6.1f} ms   "
            f"/ bare: median {statistics.median(values) / bare:.3f}   min/min {min(values) / min(times['bare']):.3f}"
        )


if __name__ == "__main__":
    main()
