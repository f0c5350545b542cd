"""Where model runs happen: off the event loop, a bounded number at once, cached and coalesced.

A whole room loading the same default chart costs one computation: the first request computes, the others
await the same task (in another worker process of the same server: they wait for its computing marker on the
shared disk to go, then read its result), and later ones are answered by the shared cache (app/services/cache.py)
- of this process, of this server's disk, or of the deployment's Redis. Every answer says where it came from
(`computed`, `coalesced`, `memory`, `disk`, `redis`), so a client or a test can tell.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio.to_thread

from ..config import TraceConfig
from ..errors import Busy
from ..experiments.trace import trace_and_model
from ..settings import get_settings
from .cache import ResultCache
from .processes import ProcessRunner, answer_first, lower_this_thread

COMPUTED, COALESCED = "computed", "coalesced"
CLAIM_POLL_S = 0.05  # how often a worker checks whether another worker's computation of the same request ended


class ComputePool:
    """A per-process pool of compute slots in front of a ResultCache."""

    def __init__(
        self,
        slots: int,
        cache_size: int,
        queue_timeout_s: float,
        threads: int,
        max_waiting: int | None = None,
        cache: ResultCache | None = None,
        processes: ProcessRunner | None = None,
        nice: int = 0,
    ) -> None:
        self.slots = slots
        self.processes = processes
        # Model runs in threads (RESNORM_COMPUTE_PROCESSES=0) get threads of their own at a lower priority, so the
        # event loop's thread, which answers pages, is scheduled first on a busy machine.
        self._threads = ThreadPoolExecutor(
            slots, thread_name_prefix="compute", initializer=lower_this_thread, initargs=(nice,)
        )
        self.queue_timeout_s = queue_timeout_s
        self.threads = threads
        self.cache = cache if cache is not None else ResultCache(None, 0, memory_items=cache_size, namespace="")
        self._semaphores: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._idle: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        self._inflight: dict[str, asyncio.Future] = {}  # key -> the task computing it
        self._waiters: dict[str, int] = {}  # key -> how many callers await it
        self._storing: set[asyncio.Future] = set()  # writes to disk and Redis still under way
        self.max_waiting = max_waiting if max_waiting is not None else 8 * slots
        # a computing marker outlives any computation the queue timeout and the budget allow (a dead holder's is
        # taken over at once: see ResultCache.claim_computation)
        self.claim_s = 4 * queue_timeout_s + 120
        self.computed = 0
        self.coalesced = 0
        self.last_busy = -math.inf  # time.monotonic() when a job last took or left a slot (the warm-up waits for quiet)
        self.active = 0
        self.waiting = 0

    def _sem(self) -> asyncio.Semaphore:
        """One semaphore per event loop (a server has one loop; tests may start several)."""
        loop = asyncio.get_running_loop()
        if loop not in self._semaphores:
            self._semaphores[loop] = asyncio.Semaphore(self.slots)
            self._idle[loop] = asyncio.Event()
            self._idle[loop].set()
        return self._semaphores[loop]

    def idle_event(self) -> asyncio.Event:
        """Set while no slot is taken and nobody waits: the warm-up starts its next item only then."""
        self._sem()
        return self._idle[asyncio.get_running_loop()]

    def cached(self, key: str) -> Any | None:
        """This process's memory copy only (no I/O: safe on the event loop)."""
        return self.cache.from_memory(key)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run fn(*args) in a worker thread once a slot is free. Busy (503) at once when the queue is full,
        or after the queue timeout. The slot is freed when the thread ends, not when the caller leaves."""
        await self._acquire()
        loop = asyncio.get_running_loop()
        return await self._start(lambda: loop.run_in_executor(self._threads, _with_threads, self.threads, fn, *args))

    async def run_model(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Like run, but in a compute process when there are any (fn and its arguments must pickle)."""
        return await self._run_in(self.processes, fn, *args)

    async def run_real(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Like run, but where the pretrained models are loaded (the server's models process, real_client.py),
        holding a slot of this worker: a whole job on a loaded model beside the sentence queue (fn and its
        arguments must pickle)."""
        from .real_client import get_models

        models = get_models()
        await self._acquire()
        return await self._start(lambda: models.run(fn, *args))

    async def _run_in(self, runner: ProcessRunner | None, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) in `runner`'s processes holding a slot, or in a thread (run) when there is no runner."""
        if runner is None:
            return await self.run(fn, *args)
        await self._acquire()
        return await self._start(lambda: runner.run(self.threads, fn, *args))

    async def run_unslotted(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) in one of this process's lowered-priority compute threads, without a slot: something short
        that must not queue behind model runs (the token counter of the pretrained models)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, _with_threads, self.threads, fn, *args)

    async def _acquire(self) -> None:
        sem = self._sem()
        if sem.locked():
            await self._queue_for(sem)
        else:
            await sem.acquire()  # a free slot: returns at once

    async def _start(self, launch: Callable[[], Any]) -> Any:
        """Run the awaitable made by `launch` holding the slot already acquired; free it when the job ends."""
        sem = self._sem()
        self.active += 1
        self.last_busy = time.monotonic()
        idle = self._idle[asyncio.get_running_loop()]
        idle.clear()
        job = asyncio.ensure_future(launch())
        job.add_done_callback(lambda done: self._release(sem, idle, done))
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

    def _release(self, sem: asyncio.Semaphore, idle: asyncio.Event, job: asyncio.Future) -> None:
        self.active -= 1
        self.last_busy = time.monotonic()
        sem.release()
        if self.active == 0 and self.waiting == 0:
            idle.set()
        if not job.cancelled():
            job.exception()  # retrieved here; a caller still waiting re-raises it itself

    async def trace(self, cfg: TraceConfig) -> tuple[dict[str, Any], str]:
        """(the trace of cfg, where it came from), as POST /api/trace answers it: cached and coalesced under cfg's
        key, computed in a compute process when the server has them, which sends it before freeing the model."""
        return await self.run_sourced(cfg.cache_key(), answer_first, trace_and_model, cfg, runner=self.run_model)

    async def run_sourced(
        self,
        key: str,
        fn: Callable[..., Any],
        *args: Any,
        runner: Callable[..., Any] | None = None,
        leave_cancels: bool = False,
    ) -> tuple[Any, str]:
        """(result, where it came from). Concurrent identical keys share one lookup-or-computation, which is its
        own task: a caller that leaves (a closed tab, a cancelled sweep) neither cancels it nor wastes it. With
        `leave_cancels`, the last caller to leave cancels it (a queued sentence nobody waits for is dropped)."""
        hit = self.cached(key)
        if hit is not None:
            return hit, "memory"
        if key in self._inflight:
            self.coalesced += 1
            result, _ = await self._wait_for(key, self._inflight[key], leave_cancels)
            return result, COALESCED
        task = asyncio.ensure_future(self._lookup_or_compute(key, fn, args, runner or self.run))
        self._inflight[key] = task
        task.add_done_callback(lambda done: self._settle(key, done))
        return await self._wait_for(key, task, leave_cancels)

    async def _wait_for(self, key: str, task: asyncio.Future, leave_cancels: bool) -> Any:
        self._waiters[key] = self._waiters.get(key, 0) + 1
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if leave_cancels and self._waiters[key] == 1 and not task.done():
                task.cancel()
            raise
        finally:
            self._waiters[key] -= 1
            if not self._waiters[key]:
                del self._waiters[key]

    async def _lookup_or_compute(self, key: str, fn: Callable[..., Any], args: tuple, runner) -> tuple[Any, str]:
        found, claimed = await anyio.to_thread.run_sync(self._find_or_claim, key)  # one trip to a thread
        if found is not None:
            return found
        if not claimed:  # another worker process of this server computes it: its result lands on the shared disk
            found = await self._from_another_worker(key)
            if found is not None:
                self.coalesced += 1
                return found[0], COALESCED
        try:
            result = await runner(fn, *args)
        except BaseException:
            if claimed:
                self._in_background(self.cache.release_computation, key)
            raise
        self.computed += 1
        # This worker has it at once; the disk and Redis copies are written while the answer already travels,
        # and the computing marker goes only once the disk copy is there, so a waiting worker finds it.
        self.cache.memory.set(key, result)
        self._in_background(self._store, key, result, claimed)
        return result, COMPUTED

    def computing(self, key: str) -> bool:
        """Whether a caller of this process is computing `key` now (run_sourced)."""
        return key in self._inflight

    async def run_unshared(self, key: str, fn: Callable[..., Any], *args: Any, runner: Callable[..., Any]) -> Any:
        """Compute `key` with `runner` and store it, without letting other callers join the computation: the
        warm-up's. Its run is at the lowest priority; a student or a lecturer asking for the same key meanwhile
        computes it at full priority rather than wait behind a run that yields to every other."""
        result = await runner(fn, *args)
        self.cache.memory.set(key, result)
        self._in_background(self._store, key, result, False)
        return result

    def _find_or_claim(self, key: str) -> tuple[tuple[Any, str] | None, bool]:
        """(the cached result and its layer, or None; whether this process took the computing marker)."""
        found = self.cache.get(key)
        if found is not None:
            return found, False
        return None, self.cache.claim_computation(key, self.claim_s)

    async def _from_another_worker(self, key: str) -> tuple[Any, str] | None:
        """Wait while another live worker process computes `key`, then read its result from the shared disk;
        None if it failed, died or gave up (the caller then computes)."""
        while await anyio.to_thread.run_sync(self.cache.computing_elsewhere, key):
            await asyncio.sleep(CLAIM_POLL_S)
        return await anyio.to_thread.run_sync(self.cache.get, key)

    def _store(self, key: str, result: Any, claimed: bool) -> None:
        try:
            self.cache.set(key, result)
        finally:
            if claimed:
                self.cache.release_computation(key)

    def _in_background(self, fn: Callable[..., Any], *args: Any) -> None:
        """A blocking cache write in a thread, awaited by flush() before the process exits."""
        task = asyncio.ensure_future(anyio.to_thread.run_sync(fn, *args))
        self._storing.add(task)
        task.add_done_callback(self._storing.discard)

    async def flush(self) -> None:
        """Wait until every result computed so far is on disk and in Redis (before a process exits)."""
        while self._storing:
            await asyncio.gather(*list(self._storing), return_exceptions=True)

    def _settle(self, key: str, task: asyncio.Future) -> None:
        self._inflight.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved here; every waiter re-raises it itself

    def stats(self) -> dict[str, Any]:
        return {
            "slots": self.slots,
            "active": self.active,
            "waiting": self.waiting,
            "computed": self.computed,
            "coalesced": self.coalesced,
            "torch_threads": self.threads,
            "processes": self.processes.processes if self.processes else 0,
            "cache": self.cache.stats(),
        }


def _with_threads(threads: int, fn: Callable[..., Any], *args: Any) -> Any:
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return fn(*args)


_POOL: ComputePool | None = None
_CACHE: ResultCache | None = None


def get_cache() -> ResultCache:
    """This process's view of the deployment's cache (disk folder and Redis from the settings)."""
    global _CACHE
    if _CACHE is None:
        s = get_settings()
        _CACHE = ResultCache(
            s.resolved_cache_dir(), s.cache_size_mb * 2**20, memory_items=s.cache_size, redis_url=s.redis_url
        )
    return _CACHE


def get_pool() -> ComputePool:
    global _POOL
    if _POOL is None:
        s = get_settings()
        processes = ProcessRunner(s.compute_slots, nice=s.compute_nice) if s.compute_processes else None
        _POOL = ComputePool(
            s.compute_slots,
            s.cache_size,
            s.queue_timeout_s,
            s.threads_per_run(),
            cache=get_cache(),
            processes=processes,
            nice=s.compute_nice,
        )
    return _POOL
