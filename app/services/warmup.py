"""Warm from the first click: every page's default view computed in the background once the server answers.

What to warm is the caller's list: app.pages.warm_computations(), derived from the page registry (each page's
`default_requests`, keyed by the request table), so a running server and `resnorm-explorer --warm-only` warm the
same set. Lowest priority: the next item starts only when no compute slot is taken, nobody queues and no job took or left a
slot for a second (QUIET_S), it takes no
slot itself (a user's request never waits behind it), and it runs in one child process at the OS's lowest
priority (nice 19), one torch thread; nobody joins its computation (a request for the same key meanwhile is
computed at full priority, see ComputePool.run_unshared). Worker processes of one server share the work through claims in the
disk cache. `--warm-only` computes them all at once (the Docker image does this at build time and ships the warm
cache). RESNORM_WARM=0 turns the background warm-up off.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..experiments.requests import Computation
from .compute import ComputePool
from .processes import ProcessRunner

logger = logging.getLogger(__name__)

CLAIM_S = 300.0  # another worker computes a claimed item; after this long without a result, we do
RECHECK_S = 1.0  # pause between passes over items other workers had claimed
QUIET_S = 1.0  # no job took or left a compute slot for this long: nobody is using the server right now


@dataclass
class WarmProgress:
    done: int = 0
    total: int = 0
    failed: int = 0
    running: bool = False

    def payload(self, enabled: bool) -> dict[str, Any]:
        return {
            "enabled": enabled,
            "done": self.done,
            "total": self.total,
            "failed": self.failed,
            "running": self.running,
        }


PROGRESS = WarmProgress()


async def warm_in_background(pool: ComputePool, items: list[Computation], use_processes: bool) -> None:
    """One pass over every default view at the lowest priority, then a pass over those others had claimed."""
    PROGRESS.total, PROGRESS.running = len(items), True
    runner = ProcessRunner(1, nice=19) if use_processes else None
    run = (lambda fn, *args: runner.run(1, fn, *args)) if runner else None
    try:
        pending = items
        while pending:
            pending = [item for item in pending if not await _warm_one(pool, item, run)]
            if pending:
                await asyncio.sleep(RECHECK_S)
    finally:
        PROGRESS.running = False
        if runner is not None:
            runner.shutdown()


async def _warm_one(pool: ComputePool, item: Computation, run) -> bool:
    """True when the item is done (cached now, or failed for good); False if another worker is computing it."""
    await _wait_until_idle(pool)
    try:
        if pool.computing(item.key):
            pass  # a user's request computes it now: done
        elif pool.cached(item.key) is None and not await asyncio.to_thread(pool.cache.contains, item.key):
            if not await asyncio.to_thread(pool.cache.claim, item.key, CLAIM_S):
                return False
            await pool.run_unshared(item.key, item.fn, *item.args, runner=run or _unslotted_thread)
    except Exception:  # a default view that fails is a bug to log, not a reason to stop warming the others
        logger.exception("warm-up of %s failed", item.label or item.key)
        PROGRESS.failed += 1
    PROGRESS.done += 1
    return True


async def _wait_until_idle(pool: ComputePool) -> None:
    """Until no slot is taken, nobody queues, and no job took or left a slot for QUIET_S: a deck drawing its slides, or a
    student clicking, leaves gaps of a few milliseconds between requests, and an item started there (its result
    stored and decoded on this worker's threads, its process on a core) slowed a cold deck by 3 s."""
    idle = pool.idle_event()
    while True:
        await idle.wait()
        await asyncio.sleep(0)  # requests that arrived with the same wake-up go first
        quiet = QUIET_S - (time.monotonic() - pool.last_busy)
        if quiet > 0:
            await asyncio.sleep(quiet)
            continue
        if idle.is_set():
            return


async def _unslotted_thread(fn: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.to_thread(fn, *args)


async def warm_all(pool: ComputePool, items: list[Computation], report: Callable[[str], None] = print) -> WarmProgress:
    """Everything at full speed, for `--warm-only` (e.g. while building the Docker image)."""
    progress = WarmProgress(total=len(items), running=True)
    turns = asyncio.Semaphore(pool.slots)  # no queue: the pool would answer Busy past 8 waiters a slot

    async def one(item: Computation) -> None:
        try:
            async with turns:
                _, source = await pool.run_sourced(item.key, item.fn, *item.args, runner=pool.run_model)
        except Exception as exc:
            progress.failed += 1
            source = f"FAILED {type(exc).__name__}: {exc}"
        progress.done += 1
        report(f"[{progress.done}/{progress.total}] {item.label or item.key[:60]}: {source}")

    await asyncio.gather(*(one(item) for item in items))
    await pool.flush()  # every result on disk before the command exits
    progress.running = False
    return progress


def warm_command(items: list[Computation]) -> int:
    """`--warm-only`: compute every default view into the configured cache, using every compute slot."""
    from ..settings import get_settings
    from .compute import get_pool

    pool, started = get_pool(), time.perf_counter()
    try:
        progress = asyncio.run(warm_all(pool, items))
    finally:
        if pool.processes is not None:
            pool.processes.shutdown()
    print(
        f"warm: {progress.done - progress.failed} of {progress.total} default views in "
        f"{time.perf_counter() - started:.1f} s, cache {get_settings().resolved_cache_dir()}"
    )
    return 1 if progress.failed else 0
