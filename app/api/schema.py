"""GET /api/schema and /api/presets: the request model and the named presets, for pages and other tools."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ..config import MAX_DEPTH, TraceConfig, presets_payload
from ..jsonsafe import StrictJSONResponse
from .responses import QUERY_ERRORS, PresetsAnswer, json_route

router = APIRouter(tags=["config"])


@lru_cache(maxsize=1)
def _schema_bytes() -> bytes:
    """Built once per process: pydantic takes ~28 ms of CPU for it, on the event loop, for every page load."""
    return json.dumps(TraceConfig.model_json_schema(), ensure_ascii=False, allow_nan=False).encode()


JSON_SCHEMA = {"type": "object", "description": "a JSON Schema (draft 2020-12): TraceConfig's fields"}


@router.get(
    "/api/schema", response_class=Response, responses={200: {"content": {"application/json": {"schema": JSON_SCHEMA}}}}
)
async def schema() -> Response:
    """The JSON schema of TraceConfig: defaults, bounds, enums and bilingual labels of every field."""
    return Response(_schema_bytes(), media_type="application/json")


@router.get("/api/presets", **json_route(PresetsAnswer, QUERY_ERRORS))
async def presets(
    depth: Annotated[
        int, Query(ge=1, le=MAX_DEPTH, description="resolve depth-dependent settings (DeepNorm's α) for this depth")
    ] = 12,
) -> StrictJSONResponse:
    """The named presets resolved for `depth`, in English and Chinese."""
    return StrictJSONResponse({"depth": depth, "presets": presets_payload(TraceConfig(depth=depth))})
