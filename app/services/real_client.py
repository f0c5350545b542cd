"""How a worker reaches the pretrained models: the server's models process over its socket (real_process.py), or,
on a server without compute processes, a sentence queue in a thread of the worker itself. Both answer `trace` (one
sentence, batched with the others waiting), `run` (a whole job on a loaded model, beside the queue) and `ask` (a
quick look: what is loaded, the queue's figures). A caller that leaves (its HTTP client disconnected) cancels its
sentence if its batch has not started.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any

from ..config.real import RealTraceRequest
from ..models.real.sources import ModelSource
from ..settings import get_settings
from .real_errors import ModelsProcessStopped
from .real_process import Supervisor, address_of, queue_of
from .sentence_queue import Job, SentenceQueue

logger = logging.getLogger(__name__)
START_TIMEOUT_S = 120.0  # spawning the process and importing torch, on a busy laptop
CONNECT_POLL_S = 0.1


def _settle(future: concurrent.futures.Future) -> Callable[[Any, bool, Any], None]:
    """A reply (job, ok, value) that settles `future`, unless its caller left."""

    def reply(job: Any, ok: bool, value: Any) -> None:
        with suppress(concurrent.futures.InvalidStateError):  # the caller left
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    return reply


async def _awaited(future: concurrent.futures.Future, on_leave: Callable[[], None]) -> Any:
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        on_leave()
        raise


class InProcessModels:
    """The sentence queue in a thread of this process (RESNORM_COMPUTE_PROCESSES=0, and tests)."""

    def __init__(self, queue: SentenceQueue) -> None:
        self.queue = queue
        self._ids = itertools.count(1)

    async def trace(self, source: ModelSource, digest: str, request: RealTraceRequest) -> dict[str, Any]:
        future: concurrent.futures.Future = concurrent.futures.Future()
        job = Job(next(self._ids), source, digest, request, _settle(future))
        self.queue.submit(job)
        return await _awaited(future, lambda: self._leave(job.id))

    def _leave(self, job_id: int) -> None:
        self.queue.cancel(job_id)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.wrap_future(self.queue.run_whole(fn, args))

    async def ask(self, fn: Callable[..., Any], *args: Any) -> Any:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(fn, *args)

    async def reachable(self) -> bool:
        return True

    async def figures(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "nice": os.nice(0), **self.queue.describe()}

    def close(self) -> None:
        """Nothing to stop: the queue's thread is a daemon."""


class ModelsClient:
    """This worker's connection to the server's models process (started and watched by whichever worker took the
    lock first: possibly this one)."""

    def __init__(self, socket_path: Path, lock_path: Path, nice: int, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.socket_path, self.lock_path, self.nice, self.start_timeout_s = (
            socket_path,
            lock_path,
            nice,
            start_timeout_s,
        )
        self.supervisor: Supervisor | None = None
        self._connection: Connection | None = None
        self._opening: concurrent.futures.Future | None = None
        self._pending: dict[int, tuple[concurrent.futures.Future, str, Connection]] = {}
        self._lock, self._connecting, self._sending = threading.Lock(), threading.Lock(), threading.Lock()
        self._ids = itertools.count(1)

    async def trace(self, source: ModelSource, digest: str, request: RealTraceRequest) -> dict[str, Any]:
        return await self._request(source.name, "trace", source, digest, request)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) beside the sentence queue (a whole job on a loaded model: the sentence set's intervention)."""
        name = next((arg.name for arg in args if isinstance(arg, ModelSource)), "a model")
        return await self._request(name, "run", fn, args)

    async def ask(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self._request("", "ask", fn, args)

    async def figures(self) -> dict[str, Any]:
        from .real_process import queue_figures

        return await self.ask(queue_figures)

    async def reachable(self) -> bool:
        """Connected, or the process runs and accepts (never starts it: a look is not worth a process)."""
        import anyio.to_thread

        return self._connection is not None or await anyio.to_thread.run_sync(self._look)

    def _look(self) -> bool:
        if not self._connecting.acquire(blocking=False):  # another request is connecting (or starting it)
            return False
        try:
            return self._connect(False)
        finally:
            self._connecting.release()

    async def _request(self, name: str, kind: str, *payload: Any) -> Any:
        connection = self._connection or await self._opened()
        job_id = next(self._ids)
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._pending[job_id] = (future, name, connection)
        try:
            self._send(connection, (kind, job_id, *payload))
        except OSError:
            self._lost(connection)
        return await _awaited(future, lambda: self._leave(connection, job_id))

    def _send(self, connection: Connection, message: tuple[Any, ...]) -> None:
        with self._sending:
            connection.send(message)

    def _leave(self, connection: Connection, job_id: int) -> None:
        with self._lock:
            self._pending.pop(job_id, None)
        with suppress(OSError):
            self._send(connection, ("cancel", job_id))

    async def _opened(self) -> Connection:
        """The connection, opened by one thread of its own while every caller awaits it: a room arriving while the
        process starts (seconds) must not hold the worker's shared threads, which pages need too."""
        with self._lock:
            if self._opening is None or self._opening.done():
                self._opening = concurrent.futures.Future()
                threading.Thread(target=self._open, args=(self._opening,), daemon=True, name="models-open").start()
            opening = self._opening
        return await asyncio.shield(asyncio.wrap_future(opening))  # a caller that leaves leaves it to the others

    def _open(self, opening: concurrent.futures.Future) -> None:
        try:
            opening.set_result(self.connection())
        except Exception as exc:
            opening.set_exception(exc)

    def connection(self) -> Connection:
        """The open connection, connecting first (and starting the process if no worker watches one); blocking."""
        with self._connecting:
            deadline = time.monotonic() + self.start_timeout_s
            while not self._connect(True):
                if time.monotonic() > deadline:
                    raise ModelsProcessStopped("any model", f"did not start within {self.start_timeout_s:.0f} s")
                time.sleep(CONNECT_POLL_S)
            assert self._connection is not None
            return self._connection

    def _connect(self, start: bool) -> bool:
        if self._connection is not None:
            return True
        try:
            connection = Client(str(self.socket_path), family="AF_UNIX")
        except OSError:  # not there yet, or a dead process's socket
            if start and self.supervisor is None:
                self.supervisor = Supervisor.take(self.socket_path, self.lock_path, self.nice)
            return False
        self._connection = connection
        threading.Thread(target=self._read, args=(connection,), daemon=True, name="models-client").start()
        return True

    def _read(self, connection: Connection) -> None:
        try:
            while True:
                job_id, ok, value = connection.recv()
                with self._lock:
                    entry = self._pending.pop(job_id, None)
                if entry is not None:
                    _settle(entry[0])(None, ok, value)
        except Exception:  # EOFError, OSError: the process died (or was stopped)
            self._lost(connection)

    def _lost(self, connection: Connection) -> None:
        """Every sentence sent on a dead connection gets one clear error naming its model."""
        with self._lock:
            if self._connection is connection:
                self._connection = None
            lost = [key for key, entry in self._pending.items() if entry[2] is connection]
            entries = [self._pending.pop(key) for key in lost]
        for future, name, _ in entries:
            _settle(future)(None, False, ModelsProcessStopped(name))
        with suppress(OSError):
            connection.close()

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with suppress(OSError):
                connection.close()
        if self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None


Models = InProcessModels | ModelsClient
_MODELS: Models | None = None


def get_models() -> Models:
    """This process's way to the models: the server's models process, or a queue of its own without compute
    processes (or where no private folder for the socket can be had)."""
    global _MODELS
    if _MODELS is None:
        settings = get_settings()
        try:
            _MODELS = ModelsClient(*address_of(settings), settings.compute_nice) if settings.compute_processes else None
        except OSError as exc:
            logger.warning("pretrained models run in this worker: no private folder for their socket (%s)", exc)
        if _MODELS is None:
            _MODELS = InProcessModels(queue_of(settings, settings.compute_nice))
    return _MODELS


def close_models() -> None:
    global _MODELS
    models, _MODELS = _MODELS, None
    if models is not None:
        models.close()
