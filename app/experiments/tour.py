"""The home page's tour as one request: Post-LN against Pre-LN at one depth, everything else the request model's
default, so the norm's position is the only difference (two cached /api/trace requests). Chart: app/figures/tour.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config import TraceConfig

POSITIONS = ("post", "pre")


class TourRequest(BaseModel):
    """POST /api/figure/tour."""

    model_config = ConfigDict(extra="forbid")
    depth: int = Field(24, ge=1, le=96, description="blocks of both models")


def parts(req: TourRequest) -> list[tuple[str, BaseModel]]:
    return [("trace", TraceConfig(depth=req.depth, norm_position=p)) for p in POSITIONS]


def combine(req: TourRequest, *traces: dict[str, Any]) -> dict[str, Any]:
    return {"depth": req.depth, "positions": list(POSITIONS), "traces": list(traces)}
