"""Answer any request kind of app/experiments/requests.py through the compute pool: what the routes, the offline
deck and the notebook call, so each kind is computed and cached one way only."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..config import TraceConfig
from ..experiments.requests import REQUESTS
from .compute import COMPUTED, get_pool
from .training import recorded_answer


async def answer(name: str, req: BaseModel) -> tuple[Any, str]:
    """(answer, source): source is where it came from (computed, coalesced, memory, disk, redis; a training request:
    recorded, or pending when the server has not trained it); a composite's is `computed` when any part was."""
    kind, pool = REQUESTS[name], get_pool()
    if name == "train":  # the run this server recorded, or nothing yet: training happens only in /api/train's streams
        return await recorded_answer(req)  # type: ignore[arg-type]
    if kind.parts is not None:
        if kind.combine is None:
            raise ValueError(f"request kind {name} is streamed part by part by its route")
        answered = [await answer(part, sub) for part, sub in kind.parts(req)]
        sources = [source for _, source in answered]
        source = COMPUTED if COMPUTED in sources else sources[0]
        return kind.combine(req, *(result for result, _ in answered)), source
    if isinstance(req, TraceConfig):  # a model run: in a compute process when the server has them
        return await pool.trace(req)
    if kind.compute is None:
        raise ValueError(f"request kind {name} has no function")
    return await pool.run_sourced(kind.cache_key(req), kind.compute, req)
