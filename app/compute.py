"""Where model runs happen: off the event loop, a bounded number at once, cached and coalesced.

A whole room loading the same default chart costs one computation: the first request computes,
the others await the same future, and later ones hit the LRU cache.
"""
from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any, Callable

import anyio.to_thread

from app.errors import Busy
from app.settings import get_settings


class ComputePool:
    """A per-process pool of compute slots with an LRU cache keyed by the request."""

    def __init__(self, slots: int, cache_size: int, queue_timeout_s: float, threads: int) -> None:
        self.slots = slots
        self.cache_size = cache_size
        self.queue_timeout_s = queue_timeout_s
        self.threads = threads
        self._semaphores: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._inflight: dict[str, asyncio.Future] = {}
        self._lock = threading.Lock()
        self.computed = 0
        self.hits = 0
        self.active = 0

    def _sem(self) -> asyncio.Semaphore:
        """One semaphore per event loop (a server has one loop; tests may start several)."""
        loop = asyncio.get_running_loop()
        if loop not in self._semaphores:
            self._semaphores[loop] = asyncio.Semaphore(self.slots)
        return self._semaphores[loop]

    def cached(self, key: str) -> Any | None:
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                self.hits += 1
                return self._cache[key]
        return None

    def store(self, key: str, value: Any) -> None:
        with self._lock:
            self._cache[key] = value
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run fn(*args) in a worker thread once a slot is free; 503 (Busy) after the queue timeout."""
        sem = self._sem()
        try:
            await asyncio.wait_for(sem.acquire(), timeout=self.queue_timeout_s)
        except asyncio.TimeoutError:
            raise Busy(retry_after=max(1, int(self.queue_timeout_s // 2))) from None
        self.active += 1
        try:
            return await anyio.to_thread.run_sync(_with_threads, self.threads, fn, *args)
        finally:
            self.active -= 1
            sem.release()

    async def run_cached(self, key: str, fn: Callable[..., Any], *args: Any) -> tuple[Any, bool]:
        """(result, was_cached). Concurrent identical keys share one computation."""
        hit = self.cached(key)
        if hit is not None:
            return hit, True
        if key in self._inflight:
            return await asyncio.shield(self._inflight[key]), True
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self.run(fn, *args)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            self._inflight.pop(key, None)
        self.computed += 1
        self.store(key, result)
        future.set_result(result)
        return result, False

    def stats(self) -> dict[str, Any]:
        return {"slots": self.slots, "active": self.active, "cached": len(self._cache),
                "computed": self.computed, "cache_hits": self.hits, "torch_threads": self.threads}


def _with_threads(threads: int, fn: Callable[..., Any], *args: Any) -> Any:
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return fn(*args)


_POOL: ComputePool | None = None


def get_pool() -> ComputePool:
    global _POOL
    if _POOL is None:
        s = get_settings()
        _POOL = ComputePool(s.compute_slots, s.cache_size, s.queue_timeout_s, s.threads_per_run())
    return _POOL
