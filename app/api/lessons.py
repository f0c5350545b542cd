"""The lesson endpoints: GET /api/chain, POST /api/layernorm, POST /api/softmax, GET /api/precision,
POST /api/batch_dependence, GET /api/norm_speed.

Thin: validate against the lesson's request model, compute off the event loop (cached), answer strict JSON.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel, ValidationError

from ..config import TraceConfig, field_bounds
from ..errors import FieldError, validation_errors
from ..experiments.lessons import norm_speed as norm_speed_lesson
from ..experiments.lessons.batch import BatchDependenceRequest, batch_dependence_lesson
from ..experiments.lessons.chain import ChainRequest, chain_lesson
from ..experiments.lessons.layernorm import LayerNormRequest, layernorm_lesson
from ..experiments.lessons.precision import PrecisionRequest, precision_lesson, snowball_config, stack_schema
from ..experiments.lessons.softmax import SoftmaxRequest, softmax_lesson
from ..jsonsafe import StrictJSONResponse
from ..services.compute import get_pool
from .body import json_body

router = APIRouter(tags=["lessons"])

PAGE_KEYS = ("lang", "hide", "theme", "format", "embed")  # URL-state keys of the pages, not inputs


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI for a JSON body validated by hand (so errors name the lesson's own ranges)."""
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": model.model_json_schema()}}}}


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
    response_class=StrictJSONResponse,
    openapi_extra=_query_doc(ChainRequest.model_json_schema()["properties"]),
)
async def chain(request: Request) -> StrictJSONResponse:
    """Cumulative products g^l and (1+g)^l for l = 1..depth, e.g. ?derivative=0.9&depth=96."""
    req = parse(ChainRequest, _query(request), from_strings=True)
    return await _answer("chain", req, chain_lesson)


@router.post("/api/layernorm", response_class=StrictJSONResponse, openapi_extra=_body_doc(LayerNormRequest))
async def layernorm(request: Request) -> StrictJSONResponse:
    """LayerNorm or RMSNorm of `x`, step by step, checked against torch."""
    req = await json_body(request, LayerNormRequest)
    return await _answer("layernorm", req, layernorm_lesson)


@router.post("/api/softmax", response_class=StrictJSONResponse, openapi_extra=_body_doc(SoftmaxRequest))
async def softmax(request: Request) -> StrictJSONResponse:
    """softmax(scale·logits): probabilities, entropy and the Jacobian's spectral norm (optionally per scale)."""
    req = await json_body(request, SoftmaxRequest)
    return await _answer("softmax", req, softmax_lesson)


@router.get(
    "/api/precision",
    response_class=StrictJSONResponse,
    openapi_extra=_query_doc(PrecisionRequest.model_json_schema()["properties"], stack_schema()),
)
async def precision(request: Request) -> StrictJSONResponse:
    """Format limits and a + b per format (?big=&small=), plus where a float16 stack overflows
    (any TraceConfig field as a query key, e.g. ?depth=64&residual_scale=1.1; dtype is always float16)."""
    query = _query(request)
    numbers = {k: query.pop(k) for k in list(query) if k in PrecisionRequest.model_fields}
    req = parse(PrecisionRequest, numbers, from_strings=True)
    if "dtype" in query:
        raise FieldError("dtype", "the overflow lesson always traces the stack in float16", "omit dtype (float16)")
    cfg16 = _stack_config(query)
    cfg32 = cfg16.model_copy(update={"dtype": "float32"})
    pool = get_pool()
    # Same keys as /api/trace: a stack traced here is a cache hit in the explorer and the other way round.
    (trace16, source16), (trace32, source32) = await pool.trace(cfg16), await pool.trace(cfg32)
    return StrictJSONResponse(
        {**precision_lesson(req, trace16, trace32), "cached": source16 != "computed" and source32 != "computed"}
    )


@router.post(
    "/api/batch_dependence", response_class=StrictJSONResponse, openapi_extra=_body_doc(BatchDependenceRequest)
)
async def batch_dependence(request: Request) -> StrictJSONResponse:
    """How much one fixed sequence's normalized output changes when its batch mates are replaced, train vs eval
    mode (BatchNorm), and what padding does to BatchNorm's statistics."""
    req = await json_body(request, BatchDependenceRequest)
    return await _answer("batch_dependence", req, batch_dependence_lesson)


@router.get("/api/norm_speed", response_class=StrictJSONResponse)
async def norm_speed() -> StrictJSONResponse:
    """LayerNorm vs RMSNorm, forward + backward with torch's own ops, timed on this server (about 2 s). Measured
    at most once an hour: later calls in that hour answer from the cache, and a busy moment is not kept for good."""
    hour = int(time.time() // 3600)
    # The key names what decides the measurement, so a shorter one (tests) is never served as the page's.
    key = f"lesson:norm_speed:{hour}:{norm_speed_lesson.WIDTHS}:{norm_speed_lesson.BUDGET_S}"
    result, cached = await get_pool().run_cached(key, _timed_norm_speed)
    return StrictJSONResponse({**result, "cached": cached})


def _timed_norm_speed() -> dict[str, Any]:
    return {**norm_speed_lesson.measure_norm_speed(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def lesson_key(name: str, req: BaseModel) -> str:
    """The cache key of a lesson's answer (the warm-up computes the default ones under the same keys)."""
    return f"lesson:{name}:{req.model_dump_json()}"


async def _answer(name: str, req: BaseModel, lesson: Any) -> StrictJSONResponse:
    result, cached = await get_pool().run_cached(lesson_key(name, req), lesson, req)
    return StrictJSONResponse({**result, "cached": cached})


LessonRequest = TypeVar("LessonRequest", bound=BaseModel)


def parse(model: type[LessonRequest], data: Any, from_strings: bool = False) -> LessonRequest:
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


def _stack_config(query: dict[str, str]):
    try:
        return snowball_config(query)
    except ValidationError as exc:
        first = validation_errors(list(exc.errors())[:1], TraceConfig)[0]
        raise FieldError(first["field"], first["message"], first["allowed"]) from None


def _query(request: Request) -> dict[str, str]:
    return {k: v for k, v in request.query_params.items() if k not in PAGE_KEYS}
