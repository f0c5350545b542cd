"""The lesson endpoints: GET /api/chain, POST /api/layernorm, POST /api/softmax, GET /api/precision,
POST /api/batch_dependence, GET /api/norm_speed, and GET /api/recorded (results a development tool recorded).

Thin: validate against the lesson's request model, compute off the event loop (cached), answer strict JSON.
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel, ValidationError

from ..config import TraceConfig, field_bounds
from ..errors import FieldError, validation_errors
from ..experiments.lessons.batch import BatchDependenceRequest
from ..experiments.lessons.chain import ChainRequest
from ..experiments.lessons.layernorm import LayerNormRequest
from ..experiments.lessons.norm_speed import NormSpeedRequest
from ..experiments.lessons.precision import PrecisionRequest, PrecisionView, snowball_config, stack_schema
from ..experiments.lessons.softmax import SoftmaxRequest
from ..experiments.lr_warmup import RecordedRequest
from ..jsonsafe import StrictJSONResponse
from ..pages.registry import url_state_keys
from ..services.answers import answer
from ..services.compute import ComputePool
from .body import json_body
from .deps import PoolDep
from .responses import (
    BUSY,
    COMPUTING,
    QUERY_ERRORS,
    BatchDependenceAnswer,
    ChainAnswer,
    LayerNormAnswer,
    NormSpeedAnswer,
    PrecisionAnswer,
    RecordedAnswer,
    SoftmaxAnswer,
    json_route,
)

router = APIRouter(tags=["lessons"])
M = TypeVar("M", bound=BaseModel)


def _query_doc(*schemas: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI query parameters from request-model properties."""
    keep = ("type", "enum", "default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    return {
        "parameters": [
            {
                "name": name,
                "in": "query",
                "required": False,
                "description": prop.get("description", ""),
                "schema": {k: prop[k] for k in keep if k in prop},
            }
            for schema in schemas
            for name, prop in schema.items()
        ]
    }


@router.get(
    "/api/chain",
    **json_route(
        ChainAnswer, QUERY_ERRORS, BUSY, openapi_extra=_query_doc(ChainRequest.model_json_schema()["properties"])
    ),
)
async def chain(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """Cumulative products g^l and (1+g)^l for l = 1..depth, e.g. ?derivative=0.9&depth=96."""
    req = parse(ChainRequest, _query(request), from_strings=True)
    return await _answer(pool, "chain", req)


@router.post("/api/layernorm", **json_route(LayerNormAnswer, COMPUTING, body=LayerNormRequest))
async def layernorm(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """LayerNorm or RMSNorm of `x`, step by step, checked against torch."""
    req = await json_body(request, LayerNormRequest)
    return await _answer(pool, "layernorm", req)


@router.post("/api/softmax", **json_route(SoftmaxAnswer, COMPUTING, body=SoftmaxRequest))
async def softmax(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """softmax(scale·logits): probabilities, entropy and the Jacobian's spectral norm (optionally per scale)."""
    req = await json_body(request, SoftmaxRequest)
    return await _answer(pool, "softmax", req)


@router.get(
    "/api/precision",
    **json_route(
        PrecisionAnswer,
        QUERY_ERRORS,
        BUSY,
        openapi_extra=_query_doc(PrecisionRequest.model_json_schema()["properties"], stack_schema()),
    ),
)
async def precision(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """Format limits and a + b per format (?big=&small=), plus where a float16 stack overflows
    (any TraceConfig field as a query key, e.g. ?depth=64&residual_scale=1.1; dtype is always float16)."""
    query = _query(request)
    numbers = {k: query.pop(k) for k in list(query) if k in PrecisionRequest.model_fields}
    req = parse(PrecisionRequest, numbers, from_strings=True)
    if "dtype" in query:
        raise FieldError("dtype", "the overflow lesson always traces the stack in float16", "omit dtype (float16)")
    view = PrecisionView(numbers=req, stack=_stack_config(query))
    # Its two traces have /api/trace's keys: a stack traced here is a cache hit in the explorer and the other way round.
    return await _answer(pool, "precision", view)


@router.post("/api/batch_dependence", **json_route(BatchDependenceAnswer, COMPUTING, body=BatchDependenceRequest))
async def batch_dependence(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """How much one fixed sequence's normalized output changes when its batch mates are replaced, train vs eval
    mode (BatchNorm), and what padding does to BatchNorm's statistics."""
    req = await json_body(request, BatchDependenceRequest)
    return await _answer(pool, "batch_dependence", req)


@router.get("/api/norm_speed", **json_route(NormSpeedAnswer, BUSY))
async def norm_speed(pool: PoolDep) -> StrictJSONResponse:
    """LayerNorm vs RMSNorm, forward + backward with torch's own ops, timed on this server (about 2 s). Measured
    at most once an hour: later calls in that hour answer from the cache, and a busy moment is not kept for good."""
    return await _answer(pool, "norm_speed", NormSpeedRequest())


@router.get(
    "/api/recorded",
    **json_route(
        RecordedAnswer, QUERY_ERRORS, BUSY, openapi_extra=_query_doc(RecordedRequest.model_json_schema()["properties"])
    ),
)
async def recorded(request: Request, pool: PoolDep) -> StrictJSONResponse:
    """A result too slow for a request, recorded by a development tool into the package's data, as recorded (with
    its command, versions, seeds and date; `recorded: true`), e.g. ?name=lr_warmup (tools/lr_warmup_grid.py)."""
    return await _answer(pool, "recorded", parse(RecordedRequest, _query(request), from_strings=True))


async def _answer(pool: ComputePool, name: str, req: BaseModel) -> StrictJSONResponse:
    result, source = await answer(pool, name, req)
    return StrictJSONResponse({**result, "cached": source != "computed"})


def parse(model: type[M], data: Any, from_strings: bool = False) -> M:
    """Validate, or raise a 4xx naming the first bad field and the range this lesson allows."""
    try:
        return model.model_validate_strings(data) if from_strings else model.model_validate(data)
    except ValidationError as exc:
        raw = list(exc.errors())
        first = validation_errors(raw[:1])[0]
        leaf = first["field"].split(".")[0]
        explicit = " | allowed: " in str(raw[0].get("msg", ""))  # a model validator already named the range
        allowed = (
            first["allowed"]
            if explicit
            else (field_bounds(leaf, model) or "known fields: " + ", ".join(model.model_fields))
        )
        raise FieldError(first["field"], first["message"], allowed) from None


def _stack_config(query: dict[str, str]) -> TraceConfig:
    try:
        return snowball_config(query)
    except ValidationError as exc:
        first = validation_errors(list(exc.errors())[:1], TraceConfig)[0]
        raise FieldError(first["field"], first["message"], first["allowed"]) from None


def _query(request: Request) -> dict[str, str]:
    ignored = url_state_keys()
    return {k: v for k, v in request.query_params.items() if k not in ignored}
