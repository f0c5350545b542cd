"""Run a slide's sources on the server, exactly as the API answers them, for the offline deck (/lecture.html).

Traces and lessons go through the compute pool with the API's own cache keys, so an export after a rehearsal
costs nothing and a trace computed here is a cache hit for the pages. Training runs are recorded once per server
process (a whole deck's training takes about a minute) and kept with the finished runs /api/train replays, so a
rehearsal's run serves the export and the other way round: the exported file shows the curves as recorded. tests/test_lecture.py checks that every answer here equals the HTTP API's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ...config import TraceConfig
from ...services.compute import get_cache, get_pool
from ...services.warmup import WarmRequest
from ...settings import get_settings
from ..lessons.chain import ChainRequest, chain_lesson
from ..lessons.layernorm import LayerNormRequest, layernorm_lesson
from ..lessons.precision import PrecisionRequest, precision_lesson, snowball_config
from ..lessons.softmax import SoftmaxRequest, softmax_lesson
from ..trace import run_trace
from ..train import TrainRequest, train_events

LESSONS: dict[str, tuple[type, Callable[..., dict[str, Any]]]] = {
    "chain": (ChainRequest, chain_lesson),
    "layernorm": (LayerNormRequest, layernorm_lesson),
    "softmax": (SoftmaxRequest, softmax_lesson),
}


async def run_source(source: dict[str, Any]) -> Any:
    """The answer the API gives for this source (a training source: its list of NDJSON events)."""
    api = source["api"]
    if api == "trace":
        return await _trace(TraceConfig(**source["body"]))
    if api in LESSONS:
        model, lesson = LESSONS[api]
        req = model.model_validate(source.get("body", source.get("query")))
        result, _ = await get_pool().run_cached(f"lesson:{api}:{req.model_dump_json()}", lesson, req)
        return result
    if api == "precision":
        return await _precision(source["query"])
    if api == "train":
        return await recorded_events(TrainRequest(**source["body"]))
    if api == "real_trace":  # slides_real: a pretrained model, as POST /api/real_trace answers it
        from ...config.real import RealTraceRequest
        from ...services.real_models import real_trace_answer

        return (await real_trace_answer(RealTraceRequest(**source["body"])))[0]
    raise ValueError(f"unknown source api {api!r}")


def warm_items(source: dict[str, Any]) -> list[WarmRequest]:
    """The computations behind one source, under the API's cache keys, for the server's start-up warm-up
    (a training source has none: it runs only when the lecturer presses T)."""
    api = source["api"]
    if api == "trace":
        cfg = TraceConfig(**source["body"])
        return [WarmRequest(cfg.cache_key(), run_trace, (cfg,), "lecture trace")]
    if api in LESSONS:
        model, lesson = LESSONS[api]
        req = model.model_validate(source.get("body", source.get("query")))
        return [WarmRequest(f"lesson:{api}:{req.model_dump_json()}", lesson, (req,), f"lecture {api}")]
    if api == "precision":
        cfg16 = snowball_config(
            {k: str(v) for k, v in source["query"].items() if k not in PrecisionRequest.model_fields}
        )
        return [
            WarmRequest(cfg.cache_key(), run_trace, (cfg,), "lecture precision")
            for cfg in (cfg16, cfg16.model_copy(update={"dtype": "float32"}))
        ]
    return []


async def _trace(cfg: TraceConfig) -> dict[str, Any]:
    pool = get_pool()  # as POST /api/trace runs it: same key, in a compute process when the server has them
    result, _ = await pool.trace(cfg)
    return result


async def _precision(query: dict[str, Any]) -> dict[str, Any]:
    """GET /api/precision: numbers from PrecisionRequest's fields, the rest configures the float16 stack."""
    numbers = {k: v for k, v in query.items() if k in PrecisionRequest.model_fields}
    stack = {k: str(v) for k, v in query.items() if k not in PrecisionRequest.model_fields}
    cfg16 = snowball_config(stack)
    trace16 = await _trace(cfg16)
    trace32 = await _trace(cfg16.model_copy(update={"dtype": "float32"}))
    return precision_lesson(PrecisionRequest(**numbers), trace16, trace32)


# ---- Training: the server's finished runs (app.services.training), recorded here when missing ----------------

_recording = threading.Lock()  # one recording at a time: training takes the whole machine


def _record(request: TrainRequest) -> list[dict[str, Any]]:
    import torch

    from ...services.training import cache_key

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
    from ...services.training import recorded_run

    events = await recorded_run(request)
    return events if events is not None else await anyio.to_thread.run_sync(_record, request)


def recording_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the browser builds from the NDJSON lines (static/js/lecture/sources.js): per run its loss curve and
    its `done` event; `steps` and `symbols` (the data alphabet: ln symbols is the uniform guess)."""
    start = events[0]
    runs = [{"run": r["run"], "steps": [], "loss": [], "done": None} for r in start["runs"]]
    for event in events:
        if event.get("type") == "step":
            runs[event["run"]]["steps"].append(event["step"])
            runs[event["run"]]["loss"].append(event["loss"])
        elif event.get("type") == "done":
            runs[event["run"]]["done"] = event
    symbols = start["runs"][0]["config"]["vocab_size"] - 1
    return {"steps": start["steps"], "symbols": symbols, "runs": runs}
