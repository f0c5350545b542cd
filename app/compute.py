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

    def __init__(self, slots: int, cache_size: int, queue_timeout_s: float, threads: int,
                 max_waiting: int | None = None) -> None:
        self.slots = slots
        self.cache_size = cache_size
        self.queue_timeout_s = queue_timeout_s
        self.threads = threads
        self._semaphores: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._inflight: dict[str, asyncio.Future] = {}  # key -> the task computing it
        self._lock = threading.Lock()
        self.max_waiting = max_waiting if max_waiting is not None else 8 * slots
        self.computed = 0
        self.hits = 0
        self.active = 0
        self.waiting = 0

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
        """Run fn(*args) in a worker thread once a slot is free. Busy (503) at once when the queue is full,
        or after the queue timeout. The slot is freed when the thread ends, not when the caller leaves."""
        sem = self._sem()
        if sem.locked():
            await self._queue_for(sem)
        else:
            await sem.acquire()  # a free slot: returns at once
        self.active += 1
        job = asyncio.ensure_future(anyio.to_thread.run_sync(_with_threads, self.threads, fn, *args))
        job.add_done_callback(lambda done: self._release(sem, done))
        return await asyncio.shield(job)

    async def _queue_for(self, sem: asyncio.Semaphore) -> None:
        retry_after = max(1, int(self.queue_timeout_s // 2))
        if self.waiting >= self.max_waiting:
            raise Busy(retry_after=retry_after)
        self.waiting += 1
        try:
            await asyncio.wait_for(sem.acquire(), timeout=self.queue_timeout_s)
        except asyncio.TimeoutError:
            raise Busy(retry_after=retry_after) from None
        finally:
            self.waiting -= 1

    def _release(self, sem: asyncio.Semaphore, job: asyncio.Future) -> None:
        self.active -= 1
        sem.release()
        if not job.cancelled():
            job.exception()  # retrieved here; a caller still waiting re-raises it itself

    async def run_cached(self, key: str, fn: Callable[..., Any], *args: Any) -> tuple[Any, bool]:
        """(result, was_cached). Concurrent identical keys share one computation, which is its own task:
        a caller that leaves (a closed tab, a cancelled sweep) neither cancels it for the others nor wastes it."""
        hit = self.cached(key)
        if hit is not None:
            return hit, True
        if key in self._inflight:
            return await asyncio.shield(self._inflight[key]), True
        task = asyncio.ensure_future(self._compute(key, fn, *args))
        self._inflight[key] = task
        task.add_done_callback(lambda done: self._settle(key, done))
        return await asyncio.shield(task), False

    async def _compute(self, key: str, fn: Callable[..., Any], *args: Any) -> Any:
        result = await self.run(fn, *args)
        self.computed += 1
        self.store(key, result)
        return result

    def _settle(self, key: str, task: asyncio.Future) -> None:
        self._inflight.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here; every waiter re-raises it itself

    def stats(self) -> dict[str, Any]:
        return {"slots": self.slots, "active": self.active, "waiting": self.waiting, "cached": len(self._cache),
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
