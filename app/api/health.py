"""GET /api/health: liveness and load, answered without touching a compute slot."""
from __future__ import annotations

from fastapi import APIRouter

from app.compute import get_pool

router = APIRouter(tags=["health"])


@router.get("/api/health")
async def health() -> dict:
    import torch

    return {"status": "ok", "torch": torch.__version__, "compute": get_pool().stats()}
