"""POST /api/train: short real training runs streamed as NDJSON, one strict JSON object per line.

Thin: validate, then hand the request to the training service (app/services/training.py), which runs it in
its own thread or replays an identical finished run from the cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..errors import FieldError
from ..experiments.tasks import TaskMismatch, tasks_payload
from ..experiments.train import MAX_STEPS, MAX_TRAIN_MACS, TrainRequest, check_runs, train_budget
from ..experiments.train_answer import TrainCharts
from ..experiments.train_presets import presets_payload
from ..jsonsafe import NDJSONResponse, StrictJSONResponse
from ..pages.registry import request_lang
from ..services.training import SLOTS, TooManyRuns, chart_stream, training_stream
from ..settings import get_settings
from .body import body_doc, json_body
from .responses import (
    BODY_ERRORS,
    TOO_MANY,
    TrainBudgetAnswer,
    TrainChartMessage,
    TrainEvent,
    TrainPresetsAnswer,
    TrainStatus,
    json_route,
    stream,
)

router = APIRouter(tags=["train"])

RETRY_AFTER_S = 10


@router.post(
    "/api/train",
    response_class=NDJSONResponse,
    responses={**BODY_ERRORS, **TOO_MANY, **stream(TrainEvent, "NDJSON lines: start, step events, done per run, end")},
    openapi_extra=body_doc(TrainRequest),
)
async def train(request: Request) -> Response:
    """Train 1-4 configs on a synthetic task; NDJSON events `start`, `step`, `done` (one per run), `end`.
    An identical finished run is replayed at once from the cache, its `start` and `end` marked `"cached": true`."""
    body = await json_body(request, TrainRequest)
    return await _streamed(body, lambda: training_stream(body))


async def _streamed(body: TrainRequest, lines: Callable[[], Awaitable[AsyncIterator[str]]]):
    """The NDJSON answer of a training request its task can read; 429 when every training slot is taken."""
    try:
        check_runs(body)
    except TaskMismatch as exc:
        raise FieldError(exc.field, exc.message, exc.allowed) from None
    try:
        streamed = await lines()
    except TooManyRuns as exc:
        return slots_taken(exc)
    return NDJSONResponse(streamed)


def slots_taken(exc: TooManyRuns) -> StrictJSONResponse:
    """429 with Retry-After: every training slot of this worker is taken."""
    return StrictJSONResponse(
        {"error": str(exc), "status": 429, "retry_after": RETRY_AFTER_S},
        status_code=429,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


@router.post(
    "/api/train/charts",
    response_class=NDJSONResponse,
    responses={**BODY_ERRORS, **TOO_MANY, **stream(TrainChartMessage, "NDJSON lines: whole charts, extend, set")},
    openapi_extra=body_doc(TrainCharts),
)
async def train_charts(request: Request) -> Response:
    """The same training, streamed as /train's two charts built on the server (app/figures/train_stream.py), in
    ?lang=: a whole chart (`"type": "chart"`: the loss chart, the per-layer chart) at the start, when its words change
    and at the end, and between them one `"type": "extend"` patch per step (that step's point and CSV row).
    The body is /api/train's plus `kinds`, the /train run kind of each run (its label)."""
    body = await json_body(request, TrainCharts)
    return await _streamed(body, lambda: chart_stream(body, request_lang(request)))


@router.post("/api/train/budget", **json_route(TrainBudgetAnswer, BODY_ERRORS, body=TrainRequest))
async def budget(request: Request) -> StrictJSONResponse:
    """How a training request stands against this server's training budget, before Start: `fits`, `multiply_adds`,
    `limit`, `times_over` and `max_steps` (the most steps that fit with these runs). Every other rule is checked."""
    body = await json_body(request, TrainRequest, context={"train_budget": False})
    return StrictJSONResponse(train_budget(body))


@router.get("/api/train/status", **json_route(TrainStatus))
async def status() -> StrictJSONResponse:
    """Training streams running in this process (a thread counts until it has really stopped)."""
    return StrictJSONResponse(
        {
            "active": SLOTS.active,
            "max": get_settings().max_train_runs,
            "started": SLOTS.started,
            "steps": SLOTS.steps,
            "replays": SLOTS.replays,
        }
    )


@router.get("/api/train/presets", **json_route(TrainPresetsAnswer))
async def presets() -> StrictJSONResponse:
    """Named comparisons (runs + settings, English and Chinese), the tasks, the defaults and the limits."""
    defaults = {name: field.default for name, field in TrainRequest.model_fields.items() if name != "runs"}
    return StrictJSONResponse(
        {
            "presets": presets_payload(),
            "tasks": tasks_payload(),
            "defaults": defaults,
            "limits": {
                "max_runs": 4,
                "max_steps": MAX_STEPS,
                "max_train_macs": MAX_TRAIN_MACS,
                "max_concurrent": get_settings().max_train_runs,
            },
        }
    )
