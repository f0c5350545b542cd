"""The one fold of a training stream into per-run curves: the events POST /api/train streams (start, step, done, end)
folded, one event at a time, into per-run columns (steps, loss, gradient norm, learning rate, the latest per-layer
profile and the `done` event), so a stream can draw while it trains and a finished run is the same answer in one go.

/train's charts (app/experiments/train_answer.py, app/figures/train_stream.py), the deck's training recordings
(app/experiments/lecture/demos.py) and the presets' printout (app/experiments/train_presets.py `measure`) all read
these columns; nothing else turns events into curves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Json = dict[str, Any]
COLUMNS = (("steps", "step"), ("loss", "loss"), ("grad_norm", "grad_norm"), ("lr", "lr"))  # column, event key


def empty_answer(steps: int, task: str, configs: Sequence[Json], kinds: Sequence[str] | None = None) -> Json:
    """Before the first event: the runs (their configs as dicts) as asked, nothing trained."""
    return {
        "steps": steps,
        "symbols": configs[0]["vocab_size"] - 1,  # the data alphabet (the separator is never an answer)
        "task": task,
        "kinds": list(kinds) if kinds is not None else None,
        "configs": list(configs),
        "started": False,
        "ended": False,
        "cached": False,
        "elapsed_ms": None,
        "runs": [
            {"run": i, **{column: [] for column, _ in COLUMNS}, "profile": None, "profile_step": 0, "done": None}
            for i in range(len(configs))
        ],
    }


def add_event(answer: Json, event: Json) -> None:
    """Fold one event of POST /api/train's stream into the answer, in place."""
    kind = event.get("type")
    if kind == "start":
        answer["started"] = True
        answer["cached"] = bool(event.get("cached"))
    elif kind == "step":
        run = answer["runs"][event["run"]]
        for column, key in COLUMNS:
            run[column].append(event[key])
        if event.get("layers"):
            run["profile"], run["profile_step"] = event["layers"], event["step"]
    elif kind == "done":
        answer["runs"][event["run"]]["done"] = event
    elif kind == "end":
        answer["ended"] = True
        answer["cached"] = answer["cached"] or bool(event.get("cached"))
        answer["elapsed_ms"] = event.get("elapsed_ms")


def fold(answer: Json, events: Iterable[Json]) -> Json:
    """Every event folded into `answer` (in place), which is returned."""
    for event in events:
        add_event(answer, event)
    return answer


def answer_from_events(events: Sequence[Json]) -> Json:
    """A whole stream's answer, its runs as its `start` event (the first) names them."""
    start = events[0]
    configs = [run["config"] for run in start["runs"]]
    return fold(empty_answer(start["steps"], start["task"], configs), events)


def last_step(answer: Json) -> int:
    """The furthest step any run has reached (0 before the first)."""
    return max((run["steps"][-1] for run in answer["runs"] if run["steps"]), default=0)
