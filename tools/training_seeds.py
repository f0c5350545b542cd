"""Record the deck's training slides on seeds 1-3 (app/experiments/lecture/seeds.py) into checked-in data.

    python -m tools.training_seeds [--jobs 2]

Each training slide's requests, with the weights and the data drawn from seed 1, 2 and 3, trained with the project's
own training code, one torch thread a run; a line per request as it finishes. The file keeps the command, versions,
date and what each slide's claim reads (the final losses and accuracies, not the curves); tests/test_lecture_seeds.py checks
every claim on it. About 3 minutes with two jobs on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time

from app.experiments.lecture import DECK
from app.experiments.lecture.seeds import RECORDING, SEEDS, seeded, trimmed
from tools.recording import provenance


def _train(job: tuple[str, int, int, dict]) -> tuple[str, int, int, dict, float]:
    import torch

    from app.experiments.lecture.demos import recording_from_events
    from app.experiments.train import TrainRequest, train_events

    torch.set_num_threads(1)  # as a server's training run (settings.threads_per_run on two cores)
    slide_id, seed, index, body = job
    started = time.perf_counter()
    events = list(train_events(TrainRequest(**body)))
    return slide_id, seed, index, trimmed(recording_from_events(events)), time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="requests trained at once (one torch thread each)")
    args = parser.parse_args(argv)
    training = [s for s in DECK if s["chart"] and any(src["api"] == "train" for src in s["chart"]["sources"])]
    jobs = [
        (s["id"], seed, i, seeded(src["body"], seed))
        for s in training
        for seed in SEEDS
        for i, src in enumerate(s["chart"]["sources"])
    ]
    answers: dict[str, dict[str, list]] = {s["id"]: {str(seed): [None] * len(s["chart"]["sources"]) for seed in SEEDS}
                                           for s in training}  # fmt: skip
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(max(1, args.jobs)) as pool:
        for k, (slide_id, seed, index, answer, seconds) in enumerate(pool.imap_unordered(_train, jobs), start=1):
            answers[slide_id][str(seed)][index] = answer
            losses = ", ".join(f"{r['done']['final_loss']:.3g}" for r in answer["runs"])
            print(f"{k}/{len(jobs)}: {slide_id} seed {seed} request {index}: final losses {losses} ({seconds:.0f} s)",
                  flush=True)  # fmt: skip
    recording = {
        **provenance("tools.training_seeds", argv),
        "seeds": list(SEEDS),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "requests": {
            s["id"]: {str(seed): [seeded(src["body"], seed) for src in s["chart"]["sources"]] for seed in SEEDS}
            for s in training
        },
        "answers": answers,
    }
    RECORDING.write_text(json.dumps(recording, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RECORDING} ({len(jobs)} requests, {recording['elapsed_s']} s)")


if __name__ == "__main__":
    main()
