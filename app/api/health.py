"""GET /api/health: liveness, load, cache and warm-up, answered without touching a compute slot."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter

from ..jsonsafe import StrictJSONResponse
from ..services.warmup import PROGRESS
from ..settings import get_settings
from .deps import PoolDep
from .responses import HealthAnswer, json_route

router = APIRouter(tags=["health"])


@router.get("/api/health", **json_route(HealthAnswer))
async def health(pool: PoolDep) -> StrictJSONResponse:
    """`redis` is null without RESNORM_REDIS_URL; with it, `up` says whether Redis answered a ping just now
    (requests are served from the local cache while it is down)."""
    import torch

    compute = await anyio.to_thread.run_sync(pool.stats)  # the disk cache's size is an SQLite query
    redis = await anyio.to_thread.run_sync(pool.cache.redis_status)
    warm = PROGRESS.payload(get_settings().warm)
    return StrictJSONResponse(
        {"status": "ok", "torch": torch.__version__, "compute": compute, "redis": redis, "warm": warm}
    )
