"""Run a slide's sources on the server, exactly as the API answers them, for the offline deck (/lecture.html).

Traces and lessons go through app/services/answers.py (the request table's keys), so an export after a rehearsal
costs nothing and a trace computed here is a cache hit for the pages. Training runs are recorded once per server
process (a whole deck's training takes about a minute) and kept with the finished runs /api/train replays, so a
rehearsal's run serves the export and the other way round: the exported file shows the curves as recorded.
tests/test_lecture.py checks that every answer here equals the HTTP API's.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio.to_thread
from pydantic import BaseModel

from ..config.real import RealTraceRequest
from ..experiments.lecture import DECK
from ..experiments.requests import REQUESTS
from ..experiments.train import TrainRequest, train_events
from ..jsonsafe import to_strict
from ..settings import get_settings
from .answers import answer
from .compute import get_cache
from .real_models import real_trace_answer
from .training import cache_key, recorded_run


def source_request(source: dict[str, Any]) -> tuple[str, BaseModel]:
    """A slide's source as (request kind, validated request); training sources are not in the request table."""
    api = source["api"]
    if api not in REQUESTS:
        raise ValueError(f"unknown source api {api!r}")
    return api, REQUESTS[api].validate(source.get("body", source.get("query")) or {})


def deck_requests() -> list[tuple[str, BaseModel]]:
    """Every request the deck's charts make, its "try it" options' too (training excluded: it runs only when the
    lecturer presses T)."""
    charts = [s["chart"] for s in DECK if s["chart"]]
    charts += [o["chart"] for s in DECK for o in s.get("try_it", {}).get("options", [])]
    requests = []
    for chart in charts:
        for source in chart["sources"]:
            if source["api"] not in ("train", "real_trace"):  # real models: loaded on first use, never warmed
                request = source_request(source)
                if request not in requests:
                    requests.append(request)
    return requests


async def run_source(source: dict[str, Any]) -> Any:
    """The answer the API gives for this source (a training source: its list of NDJSON events)."""
    if source["api"] == "train":
        return await recorded_events(TrainRequest(**source["body"]))
    if source["api"] == "real_trace":  # slides_real: a pretrained model, as POST /api/real_trace answers it
        return (await real_trace_answer(RealTraceRequest(**source["body"])))[0]
    result, _ = await answer(*source_request(source))
    return result


async def bake() -> dict[str, Any]:
    """Every slide's answers, each distinct request once: {"answers": [...], "slides": {id: [index, ...]}}."""
    answers: list[Any] = []
    index: dict[str, int] = {}
    slides: dict[str, list[int]] = {}
    charts = [(s["id"], s["chart"]) for s in DECK if s["chart"]]
    charts += [(f"{s['id']}#{o['key']}", o["chart"]) for s in DECK for o in s.get("try_it", {}).get("options", [])]
    for name, chart in charts:  # a "try it" option under "id#key": the offline file offers every option, recorded
        slides[name] = []
        for source in chart["sources"]:
            key = json.dumps(source, sort_keys=True)
            if key not in index:  # one request after the other: an export must not flood the compute pool
                index[key] = len(answers)
                answers.append(await run_source(source))
            slides[name].append(index[key])
    return to_strict({"answers": answers, "slides": slides})[0]


# ---- Training: the server's finished runs (app.services.training), recorded here when missing ----------------

_recording = threading.Lock()  # one recording at a time: training takes the whole machine


def _record(request: TrainRequest) -> list[dict[str, Any]]:
    import torch

    with _recording:
        found = get_cache().get(cache_key(request))
        if found is not None and isinstance(found[0], list):
            return found[0]  # trained meanwhile (by /api/train or another export)
        torch.set_num_threads(get_settings().threads_per_run())
        events = list(train_events(request))
        get_cache().set(cache_key(request), events)  # and a later T on the live deck replays it at once
    return events


async def recorded_events(request: TrainRequest) -> list[dict[str, Any]]:
    """Every event /api/train streams for this request (start, steps, done per run, end), trained at most once:
    the same store /api/train replays from, so a rehearsal's run serves the export and the other way round."""
    events = await recorded_run(request)
    return events if events is not None else await anyio.to_thread.run_sync(_record, request)
