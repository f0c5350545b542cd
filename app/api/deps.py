"""What routes receive through FastAPI's dependencies rather than reach for themselves.

`PoolDep` is this worker's compute pool (app/services/compute.py): a route declares `pool: PoolDep` and hands it to
the services it calls, so a test swaps it with `app.dependency_overrides[compute_pool]`, not by patching a global.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from ..services.compute import ComputePool, get_pool


async def compute_pool() -> ComputePool:
    """The worker's pool (async: a plain function would be called in a thread for every request)."""
    return get_pool()


PoolDep = Annotated[ComputePool, Depends(compute_pool)]
