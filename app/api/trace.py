"""POST /api/trace (and GET with the same fields as query keys): one traced forward+backward pass; POST /api/laws:
the growth laws fitted to that trace's stream (app/experiments/laws.py), from the same cached trace."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..config import TraceConfig
from ..experiments.depth_scan import DepthScan
from ..jsonsafe import StrictJSONResponse
from ..pages.registry import url_state_keys
from ..services.answers import answer
from ..services.compute import ComputePool
from .body import InvalidBody, json_body
from .deps import PoolDep
from .responses import BUSY, COMPUTING, QUERY_ERRORS, DepthScanAnswer, LawsAnswer, TraceAnswer, json_route

router = APIRouter(tags=["trace"])


CACHE_HEADER = "X-Resnorm-Cache"  # computed | coalesced | memory | disk | redis: where the answer came from


def sourced(result: dict[str, Any], source: str, started: float) -> StrictJSONResponse:
    """A trace's answer (ours or a pretrained model's) whose summary says where it came from and how long serving it
    took since `started` (time.perf_counter()), with the source in the cache header too."""
    served_ms = round((time.perf_counter() - started) * 1000, 2)
    summary = {**result["summary"], "cached": source != "computed", "source": source, "served_ms": served_ms}
    return StrictJSONResponse({**result, "summary": summary}, headers={CACHE_HEADER: source})


async def traced(pool: ComputePool, cfg: TraceConfig) -> StrictJSONResponse:
    started = time.perf_counter()
    result, source = await pool.trace(cfg)
    return sourced(result, source, started)


@router.post("/api/trace", **json_route(TraceAnswer, COMPUTING, body=TraceConfig))
async def trace(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """Trace the model described by the body (every field optional)."""
    return await traced(pool, await json_body(request, TraceConfig))


@router.post("/api/laws", **json_route(LawsAnswer, COMPUTING, body=TraceConfig))
async def laws(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """The stream's norm per layer and every growth law fitted to it from ‖x₀‖ (√(‖x₀‖² + c·l), a line, an
    exponential, the best power), the one that fits (or none), and √(‖x₀‖² + Σ‖fₖ‖²) with nothing fitted. The
    body is /api/trace's; the trace is computed (or read from the cache) once for both."""
    result, source = await answer(pool, "laws", await json_body(request, TraceConfig))
    return StrictJSONResponse(result, headers={CACHE_HEADER: source})


@router.post("/api/depth_scan", **json_route(DepthScanAnswer, COMPUTING, body=DepthScan))
async def depth_scan(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """Xiong et al. 2020's theorem measured: the last block's FFN parameter gradient of each preset at each depth
    and seed (at most 2 presets × 5 depths up to 96 × 4 seeds, each an ordinary cached trace), and its exponent
    against depth per seed."""
    result, source = await answer(pool, "depth_scan", await json_body(request, DepthScan))
    return StrictJSONResponse(result, headers={CACHE_HEADER: source})


@router.get("/api/trace", **json_route(TraceAnswer, QUERY_ERRORS, BUSY))
async def trace_from_query(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """The same trace with the request model's fields as query keys, e.g. ?depth=48&norm_position=post."""
    return await traced(pool, config_from_query(dict(request.query_params)))


def config_from_query(params: dict[str, str]) -> TraceConfig:
    """A page's URL state as a TraceConfig: its view keys (app/pages/registry.py) are not model fields."""
    ignored = url_state_keys()
    values = {k: v for k, v in params.items() if k not in ignored}
    try:
        return TraceConfig.model_validate_strings(values) if values else TraceConfig()
    except ValidationError as exc:
        raise InvalidBody(exc.errors(), TraceConfig) from None
