"""GET /api/schema and /api/presets: the request model and the named presets, for pages and other tools."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..config import MAX_DEPTH, TraceConfig, presets_payload

router = APIRouter(tags=["config"])


@router.get("/api/schema")
async def schema() -> dict:
    """The JSON schema of TraceConfig: defaults, bounds, enums and bilingual labels of every field."""
    return TraceConfig.model_json_schema()


@router.get("/api/presets")
async def presets(
    depth: Annotated[
        int, Query(ge=1, le=MAX_DEPTH, description="resolve depth-dependent settings (DeepNorm's α) for this depth")
    ] = 12,
) -> dict:
    base = TraceConfig(depth=depth)
    return {"depth": depth, "presets": presets_payload(base)}
