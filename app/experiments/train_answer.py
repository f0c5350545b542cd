"""/train's charts' answer: the events POST /api/train streams (start, step, done, end) folded into per-run columns
by app/experiments/train_curves.py, one event at a time, so a stream can draw while it trains and a finished run is
the same answer in one go.

`TrainCharts` is the request of /train's charts (POST /api/train/charts and POST /api/figure/train-loss): the
training request itself plus the /train page's run kinds, which name the runs (app/experiments/train_presets.py).
The charts are app/figures/train.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, model_validator

from . import train_curves
from .train import TrainRequest
from .train_curves import fold
from .train_presets import RUN_KINDS

Json = train_curves.Json
RunKind = Literal[tuple(RUN_KINDS)]  # type: ignore[valid-type]  # the /train page's run kinds, by key


class TrainCharts(TrainRequest):
    """POST /api/train/charts and POST /api/figure/train-loss|train-profile: a training request and, optionally,
    the /train page's run kind of each run (the name its curve gets)."""

    kinds: list[RunKind] | None = Field(  # type: ignore[valid-type]
        None,
        max_length=4,
        description="the /train run kind of each run (its label), e.g. post_ln; null: from the config",
    )

    @model_validator(mode="after")
    def _one_kind_a_run(self) -> TrainCharts:
        if self.kinds is not None and len(self.kinds) != len(self.runs):
            raise ValueError(
                f"kinds: {len(self.kinds)} kinds for {len(self.runs)} runs | allowed: one kind per run, or null"
            )
        return self

    def training(self) -> TrainRequest:
        """The training request alone: what POST /api/train trains and the server records, under the same key."""
        return TrainRequest.model_validate(self.model_dump(exclude={"kinds"}), context={"train_budget": False})


def empty_answer(request: TrainCharts) -> Json:
    """Before the first event: the runs as asked, nothing trained."""
    configs = [cfg.model_dump() for cfg in request.runs]
    return train_curves.empty_answer(request.steps, request.task, configs, request.kinds)


def answer_of(request: TrainCharts, events: Iterable[Json]) -> Json:
    """Every event at once: a finished (or recorded) run's answer."""
    return fold(empty_answer(request), events)
