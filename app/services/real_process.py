"""The server's models process: one child process holds the loaded pretrained models for every worker.

Why a process of its own: transformers' imports, loading and hooks are Python and would hold a worker's GIL while its
event loop answers pages; and one copy of the weights serves every worker (each worker holding its own copy cost
600 MB a worker, docs/models.md). It runs at RESNORM_COMPUTE_NICE, like the compute processes, and is the one place
where concurrent sentences are batched (sentence_queue.py).

How workers reach it: a Unix socket in a folder only this user can open (multiprocessing.connection messages are
pickles: whoever can connect can run code as this user). Its name is a digest of what the process depends on (the
code, the cache folder, the model settings), so every worker of a server finds the same one and two checkouts never
share one. The first worker that needs it takes a file lock (flock: released by the kernel when its holder dies),
spawns the process and watches it: a process that dies is started again, and the workers' requests in flight get
one clear error naming their model. Every other worker connects to the socket. If the watching worker itself
dies, the process leaves with it (it watches its parent), and the next worker to need it takes the lock over.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import suppress
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import IO, Any

from ..settings import Settings
from .processes import start_child, start_resource_tracker_outside_cwd
from .sentence_queue import Job, SentenceQueue

logger = logging.getLogger(__name__)
RESTART_PAUSE_S = (0.5, 30.0)  # a process that keeps dying at start is started again after a growing pause


def private_folder() -> Path:
    """tempdir/resnorm-<uid>, readable by this user alone (refused if another user owns it or may open it)."""
    folder = Path(tempfile.gettempdir()) / f"resnorm-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{folder} must belong to this user alone (mode 700)")
    return folder


def address_of(settings: Settings) -> tuple[Path, Path]:
    """(the socket, the lock file) of the models process serving a server with these settings."""
    depends_on = [
        str(Path(__file__).resolve().parents[1]),  # the code it runs
        sys.executable,
        str(settings.resolved_cache_dir()),
        str(settings.resolved_models_dir()),
        settings.models,
        settings.models_download,
        settings.models_memory_mb,
        settings.models_batch,
        settings.models_batch_tokens,
        settings.compute_nice,
        settings.compute_slots,
        settings.threads_per_run(),
    ]
    key = hashlib.sha256(json.dumps(depends_on).encode()).hexdigest()[:16]
    folder = private_folder()
    return folder / f"models-{key}.sock", folder / f"models-{key}.lock"


def queue_of(settings: Settings, nice: int = 0) -> SentenceQueue:
    """The sentence queue of these settings; `nice`: lower its thread (when it runs in a worker)."""
    return SentenceQueue(
        settings.models_batch,
        settings.models_batch_tokens,
        settings.threads_per_run(),
        nice=nice,
        runners=settings.compute_slots,
    )


# --- in the models process ----------------------------------------------------------------------------------------


def serve(socket_path: str, nice: int) -> None:
    """The models process: answer every connection's messages until the watching worker goes."""
    import gc

    import torch

    from ..settings import get_settings

    global SERVING
    start_child(nice)
    gc.enable()  # the compute processes collect after each job; this one runs for hours, traces in threads
    settings = get_settings()
    # Once for the process: each runner's as_server() then finds this count and changes nothing another runner uses
    torch.set_num_threads(settings.threads_per_run())
    queue = SERVING = queue_of(settings)
    with Listener(socket_path, family="AF_UNIX") as listener:
        while True:
            connection = listener.accept()
            threading.Thread(target=_serve_connection, args=(connection, queue), daemon=True).start()


def _serve_connection(connection: Connection, queue: SentenceQueue) -> None:
    """Messages: ("trace", id, source, digest, request) queued; ("cancel", id) drops it if still queued;
    ("run", id, fn, args) runs fn(*args) beside the queue (SentenceQueue.run_whole); ("ask", id, fn, args) runs
    fn(*args) at once (what is loaded, the queue's figures)."""
    sending = threading.Lock()
    owner = id(connection)

    def reply(job_id: int, ok: bool, value: Any) -> None:
        with sending, suppress(OSError):  # a worker that went away reads nothing
            try:
                connection.send((job_id, ok, value))
            except Exception as exc:  # an answer or an error that does not pickle: say what it was
                connection.send((job_id, False, RuntimeError(f"{type(value).__name__}: {value}"[:500] + f" ({exc})")))

    try:
        while True:
            kind, job_id, *rest = connection.recv()
            if kind == "trace":
                source, digest, request = rest
                job = Job(job_id, source, digest, request, lambda j, ok, v: reply(j.id, ok, v), owner)
                queue.submit(job)
            elif kind == "run":
                fn, args = rest
                queue.run_whole(fn, args).add_done_callback(replier(reply, job_id))
            elif kind == "cancel":
                queue.cancel(job_id, owner)
            elif kind == "ask":
                fn, args = rest
                try:
                    reply(job_id, True, fn(*args))
                except Exception as exc:
                    reply(job_id, False, exc)
    except (EOFError, OSError):
        queue.drop_owner(owner)
        connection.close()


def replier(reply: Callable[[int, bool, Any], None], job_id: int) -> Callable[[Future], None]:
    """A finished whole job's callback: reply (whether it succeeded, its result or its exception)."""

    def done(finished: Future) -> None:
        error = finished.exception()
        reply(job_id, *((False, error) if error is not None else (True, finished.result())))

    return done


SERVING: SentenceQueue | None = None  # the models process's queue


def queue_figures() -> dict[str, Any]:
    """The models process's queue figures (asked by a worker: what is batched, dropped, refused)."""
    return {"pid": os.getpid(), "nice": os.nice(0), **(SERVING.describe() if SERVING is not None else {})}


# --- in the worker that started it --------------------------------------------------------------------------------


class Supervisor:
    """Holds the lock, spawns the models process and starts it again whenever it dies."""

    def __init__(self, socket_path: Path, lock: IO[str], nice: int) -> None:
        self.socket_path, self._lock, self.nice = socket_path, lock, nice
        self.process: Any = None
        self.restarts = 0
        self._stopping = threading.Event()
        self._pause = RESTART_PAUSE_S[0]

    @classmethod
    def take(cls, socket_path: Path, lock_path: Path, nice: int) -> Supervisor | None:
        """A started supervisor if no other process holds the lock, else None."""
        handle = open(lock_path, "a+")  # noqa: SIM115  (held open as long as this supervisor lives)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return None
        supervisor = cls(socket_path, handle, nice)
        supervisor._spawn()
        threading.Thread(target=supervisor._watch, daemon=True, name="models-supervisor").start()
        return supervisor

    def _spawn(self) -> None:
        with suppress(FileNotFoundError):
            self.socket_path.unlink()  # a dead process's socket: only the lock holder ever removes it
        start_resource_tracker_outside_cwd()
        context = multiprocessing.get_context("spawn")
        self.process = context.Process(
            target=serve, args=(str(self.socket_path), self.nice), daemon=True, name="resnorm-models"
        )
        self.process.start()
        self._started = time.monotonic()

    def _watch(self) -> None:
        while not self._stopping.is_set():
            self.process.join(0.25)
            if self.process.is_alive() or self._stopping.is_set():
                continue
            logger.warning("the models process exited (%s); starting it again", self.process.exitcode)
            self.restarts += 1
            quick = time.monotonic() - self._started < 10
            self._pause = min(RESTART_PAUSE_S[1], self._pause * 2) if quick else RESTART_PAUSE_S[0]
            if self._stopping.wait(self._pause if quick else 0):
                return
            self._spawn()

    def stop(self) -> None:
        self._stopping.set()
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
        with suppress(FileNotFoundError):
            self.socket_path.unlink()
        self._lock.close()  # releases the lock
