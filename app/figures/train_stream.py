"""/train's charts while the runs train: the events of POST /api/train turned into chart messages, built here.

- `{"type": "chart", "chart": key, ...}`: a whole chart (Chart.to_json()), the first time it is sent (at the start);
- `{"type": "extend", "chart": "train-loss", "step": s, "traces": [...], "x": [[...]], "y": [[...]], "rows": [...]}`:
  one step of one run, appended to its curve and to the CSV rows (`extend`);
- `{"type": "set", "chart": key, "set": [[path, value], ...]}`: the values of a chart that changed since, each written
  at its path (`assign`): the per-layer chart at each snapshot every run has reached, the loss chart's words when a
  run diverges and when the request ends.

static/js/charts.js's extendChart and assignChart do the same in the browser. A chart patched by every message since
its whole one equals the chart built from the same events (tests/test_figures_train.py). A replayed run (the server
had recorded it) sends no `extend`: its start, then its finished charts. docs/benchmarks.md ("/train's stream")
measures this against rebuilding the chart every few steps.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

from ..experiments.train_answer import TrainCharts, empty_answer
from ..experiments.train_curves import add_event
from ..jsonsafe import to_strict
from . import train, train_profile
from .chart import Json
from .style import finite

LOSS, PROFILE = train.CHART.key, train_profile.CHART.key


def built(key: str, answer: Json, lang: str) -> Json:
    """The chart `key` of the answer as a message's JSON (strict: inf/NaN as null, so two builds compare equal)."""
    builder = train.build if key == LOSS else train_profile.build
    return to_strict(builder(answer, lang).to_json())[0]


def changes(old: Any, new: Any, path: tuple[str | int, ...] = (), whole: tuple[str, ...] = ()) -> list[list[Any]]:
    """[path, value] for every value of `new` that differs from `old`: dicts with the same keys and lists of objects
    of the same length are followed item by item; anything else (a curve's y values, a caption) and the top-level
    keys named `whole` (the CSV rows: fewer bytes whole than cell by cell) are replaced whole."""
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        out = []
        for key in new:
            if key not in whole:
                out += changes(old[key], new[key], (*path, key))
            elif old[key] != new[key]:
                out.append([[*path, key], new[key]])
        return out
    same_objects = isinstance(old, list) and isinstance(new, list) and len(old) == len(new)
    if same_objects and all(isinstance(v, dict) for v in (*old, *new)):
        return [c for i, (a, b) in enumerate(zip(old, new, strict=True)) for c in changes(a, b, (*path, i))]
    return [] if old == new else [[list(path), new]]


def extend(chart: Json, patch: Json) -> Json:
    """A chart with one `extend` patch applied in place: its curves' points and its CSV rows appended."""
    for trace, xs, ys in zip(patch["traces"], patch["x"], patch["y"], strict=True):
        chart["figure"]["data"][trace]["x"] += xs
        chart["figure"]["data"][trace]["y"] += ys
    chart["rows"] += patch["rows"]
    return chart


def assign(chart: Json, patch: Json) -> Json:
    """A chart with one `set` patch applied in place: each [path, value] written where its path leads."""
    for path, value in patch["set"]:
        *route, last = path
        here = chart
        for step in route:
            here = here[step]
        here[last] = value
    return chart


class ChartStream:
    """The chart messages of one /train request, fed its events one at a time. It keeps each chart as the page
    holds it, so a change is sent as the values that changed."""

    def __init__(self, request: TrainCharts, lang: str) -> None:
        self.answer = empty_answer(request)
        self.lang = lang
        self.replay = False
        self.sent: dict[str, Json] = {}

    def messages(self, event: Json) -> list[Json]:
        add_event(self.answer, event)
        kind = event.get("type")
        if kind == "start":
            self.replay = bool(event.get("cached"))
            return self.charts(LOSS, PROFILE)
        if kind == "end":
            return self.charts(LOSS, PROFILE)
        if kind == "error":
            return [event]
        if self.replay:
            return []
        if kind == "done":
            return self.charts(LOSS) if event["diverged"] else []
        if kind != "step":
            return []
        out = [self.step_patch(event)]
        if event.get("layers") and self.snapshot_complete(event["step"]):
            out += self.charts(PROFILE)
        return out

    def charts(self, *keys: str) -> list[Json]:
        """Each chart whole the first time, then only its values that changed (`set`), if any."""
        out = []
        for key in keys:
            new = built(key, self.answer, self.lang)
            if key not in self.sent:
                out.append({"type": "chart", **new})
            elif changed := changes(self.sent[key], new, whole=("rows",)):
                out.append({"type": "set", "chart": key, "set": changed})
            self.sent[key] = copy.deepcopy(new)  # the page's copy: patched in place as the stream goes on
        return out

    def step_patch(self, event: Json) -> Json:
        run = event["run"]
        k = len(self.answer["runs"][run]["steps"]) - 1
        patch = {"type": "extend", "chart": LOSS, "step": event["step"], "traces": [1 + run], "x": [[event["step"]]],
                 "y": [finite([event["loss"]])], "rows": [train.row(self.answer, run, k)]}  # fmt: skip
        extend(self.sent[LOSS], to_strict(patch)[0])
        return patch

    def snapshot_complete(self, step: int) -> bool:
        """Every run still training has taken its snapshot at this step (runs step in turn, run 0 first)."""
        return all(r["profile_step"] == step for r in self.answer["runs"] if r["done"] is None)

    def __call__(self, events: Iterable[Json]) -> Iterator[Json]:
        for event in events:
            yield from self.messages(event)


def stream_messages(request: TrainCharts, events: Iterable[dict[str, Any]], lang: str = "en") -> Iterator[Json]:
    """Every chart message of a finished list of events (what the route streams, in one go)."""
    return ChartStream(request, lang)(events)
