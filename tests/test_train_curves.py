"""One fold of a training stream into per-run curves (app/experiments/train_curves.py): /train's charts, the deck's
recordings and the presets' printout read the same columns, equal to the events of a real run read by hand."""

from __future__ import annotations

import math

from app.config import TraceConfig, preset_config
from app.experiments.lecture.demos import recording_from_events
from app.experiments.train import TrainRequest, train_events
from app.experiments.train_answer import TrainCharts, answer_of, empty_answer
from app.experiments.train_curves import add_event, answer_from_events, last_step

SMALL = TraceConfig(depth=2, d_model=16, n_heads=2, seq_len=6, vocab_size=6, batch=4)


def real_run() -> tuple[TrainRequest, list[dict]]:
    """Two runs side by side under SGD at the largest learning rate allowed: the Pre-LN one diverges (its `done`
    says where), the Post-LN one trains to the end."""
    runs = [preset_config("pre_ln", SMALL), preset_config("post_ln", SMALL)]
    request = TrainRequest(runs=runs, steps=6, lr=10.0, optimizer="sgd")
    events = list(train_events(request))
    assert [e["diverged"] for e in events if e["type"] == "done"] == [True, False]
    return request, events


def by_hand(events: list[dict], run: int, key: str) -> list:
    return [event[key] for event in events if event["type"] == "step" and event["run"] == run]


def test_every_reader_gets_the_runs_columns_as_the_events_carry_them():
    request, events = real_run()
    charts = answer_of(TrainCharts(**request.model_dump()), events)
    whole = answer_from_events(events)
    recording = recording_from_events(events)
    for run in (0, 1):
        done = next(e for e in events if e["type"] == "done" and e["run"] == run)
        for column, key in (("steps", "step"), ("loss", "loss"), ("grad_norm", "grad_norm"), ("lr", "lr")):
            assert charts["runs"][run][column] == whole["runs"][run][column] == by_hand(events, run, key)
        assert recording["runs"][run] == {"run": run, "steps": by_hand(events, run, "step"),
                                          "loss": by_hand(events, run, "loss"), "done": done}  # fmt: skip
        assert charts["runs"][run]["done"] is done and len(charts["runs"][run]["steps"]) == done["steps_done"]
    assert charts["ended"] and whole["ended"] and recording["finished"]
    assert recording["steps"] == charts["steps"] == 6 and recording["symbols"] == charts["symbols"] == 5
    assert recording["step"] == last_step(charts) == max(e["step"] for e in events if e["type"] == "step")
    assert math.isclose(charts["runs"][1]["loss"][0], math.log(5), rel_tol=0.5)  # near the uniform guess at first


def test_a_stream_folded_event_by_event_is_the_answer_in_one_go():
    request, events = real_run()
    charts = TrainCharts(**request.model_dump())
    answer = empty_answer(charts)
    seen = []
    for event in events:
        add_event(answer, event)
        seen.append(last_step(answer))
        if event["type"] == "step":
            assert answer["runs"][event["run"]]["loss"][-1] == event["loss"]
    assert answer == answer_of(charts, events)
    assert seen == sorted(seen) and seen[0] == 0  # the furthest step only grows, from 0 before the first


def test_an_unfinished_stream_says_so():
    _, events = real_run()
    cut = events[: next(i for i, e in enumerate(events) if e["type"] == "done")]
    recording = recording_from_events(cut)
    assert not recording["finished"] and all(run["done"] is None for run in recording["runs"])
    assert recording["step"] == max(e["step"] for e in cut if e["type"] == "step")
