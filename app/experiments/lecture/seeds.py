"""The training slides' claims on other seeds: CI trains each training slide at seed 0 (tests/test_lecture.py); seeds
1-3 are trained by tools/training_seeds.py and recorded in data/training_seeds.json, and tests/test_lecture_seeds.py
checks every claim on those recordings, so a training slide states only what holds on four seeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..train import TrainRequest

RECORDING = Path(__file__).resolve().parent / "data" / "training_seeds.json"
SEEDS = (1, 2, 3)  # seed 0 is what the slides send and CI trains


def seeded(body: dict[str, Any], seed: int) -> dict[str, Any]:
    """A training source's request on another seed: its runs' weights and its data both drawn from `seed`."""
    request = TrainRequest(**body)
    runs = [run.model_copy(update={"seed": seed}) for run in request.runs]
    return json.loads(request.model_copy(update={"runs": runs, "seed": seed}).model_dump_json())


def trimmed(recording: dict[str, Any]) -> dict[str, Any]:
    """A recording (demos.recording_from_events) without its loss curves: what a claim reads (steps, each run's
    `done` event)."""
    return {**recording, "runs": [{"run": r["run"], "done": r["done"]} for r in recording["runs"]]}


def recorded() -> dict[str, Any]:
    return json.loads(RECORDING.read_text(encoding="utf-8"))
