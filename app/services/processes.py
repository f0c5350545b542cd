"""Model runs in child processes: building a model is Python (it holds the GIL), so two threads of one process
cannot use two cores; two processes can. Measured on 2 cores (depths 1..96 traced one after another = 1.00):
two threads of one torch thread each 0.82, two processes of one thread each 0.51.

Each child is spawned (never forked: a fork of a process whose OpenMP pool is running can deadlock), imports
torch once and runs each job with the worker's torch thread count (RESNORM_TORCH_THREADS, by default one per
core per slot). Not more when a job runs alone: on a machine that is busy with anything else, two OpenMP threads
ran a depth-48 trace 8-25x slower than one (each parallel region waits for a thread that is not scheduled).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from typing import Any

logger = logging.getLogger(__name__)


IN_COMPUTE_PROCESS = False  # set by start_child: a uvicorn worker is a spawned process too, but not one of ours


PARENT_POLL_S = 1.0


def _exit_with_parent(parent: int) -> None:
    """A worker killed outright (SIGKILL, out of memory) cannot stop its children: each leaves by itself."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(0)


def start_child(nice: int) -> None:
    """In a spawned child of a worker: leave with the worker, import torch once, freeze the imports' objects and
    lower the priority."""
    global IN_COMPUTE_PROCESS
    IN_COMPUTE_PROCESS = True
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    import torch

    from ..experiments.isolation import SERVER_THREADS, pin_interop_threads

    torch.set_num_threads(SERVER_THREADS)
    pin_interop_threads()
    from ..experiments import trace as _trace  # noqa: F401  (the first job should not pay the imports)

    # The imports leave ~10^5 objects that live as long as the process; without this, every full collection of
    # the cyclic garbage collector scans them all (~75 ms), and building a model allocates enough to start one
    # in about a third of depth-96 traces. Frozen, they are never scanned again (gc.freeze, Python 3.7+).
    gc.collect()
    gc.freeze()
    gc.disable()  # each job ends with one collection, after its answer has been sent (_SentAlone)

    os.chdir(os.path.abspath(os.sep))  # hold no user folder busy (imports are done; sys.path may be relative)
    if nice and hasattr(os, "nice"):
        os.nice(nice)  # below the web process: pages and scripts are answered while every slot computes


def lower_this_thread(nice: int) -> None:
    """Lower the calling thread's scheduling priority by `nice` (Linux only, where each thread has its own nice
    value: setpriority on a thread id, sched(7)); elsewhere a thread id could name another process: do nothing."""
    if nice and sys.platform == "linux":
        with suppress(OSError):
            thread = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + nice))


def start_resource_tracker_outside_cwd() -> None:
    """multiprocessing's resource tracker (started with the first pool) lives until the server has exited:
    start it from the root folder, so it never holds the folder the server was started in (a USB stick, a
    read-only mount) busy. At start-up, before any request or other thread runs (the cwd is the process's: once
    the tracker runs, later calls change nothing)."""
    from multiprocessing import resource_tracker

    if getattr(resource_tracker._resource_tracker, "_fd", None) is not None:  # running already
        return
    here = os.getcwd()
    os.chdir(os.path.abspath(os.sep))
    try:
        resource_tracker.ensure_running()
    finally:
        os.chdir(here)


def _job(threads: int, fn: Callable[..., Any], args: tuple) -> _SentAlone:
    from ..experiments.isolation import as_server  # the settings rx.trace computes under, too

    try:
        with as_server(threads):
            result = fn(*args)
    except BaseException:
        gc.collect()
        raise
    return result if isinstance(result, _SentAlone) else _SentAlone(result, None)


def answer_first(fn: Callable[..., tuple[Any, Any]], *args: Any) -> Any:
    """fn(*args) -> (answer, leftovers). In a compute process only the answer travels back, and the leftovers
    (a model and its recording) are freed after it has been sent: freeing a depth-96 model (~5 ms) then overlaps
    with the server sending the answer. Anywhere else (a worker thread of a server without compute processes, in a
    uvicorn worker or not): the answer itself."""
    answer, leftovers = fn(*args)
    return _SentAlone(answer, leftovers) if IN_COMPUTE_PROCESS else answer


class _SentAlone:
    """A compute process's result: pickles as the answer alone (the server unpickles the plain answer).

    The executor drops a job's result once it has written it to the pipe (concurrent.futures' _process_worker,
    Python 3.10-3.13), which is when this frees the job's leftovers and runs the cyclic garbage collector: the
    children keep the automatic collector off (see start_child), so no collection starts in the middle of a job
    (a depth-96 trace allocates ~10^5 objects: ~40 young collections, ~3 ms) or between its end and its answer
    (with the leftovers still alive, a collection there scanned them: ~4 ms)."""

    def __init__(self, answer: Any, leftovers: Any) -> None:
        self.answer, self.leftovers = answer, leftovers

    def __reduce__(self) -> tuple[Callable[[Any], Any], tuple[Any]]:
        return _itself, (self.answer,)

    def __del__(self) -> None:
        self.answer = self.leftovers = None
        if gc is not None:  # None while the interpreter shuts down
            gc.collect()


def _itself(value: Any) -> Any:
    return value


def _ready() -> bool:
    return True


class ProcessRunner:
    """A pool of `processes` spawned children; `run` is awaitable and survives a child that died."""

    def __init__(self, processes: int, nice: int = 0) -> None:
        self.processes = processes
        self.nice = nice
        self._executor: ProcessPoolExecutor | None = None
        self.restarts = 0

    @property
    def started(self) -> bool:
        return self._executor is not None

    def start(self) -> None:
        """Spawn every child now (each imports torch, ~3 s), so the first sweep does not wait for them."""
        executor = self._get()
        for _ in range(self.processes):
            executor.submit(_ready)

    def _get(self) -> ProcessPoolExecutor:
        if self._executor is None:
            if os.name == "posix":
                start_resource_tracker_outside_cwd()
            self._executor = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_child,
                initargs=(self.nice,),
            )
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
        self.restarts += 1
        self.shutdown()

    def shutdown(self) -> None:
        """Drop queued jobs and stop the children now (a result nobody will read is not worth a slower stop)."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        children = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for child in children:
            child.terminate()
        for child in children:
            child.join(timeout=5)
