"""Answer any request kind of app/experiments/requests.py through the compute pool the caller hands in: what the
routes and the deck (live and offline) call, so each kind is computed and cached one way only (the notebook answers
the same request table in its own process, uncached: requests.answer_in_process)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..config import TraceConfig
from ..experiments.requests import REQUESTS
from .compute import COMPUTED, ComputePool
from .training import recorded_answer


async def answer(pool: ComputePool, name: str, req: BaseModel) -> tuple[Any, str]:
    """(answer, source): source is where it came from (computed, coalesced, memory, disk, redis; a training request:
    recorded, or pending when the server has not trained it); a composite's is `computed` when any part was."""
    kind = REQUESTS[name]
    if name == "train":  # the run this server recorded, or nothing yet: training happens only in /api/train's streams
        return await recorded_answer(req)  # type: ignore[arg-type]
    if kind.parts is not None:
        if kind.combine is None:
            raise ValueError(f"request kind {name} is streamed part by part by its route")
        answered = [await answer(pool, part, sub) for part, sub in kind.parts(req)]
        sources = [source for _, source in answered]
        source = COMPUTED if COMPUTED in sources else sources[0]
        return kind.combine(req, *(result for result, _ in answered)), source
    if isinstance(req, TraceConfig):  # a model run: in a compute process when the server has them
        return await pool.trace(req)
    if kind.compute is None:
        raise ValueError(f"request kind {name} has no function")
    return await pool.run_sourced(kind.cache_key(req), kind.compute, req)
