"""POST /api/real_trace: the residual stream of a pretrained model on one sentence; POST /api/real_tokens: its
token count (the tokenizer only); GET /api/real_models."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request

from ..config.real import RealTraceRequest
from ..jsonsafe import StrictJSONResponse
from ..services.real_answers import loaded_in_real_process, real_trace_answer, token_count_answer
from ..services.real_models import models_payload
from .body import json_body
from .deps import PoolDep
from .leaving import client_left, unless_client_leaves
from .responses import BODY_ERRORS, COMPUTING, RealModelsAnswer, RealTraceAnswer, TokenCount, json_route
from .trace import sourced

router = APIRouter(tags=["real models"])


@router.get("/api/real_models", **json_route(RealModelsAnswer))
async def real_models() -> StrictJSONResponse:
    """The pretrained models this server can trace, and the commands that install the others."""
    import anyio

    loaded = await loaded_in_real_process()
    return StrictJSONResponse(await anyio.to_thread.run_sync(models_payload, True, loaded))  # a GGUF's digest: I/O


@router.post("/api/real_tokens", **json_route(TokenCount, BODY_ERRORS, body=RealTraceRequest))
async def real_tokens(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """The text's token count for the model, the cap, and where to cut the text to fit: no weights are loaded."""
    body = await json_body(request, RealTraceRequest)
    return StrictJSONResponse(await token_count_answer(pool, body))


@router.post("/api/real_trace", **json_route(RealTraceAnswer, COMPUTING, body=RealTraceRequest))
async def real_trace(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """Per-block stream norms, branch norms, per-token norms and (causal models) gradients of a real model; a
    client that leaves takes its sentence out of the models' queue."""
    body = await json_body(request, RealTraceRequest)
    started = time.perf_counter()
    answered = await unless_client_leaves(request, real_trace_answer(pool, body))
    if answered is None:
        return client_left()
    result, source = answered
    return sourced(result, source, started)
