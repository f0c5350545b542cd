"""POST /api/trace (and GET with the same fields as query keys): one traced forward+backward pass; POST /api/laws:
the growth laws fitted to that trace's stream (app/experiments/laws.py), from the same cached trace; POST /api/paths:
the unrolled view of one Pre-norm model (app/experiments/paths.py)."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from pydantic import ValidationError

from ..config import TraceConfig
from ..experiments.depth_scan import DepthScan
from ..experiments.paths import PathsRequest
from ..jsonsafe import StrictJSONResponse
from ..pages.registry import url_state_keys
from ..services.answers import answer
from ..services.compute import get_pool
from .body import InvalidBody, body_doc, json_body

router = APIRouter(tags=["trace"])


CACHE_HEADER = "X-Resnorm-Cache"  # computed | coalesced | memory | disk | redis: where the answer came from


async def traced(cfg: TraceConfig) -> StrictJSONResponse:
    started = time.perf_counter()
    pool = get_pool()
    result, source = await pool.trace(cfg)
    body = {
        **result,
        "summary": {
            **result["summary"],
            "cached": source != "computed",
            "source": source,
            "served_ms": round((time.perf_counter() - started) * 1000, 2),
        },
    }
    return StrictJSONResponse(body, headers={CACHE_HEADER: source})


@router.post("/api/trace", response_class=StrictJSONResponse, openapi_extra=body_doc(TraceConfig))
async def trace(request: Request) -> StrictJSONResponse:
    """Trace the model described by the body (every field optional)."""
    return await traced(await json_body(request, TraceConfig))


@router.post("/api/laws", response_class=StrictJSONResponse, openapi_extra=body_doc(TraceConfig))
async def laws(request: Request) -> StrictJSONResponse:
    """The stream's norm per layer and every growth law fitted to it from ‖x₀‖ (√(‖x₀‖² + c·l), a line, an
    exponential, the best power), the one that fits (or none), and √(‖x₀‖² + Σ‖fₖ‖²) with nothing fitted. The
    body is /api/trace's; the trace is computed (or read from the cache) once for both."""
    result, source = await answer("laws", await json_body(request, TraceConfig))
    return StrictJSONResponse(result, headers={CACHE_HEADER: source})


@router.post("/api/depth_scan", response_class=StrictJSONResponse, openapi_extra=body_doc(DepthScan))
async def depth_scan(request: Request) -> StrictJSONResponse:
    """Xiong et al. 2020's theorem measured: the last block's FFN parameter gradient of each preset at each depth
    and seed (at most 2 presets × 5 depths up to 96 × 4 seeds, each an ordinary cached trace), and its exponent
    against depth per seed."""
    result, source = await answer("depth_scan", await json_body(request, DepthScan))
    return StrictJSONResponse(result, headers={CACHE_HEADER: source})


@router.post("/api/paths", response_class=StrictJSONResponse, openapi_extra=body_doc(PathsRequest))
async def paths(request: Request) -> StrictJSONResponse:
    """Veit et al. 2016's unrolled view measured on a Pre-norm model (body: {"model": a /api/trace body, "samples"}):
    how many of its 2^L paths pass k units, the gradient every path of length k carries together (exact), and the
    sizes of sampled single paths of each length."""
    result, source = await answer("paths", await json_body(request, PathsRequest))
    return StrictJSONResponse(result, headers={CACHE_HEADER: source})


@router.get("/api/trace", response_class=StrictJSONResponse)
async def trace_from_query(request: Request) -> StrictJSONResponse:
    """The same trace with the request model's fields as query keys, e.g. ?depth=48&norm_position=post."""
    return await traced(config_from_query(dict(request.query_params)))


def config_from_query(params: dict[str, str]) -> TraceConfig:
    """A page's URL state as a TraceConfig: its view keys (app/pages/registry.py) are not model fields."""
    ignored = url_state_keys()
    values = {k: v for k, v in params.items() if k not in ignored}
    try:
        return TraceConfig.model_validate_strings(values) if values else TraceConfig()
    except ValidationError as exc:
        raise InvalidBody(exc.errors(), TraceConfig) from None
