"""Model runs in child processes: building a model is Python (it holds the GIL), so two threads of one process
cannot use two cores; two processes can. Measured on 2 cores (depths 1..96, sequential sweep = 1.00):
two threads of one torch thread each 0.82, two processes of one thread each 0.51.

Each child is spawned (never forked: a fork of a process whose OpenMP pool is running can deadlock), imports
torch once, and takes a torch thread count with every job: all of this worker's cores when the job runs
alone, an equal share when several run at once.
"""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

logger = logging.getLogger(__name__)


def _child_start(nice: int) -> None:
    import os

    if nice and hasattr(os, "nice"):
        os.nice(nice)  # the warm-up's child: the OS runs it only when user requests leave a core free
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import app.experiments.trace  # noqa: F401  (the first job should not pay the imports)


def _job(threads: int, fn: Callable[..., Any], args: tuple) -> Any:
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return fn(*args)


def _ready() -> bool:
    return True


class ProcessRunner:
    """A pool of `processes` spawned children; `run` is awaitable and survives a child that died."""

    def __init__(self, processes: int, nice: int = 0) -> None:
        self.processes = processes
        self.nice = nice
        self._executor: ProcessPoolExecutor | None = None
        self.restarts = 0

    def start(self) -> None:
        """Spawn every child now (each imports torch, ~3 s), so the first sweep does not wait for them."""
        executor = self._get()
        for _ in range(self.processes):
            executor.submit(_ready)

    def _get(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_child_start, initargs=(self.nice,))
        return self._executor

    async def run(self, threads: int, fn: Callable[..., Any], *args: Any) -> Any:
        for attempt in (1, 2):
            try:
                return await asyncio.wrap_future(self._get().submit(_job, threads, fn, args))
            except BrokenProcessPool:  # a child was killed (out of memory?): start a fresh pool, try once more
                logger.warning("a compute process died; restarting the pool (attempt %d)", attempt)
                self._replace()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _replace(self) -> None:
        broken, self._executor = self._executor, None
        self.restarts += 1
        if broken is not None:
            broken.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        """Queued jobs are dropped; running ones (a few seconds at most) finish, so the children exit cleanly."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
