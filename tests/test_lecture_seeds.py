"""The training slides' claims on seeds 1-3 (app/experiments/lecture/seeds.py): CI trains seed 0 (tests/test_lecture.py);
the other seeds are recorded by tools/training_seeds.py, and every claim must hold on each recording, made from the
slide's very requests. Reads a JSON file: no training here."""

from __future__ import annotations

import pytest

from app.experiments.lecture import DECK
from app.experiments.lecture.claims import evaluate, failures
from app.experiments.lecture.seeds import SEEDS, recorded, seeded

SLIDES = {slide["id"]: slide for slide in DECK}
TRAINING = [s["id"] for s in DECK if s["chart"] and any(src["api"] == "train" for src in s["chart"]["sources"])]


def test_the_recording_holds_every_training_slide_on_seeds_1_to_3():
    recording = recorded()
    assert TRAINING and recording["seeds"] == list(SEEDS) == [1, 2, 3]
    assert set(recording["answers"]) == set(TRAINING) == set(recording["requests"])
    assert recording["command"].startswith("python -m tools.training_seeds") and recording["torch"]


@pytest.mark.parametrize("slide_id", TRAINING)
@pytest.mark.parametrize("seed", SEEDS)
def test_training_claim_holds_on_the_recorded_seed(slide_id, seed):
    """The recording was made from the slide's current requests (a changed slide needs a new recording), and its
    claim, every check, holds on what it recorded."""
    slide = SLIDES[slide_id]
    recording = recorded()
    sources = slide["chart"]["sources"]
    assert recording["requests"][slide_id][str(seed)] == [seeded(src["body"], seed) for src in sources], (
        "the slide's requests changed since the recording: run python -m tools.training_seeds"
    )
    answers = recording["answers"][slide_id][str(seed)]
    assert all(run["done"] for answer in answers for run in answer["runs"]), "a run did not finish"
    measured = evaluate(slide["claim"], answers)
    assert not failures(slide["claim"], measured), (seed, failures(slide["claim"], measured))


def test_another_seed_draws_both_the_weights_and_the_data():
    body = SLIDES["post-vs-pre-train"]["chart"]["sources"][0]["body"]
    moved = seeded(body, 2)
    assert moved["seed"] == 2 and [run["seed"] for run in moved["runs"]] == [2] * len(body["runs"])
    same = {**moved, "seed": body["seed"], "runs": [{**run, "seed": 0} for run in moved["runs"]]}
    assert same == seeded(body, 0) and body["seed"] == 0  # nothing else changes, and the slide trains seed 0
