"""POST /api/sweep: trace one stack at many depths, streamed as NDJSON so pages can show progress."""
from __future__ import annotations

import json
import time
from typing import AsyncIterator

from fastapi import APIRouter, Query

from app.compute import get_pool
from app.experiments.sweep import SweepRequest, depth_row
from app.experiments.trace import run_trace
from app.jsonsafe import StrictJSONResponse, strict_dumps

router = APIRouter(tags=["sweep"])


async def _rows(request: SweepRequest) -> AsyncIterator[dict]:
    pool = get_pool()
    for depth in request.depths:  # one compute slot per depth: other users' traces interleave
        cfg = request.config.with_depth(depth)
        trace, cached = await pool.run_cached(cfg.cache_key(), run_trace, cfg)
        yield {**depth_row(trace), "cached": cached}


async def _ndjson(request: SweepRequest) -> AsyncIterator[str]:
    started = time.perf_counter()
    total = len(request.depths)
    yield json.dumps({"type": "start", "total": total, "depths": request.depths,
                      "config": request.config.model_dump()}) + "\n"
    done = 0
    async for row in _rows(request):
        done += 1
        yield strict_dumps({"type": "depth", "index": done, "total": total, **row}) + "\n"
    yield json.dumps({"type": "done", "total": total, "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)}) + "\n"


@router.post("/api/sweep")
async def sweep(request: SweepRequest | None = None,
                stream: bool = Query(True, description="NDJSON lines with progress (default) or one JSON answer")):
    """Per depth: per-layer grad_norm and act_norm lists. Streams `start`, one `depth` line per depth, `done`."""
    from fastapi.responses import StreamingResponse

    request = request or SweepRequest()
    if stream:
        return StreamingResponse(_ndjson(request), media_type="application/x-ndjson",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    started = time.perf_counter()
    rows = [row async for row in _rows(request)]
    return StrictJSONResponse({"config": request.config.model_dump(), "depths": request.depths, "results": rows,
                               "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)})
