"""Run a slide's sources on the server, exactly as the API answers them, and build what the deck shows of it
(app/figures/slides.py): GET /api/lecture/slide/{id} for the live deck, every slide baked into the offline file.

Traces and lessons go through app/services/answers.py (the request table's keys), so an export after a rehearsal
costs nothing and a trace computed here is a cache hit for the pages. Training runs are recorded once per server
process (a whole deck's training takes about 40 s on two idle cores) and kept with the finished runs /api/train replays, so a
rehearsal's run serves the export and the other way round: the exported file shows the curves as recorded.
tests/test_lecture.py checks that every answer here equals the HTTP API's.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio.to_thread
from pydantic import BaseModel

from ..config.real import RealTraceRequest
from ..experiments.lecture import DECK, shown
from ..experiments.lecture.demos import recording_from_events
from ..experiments.requests import REQUESTS
from ..experiments.train import TrainRequest, train_events
from ..figures import slides
from ..jsonsafe import to_strict
from ..settings import get_settings
from .answers import answer
from .compute import ComputePool, get_cache
from .real_answers import real_trace_answer
from .training import TooManyRuns, cache_key, recorded_run, training_events


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


async def run_source(pool: ComputePool, source: dict[str, Any]) -> Any:
    """The answer the API gives for this source (a training source: its list of NDJSON events)."""
    if source["api"] == "train":
        return await recorded_events(TrainRequest(**source["body"]))
    if source["api"] == "real_trace":  # slides_real: a pretrained model, as POST /api/real_trace answers it
        return (await real_trace_answer(pool, RealTraceRequest(**source["body"])))[0]
    result, _ = await answer(pool, *source_request(source))
    return result


async def slide_answers(pool: ComputePool, slide: dict[str, Any], recordings: list[Any] | None = None) -> list[Any]:
    """The answers of a slide's sources, strict as the browser would get them. A training source: `recordings[i]`
    (a run still training, or one being baked), else the server's finished run, else None."""
    answers: list[Any] = []
    for i, source in enumerate(slide["chart"]["sources"] if slide["chart"] else []):
        if source["api"] == "train":
            given = recordings[i] if recordings and i < len(recordings) else None
            events = None if given else await recorded_run(TrainRequest(**source["body"]))
            answers.append(given or (recording_from_events(to_strict(events)[0]) if events else None))
        else:  # one request after the other: a slide must not flood the compute pool
            answers.append(to_strict(await run_source(pool, source))[0])
    return answers


MAX_VIEWS = 512  # a slide's view is ~5-40 kB: a few MB at most
_views: OrderedDict[str, dict[str, Any]] = OrderedDict()


def view_name(slide_id: str, option: str | None) -> str:
    """A slide's name in caches and in the offline file: its id, or "id#key" for a "try it" option."""
    return f"{slide_id}#{option}" if option else slide_id


async def slide_view(
    pool: ComputePool, slide_id: str, option: str | None, lang: str, recordings: list[Any] | None = None
) -> dict[str, Any]:
    """What the deck shows of a slide (or of one of its "try it" options): figure, slide patch, caption, verdict.
    Cached per slide, option and language, except while `recordings` (runs still training) feed it."""
    key = f"{view_name(slide_id, option)}|{lang}"
    if not recordings and key in _views:
        _views.move_to_end(key)
        return _views[key]
    slide = shown(slide_id, option)
    answers = await slide_answers(pool, slide, recordings)
    view = to_strict({"id": slide_id, "option": option, **slides.build(slide, answers, lang).to_json()})[0]
    if not recordings and not view["claim"]["pending"]:
        _views[key] = view
        if len(_views) > MAX_VIEWS:
            _views.popitem(last=False)
    return view


def view_names() -> list[tuple[str, str | None]]:
    """Every slide of the deck and every "try it" option of it, as (slide id, option key or None)."""
    names: list[tuple[str, str | None]] = []
    for s in DECK:
        names.append((s["id"], None))
        default = s.get("try_it", {}).get("default")
        names += [(s["id"], o["key"]) for o in s.get("try_it", {}).get("options", []) if o["key"] != default]
    return names


Progress = Callable[[int, int, str], None]  # (views started, views in all, the view's name)


async def bake(pool: ComputePool, lang: str, progress: Progress | None = None) -> dict[str, Any]:
    """Every slide's view in lang, its training recorded, for the offline file: {"views": {"id" or "id#key": view}}.
    `progress` is told of each view as it starts (the whole deck takes minutes: its training runs)."""
    views: dict[str, Any] = {}
    names = view_names()
    for started, (slide_id, option) in enumerate(names, start=1):
        if progress is not None:
            progress(started, len(names), view_name(slide_id, option))
        slide = shown(slide_id, option)
        recordings = None
        if slides.is_training(slide):  # the file shows the runs as recorded, training them here when missing
            recordings = [recording_from_events(to_strict(await run_source(pool, s))[0]) if s["api"] == "train" else None
                          for s in slide["chart"]["sources"]]  # fmt: skip
        views[view_name(slide_id, option)] = await slide_view(pool, slide_id, option, lang, recordings)
    return {"views": views}


# ---- Training: the server's finished runs (app.services.training), recorded here when missing ----------------

_recording = threading.Lock()  # one recording at a time: training takes the whole machine


def _record(request: TrainRequest) -> list[dict[str, Any]]:
    import torch

    with _recording:
        found = get_cache().get(cache_key(request))
        if found is not None and isinstance(found[0], list):
            return found[0]  # trained meanwhile (by /api/train or another export)
        torch.set_num_threads(get_settings().threads_per_run())
        events = list(train_events(request, parallel=get_settings().train_parallel()))
        get_cache().set(cache_key(request), events)  # and a later T on the live deck replays it at once
    return events


async def recorded_events(request: TrainRequest) -> list[dict[str, Any]]:
    """Every event /api/train streams for this request (start, steps, done per run, end), trained at most once:
    the same store /api/train replays from, so a rehearsal's run serves the export and the other way round."""
    events = await recorded_run(request)
    return events if events is not None else await anyio.to_thread.run_sync(_record, request)


# ---- A training slide trained live: its runs' progress and its chart, built here as they train ----------------------

VIEW_EVERY_S = 0.3  # a slide's view (5-40 kB) at most this often while it trains; the last one always
PROGRESS_EVERY_S = 0.1
BUSY_RETRY_S = 2  # a later run of the slide found every training slot taken: wait, then ask again
BUSY_TRIES = 60


def training_sources(slide: dict[str, Any]) -> list[int]:
    """The indices of a slide's training sources (none for a slide that trains nothing)."""
    return [i for i, s in enumerate(slide["chart"]["sources"] if slide["chart"] else []) if s["api"] == "train"]


async def slide_training(
    pool: ComputePool, slide_id: str, option: str | None, lang: str
) -> AsyncIterator[dict[str, Any]]:
    """POST /api/lecture/slide/{id}/train: every training source of the slide, one after the other (a finished run
    replayed), as messages: `progress` (fraction of all the slide's steps, the current run's step), `view` (what
    the deck shows, built from the runs so far; the last one `final` and equal to GET's once trained), `busy` (a
    later run waits for a training slot) and `error`. TooManyRuns when the first run finds no free slot."""
    slide = shown(slide_id, option)
    trained = training_sources(slide)
    first = await training_events(TrainRequest(**slide["chart"]["sources"][trained[0]]["body"]))
    return _slide_training(pool, slide, (slide_id, option, lang), trained, first)


async def _slide_training(
    pool: ComputePool,
    slide: dict[str, Any],
    name: tuple[str, str | None, str],
    trained: list[int],
    first: AsyncIterator[dict[str, Any]],
) -> AsyncIterator[dict[str, Any]]:
    sources = slide["chart"]["sources"]
    total = sum(sources[i]["body"]["steps"] * len(sources[i]["body"]["runs"]) for i in trained)
    recordings: list[dict[str, Any] | None] = [None] * len(sources)  # a finished source's, folded once
    done = 0
    told = shown_at = 0.0

    def fold(events: list[dict[str, Any]]) -> dict[str, Any]:
        return recording_from_events(to_strict(events)[0])

    async def view(final: bool, running: tuple[int, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
        shown = list(recordings)
        if running is not None:  # the source training now: its events so far
            shown[running[0]] = fold(running[1])
        return {"type": "view", "final": final, "view": await slide_view(pool, *name, shown)}

    def progress(step: int, steps: int) -> dict[str, Any]:
        return {"type": "progress", "fraction": done / total, "step": step, "steps": steps}

    stream: AsyncIterator[dict[str, Any]] | None = first
    for i in trained:
        request = TrainRequest(**sources[i]["body"])
        for _ in range(BUSY_TRIES):
            if stream is not None:
                break
            try:
                stream = await training_events(request)
            except TooManyRuns:
                yield {"type": "busy", "retry_after": BUSY_RETRY_S, "fraction": done / total}
                await asyncio.sleep(BUSY_RETRY_S)
        if stream is None:
            yield {"type": "error", "error": str(TooManyRuns(get_settings().max_train_runs))}
            return
        got: list[dict[str, Any]] = []
        step = 0
        try:
            async for event in stream:
                if event.get("type") == "error":
                    yield {"type": "error", "error": str(event.get("error") or "the training run failed")}
                    return
                got.append(event)
                if event.get("type") != "step":
                    continue
                done, step = done + 1, max(step, int(event["step"]))
                now = time.monotonic()
                if now - told >= PROGRESS_EVERY_S:
                    told = now
                    yield progress(step, request.steps)
                if now - shown_at >= VIEW_EVERY_S:
                    yield await view(final=False, running=(i, got))
                    shown_at = time.monotonic()  # after the build: a slow build leaves the loop its share
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        stream = None
        if not got or got[-1].get("type") != "end":
            yield {"type": "error", "error": "the training run ended early"}
            return
        recordings[i] = fold(got)
    yield progress(step, request.steps)
    yield await view(final=True)
