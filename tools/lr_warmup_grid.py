"""Record Post-LN against Pre-LN over learning rate × warm-up (app/experiments/lr_warmup.py) into checked-in data.

    python -m tools.lr_warmup_grid [--jobs 2] [--out app/experiments/lecture/data/lr_warmup.json]

Sixteen cells of two 300-step runs each (the deck's training slide's model and task), one torch thread per job as a
server's training run has; prints a line per cell as it finishes. About 5 minutes with two jobs on two idle cores.
The file keeps the command, torch and Python versions, the seeds, the date and each cell's time; tests/test_lr_warmup.py
trains one cell again and compares it with the recording.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

from app.experiments.lr_warmup import KINDS, LRS, RECORDING, WARMUPS, cell_request, run_cell
from tools.recording import provenance


def _cell(args: tuple[float, int]) -> dict:
    import torch

    torch.set_num_threads(1)  # as a server's training run (settings.threads_per_run on two cores)
    started = time.perf_counter()
    cell = run_cell(*args)
    return {**cell, "elapsed_s": round(time.perf_counter() - started, 1)}


def record(jobs: int, out: Path, argv: list[str]) -> dict:
    grid = [(lr, w) for w in WARMUPS for lr in LRS]
    started = time.perf_counter()
    cells = []
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for k, cell in enumerate(pool.imap_unordered(_cell, grid), start=1):
            cells.append(cell)
            losses = ", ".join(f"{r['kind']} {r['final_loss']:.3g}" for r in cell["runs"])
            print(f"cell {k}/{len(grid)}: lr {cell['lr']:g}, warm-up {cell['warmup_steps']}: {losses} "
                  f"({cell['elapsed_s']} s)", flush=True)  # fmt: skip
    cells.sort(key=lambda c: (c["warmup_steps"], c["lr"]))
    settings = cell_request(LRS[0], WARMUPS[0]).model_dump(exclude={"lr", "warmup_steps"})
    recording = {
        **provenance("tools.lr_warmup_grid", argv),
        "seeds": {"weights": [run["seed"] for run in settings["runs"]], "data": settings["seed"]},
        "kinds": list(KINDS),
        "lrs": list(LRS),
        "warmups": list(WARMUPS),
        "settings": settings,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "cells": cells,
    }
    out.write_text(json.dumps(recording, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(cells)} cells, {recording['elapsed_s']} s)")
    return recording


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="cells trained at once (one torch thread each)")
    parser.add_argument("--out", type=Path, default=RECORDING, help="where the recording is written")
    args = parser.parse_args(argv)
    record(max(1, args.jobs), args.out, argv)


if __name__ == "__main__":
    main()
