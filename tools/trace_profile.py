"""Where a depth-96 trace's compute time goes, phase by phase, against the bare model of tools/bench_baseline.py.

One process, one torch thread, CPU time of this thread (other jobs on the machine inflate it less than wall time),
medians over interleaved repeats: build, init, forward, backward of the bare model, of the app's Stack without
probes, and of the Stack watched by the StreamRecorder; then each part of the trace's statistics.
`python -m tools.trace_profile --repeats 25`. The HTTP side (JSON, gzip, the compute process) is not in here:
`make bench` measures the whole request.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import torch
import torch.nn.functional as F

from app.config import TraceConfig
from app.experiments import trace
from app.models.init import initialise
from app.models.stack import Stack, make_batch
from app.models.tree import parameters_with_owner
from app.probes import recorder as probes
from tools.bench_baseline import BareTransformer, xavier_init

clock = time.thread_time
PHASES = ("build", "init", "forward", "backward")


def bare(seed: int) -> dict[str, float]:
    stamps = [clock()]
    model = BareTransformer(96, 64, 4, 128, 32)
    stamps.append(clock())
    xavier_init(model, torch.Generator().manual_seed(seed))
    stamps.append(clock())
    tokens = torch.randint(128, (4, 33), generator=torch.Generator().manual_seed(seed + 1))
    loss = F.cross_entropy(model(tokens[:, :-1]).reshape(-1, 128), tokens[:, 1:].reshape(-1))
    stamps.append(clock())
    loss.backward()
    loss.item()
    stamps.append(clock())
    return dict(zip(PHASES, (b - a for a, b in pairwise(stamps)), strict=True))


def stack(seed: int, watched: bool) -> dict[str, float]:
    cfg = TraceConfig(depth=96, seed=seed)
    stamps = [clock()]
    model = Stack(cfg)
    stamps.append(clock())
    initialise(model, cfg.init, cfg.depth, torch.Generator().manual_seed(cfg.seed))
    stamps.append(clock())
    inputs, targets = make_batch(cfg)
    recorder = probes.StreamRecorder(model).__enter__() if watched else None
    loss = model.loss(inputs, targets)
    stamps.append(clock())
    loss.backward()
    value = loss.item()
    if recorder is not None:
        recorder.__exit__()
    stamps.append(clock())
    parts = dict(zip(PHASES, (b - a for a, b in pairwise(stamps)), strict=True))
    return parts | (statistics_parts(cfg, model, recorder, value) if recorder is not None else {})


def statistics_parts(cfg: TraceConfig, model: Stack, recorder: probes.StreamRecorder, loss: float) -> dict[str, float]:
    """Each statistic the trace computes, timed alone; `python` is what _assemble spends beyond them."""
    names, units = recorder.names, [u for block in model.blocks for u in block.units.values()]
    steps: dict[str, Callable[[], Any]] = {
        "stream snapshots (193)": lambda: probes.stream_statistics([recorder.acts[n] for n in names]),
        "stream gradients (193)": lambda: probes.token_norm_means([recorder.grads.get(n) for n in names]),
        "branch outputs (192)": lambda: probes.branch_norms([recorder.branches[n] for n in names[1:]], 2),
        "parameter walk": lambda: parameters_with_owner(model, units),
    }
    parts = {}
    for name, step in steps.items():
        started = clock()
        found = step()
        parts[name] = clock() - started
    started = clock()
    parameters, owners = found  # what the parameter walk returned
    probes.grad_norms_by_owner(parameters, owners, len(units))
    parts["parameter-gradient norms"] = clock() - started
    started = clock()
    trace._assemble(cfg, model, recorder, loss)
    parts["python (dicts, summary)"] = clock() - started - sum(parts.values())
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = {"bare": lambda s: bare(s), "Stack": lambda s: stack(s, False), "traced": lambda s: stack(s, True)}
    for run in runs.values():
        run(10_000)  # warm-up
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
    loads = []
    for seed in range(args.repeats):
        for name, run in runs.items():
            rows[name].append(run(seed))
        loads.append(os.getloadavg()[0])
    print(
        f"{args.repeats} interleaved repeats, 1 torch thread, load average {min(loads):.1f}-{max(loads):.1f}; "
        f"CPU ms, medians"
    )
    print(f"{'phase':34s} {'bare':>7s} {'Stack':>7s} {'traced':>7s}")
    for phase in rows["traced"][0]:
        cells = [1000 * statistics.median(r[phase] for r in rows[n]) if phase in rows[n][0] else None for n in runs]
        print(f"{phase:34s} " + " ".join(f"{c:7.1f}" if c is not None else f"{'':7s}" for c in cells))
    totals = [1000 * statistics.median(sum(r.values()) for r in rows[n]) for n in runs]
    print(f"{'total':34s} " + " ".join(f"{t:7.1f}" for t in totals))


if __name__ == "__main__":
    main()
