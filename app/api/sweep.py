"""POST /api/sweep: trace one stack at many depths, streamed as NDJSON so pages can show progress."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Query, Request

from ..errors import Busy
from ..experiments.sweep import SweepRequest, depth_row
from ..jsonsafe import NDJSONResponse, StrictJSONResponse, strict_dumps
from ..services.compute import ComputePool
from .body import body_doc, json_body
from .deps import PoolDep
from .responses import COMPUTING, SweepAnswer, SweepLine, ref, stream

router = APIRouter(tags=["sweep"])
logger = logging.getLogger(__name__)


async def _rows(pool: ComputePool, request: SweepRequest) -> AsyncIterator[dict]:
    """Rows in completion order, at most `compute_slots` depths at once; each depth takes one compute slot,
    so other users' traces queue between depths instead of behind the whole sweep."""
    pending = iter(request.depths)
    done: asyncio.Queue = asyncio.Queue()

    async def worker() -> None:
        try:
            for depth in pending:  # the workers share one iterator
                cfg = request.config.with_depth(depth)
                trace, source = await pool.trace(cfg)
                await done.put({**depth_row(trace), "cached": source != "computed", "source": source})
        except Exception as exc:  # handed to the consumer, which re-raises it
            await done.put(exc)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(pool.slots, len(request.depths))))]
    try:
        for _ in request.depths:
            row = await done.get()
            if isinstance(row, Exception):
                raise row
            yield row
    finally:  # client gone or error: start no further depth
        for task in workers:
            task.cancel()


PROGRESS_KEYS = ("depth", "cached", "source")  # what a depth line keeps with ?rows=false


async def _ndjson(pool: ComputePool, request: SweepRequest, rows: bool = True) -> AsyncIterator[str]:
    started = time.perf_counter()
    total = len(request.depths)
    yield (
        json.dumps({"type": "start", "total": total, "depths": request.depths, "config": request.config.model_dump()})
        + "\n"
    )
    done = 0
    try:
        async for row in _rows(pool, request):
            done += 1
            shown = row if rows else {k: row[k] for k in PROGRESS_KEYS}
            yield strict_dumps({"type": "depth", "index": done, "total": total, **shown}) + "\n"
    except Busy as exc:  # the 200 is already sent: say "busy" in the stream, as a 503 would
        yield (
            json.dumps(
                {
                    "type": "error",
                    "status": 503,
                    "retry_after": exc.retry_after,
                    "error": exc.message,
                    "completed": done,
                    "total": total,
                }
            )
            + "\n"
        )
        return
    except Exception as exc:  # never cut the stream off mid-line: end it with what failed
        logger.exception("sweep failed after %d of %d depths", done, total)
        yield (
            json.dumps(
                {
                    "type": "error",
                    "status": 500,
                    "error": f"sweep failed: {type(exc).__name__}",
                    "completed": done,
                    "total": total,
                }
            )
            + "\n"
        )
        return
    yield (
        json.dumps({"type": "done", "total": total, "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)})
        + "\n"
    )


STREAM_OR_JSON = stream(SweepLine, "NDJSON lines (the default), or with ?stream=false one JSON answer")
STREAM_OR_JSON[200]["content"]["application/json"] = {"schema": ref(SweepAnswer)}


@router.post(
    "/api/sweep",
    response_class=NDJSONResponse,
    responses={**COMPUTING, **STREAM_OR_JSON},
    openapi_extra=body_doc(SweepRequest),
)
async def sweep(
    http: Request,
    pool: PoolDep,
    stream: bool = Query(True, description="NDJSON lines with progress (default) or one JSON answer"),
    rows: bool = Query(
        True,
        description="false: each streamed depth line carries only its depth and cache source "
        "(a page that draws POST /api/figure/grad-heatmap needs the progress only)",
    ),
):
    """Per depth: per-layer grad_norm and act_norm lists. Streams `start`, one `depth` line per depth, `done`."""
    request = await json_body(http, SweepRequest)
    if stream:
        return NDJSONResponse(_ndjson(pool, request, rows))
    started = time.perf_counter()
    results = sorted([row async for row in _rows(pool, request)], key=lambda row: row["depth"])
    return StrictJSONResponse(
        {
            "config": request.config.model_dump(),
            "depths": request.depths,
            "results": results,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        }
    )
