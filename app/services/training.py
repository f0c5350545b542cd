"""Training sessions: a thread per run request, a bounded number per process, and finished runs replayed.

Training runs in its own thread, never on the event loop; a process holds at most `max_train_runs` training
streams (more are refused, and the router answers 429). When the client goes away the streaming generator is
closed, which sets the run's cancel flag; the thread checks it every step. A run that finished is stored in
the shared result cache under its request, so a repeat (a rehearsal, then the class) is replayed at once
from the recorded events, without a training slot, and says so (`"cached": true` on its start and end).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread

from ..experiments.train import TrainRequest, train_events
from ..experiments.train_answer import TrainCharts, answer_of, empty_answer
from ..figures.train_stream import ChartStream
from ..jsonsafe import strict_dumps
from ..settings import get_settings
from .compute import get_cache

PENDING = "pending"  # the source of a training request's answer when the server has not recorded its run
STALE_AFTER_S = 60.0  # a stream nobody has read for this long is abandoned: stop its training


class TrainSlots:
    """Counts training streams of this process; `active` drops only when a training thread has really ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = 0
        self.started = 0
        self.replays = 0
        self.steps = 0  # optimizer steps taken by every training thread of this process

    def try_acquire(self, limit: int) -> bool:
        with self._lock:
            if self.active >= limit:
                return False
            self.active += 1
            self.started += 1
            return True

    def release(self) -> None:
        with self._lock:
            self.active -= 1

    def count_step(self) -> None:
        with self._lock:  # several training threads add at once: `+=` alone is a read and a write
            self.steps += 1

    def count_replay(self) -> None:
        with self._lock:
            self.replays += 1


SLOTS = TrainSlots()


def cache_key(request: TrainRequest) -> str:
    return "train:" + request.model_dump_json()


class TrainingSession:
    """One request's training thread and the queue that carries its events to the event loop."""

    def __init__(self, request: TrainRequest) -> None:
        self.request = request
        self.cancel = threading.Event()
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue = asyncio.Queue()
        self.last_read = time.monotonic()
        self.recorded: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._train, name="resnorm-train", daemon=True)

    def start(self) -> TrainingSession:
        self.thread.start()
        return self

    def _train(self) -> None:
        import torch

        torch.set_num_threads(get_settings().threads_per_run())
        try:
            for event in train_events(self.request, self.cancel, get_settings().train_parallel()):
                if event.get("type") == "step":
                    SLOTS.count_step()
                if time.monotonic() - self.last_read > STALE_AFTER_S:
                    self.cancel.set()
                if self.cancel.is_set() or not self._send(event):
                    break
                self.recorded.append(event)
            else:
                self._store()
        except Exception as exc:  # never leave the stream hanging: say what failed, then end it
            self._send({"type": "error", "error": f"training failed: {type(exc).__name__}: {exc}"})
        finally:
            SLOTS.release()
            self._send(None)

    def _store(self) -> None:
        """Only a run that reached its `end` event is worth replaying."""
        if self.recorded and self.recorded[-1].get("type") == "end" and not self.cancel.is_set():
            get_cache().set(cache_key(self.request), self.recorded)

    def _send(self, event: dict[str, Any] | None) -> bool:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
            return True
        except RuntimeError:  # the event loop is gone (server shutting down)
            self.cancel.set()
            return False

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        try:
            while True:
                event = await self.queue.get()
                self.last_read = time.monotonic()
                if event is None:
                    return
                yield event
        finally:  # client disconnected, or stream finished: either way the thread must stop
            self.cancel.set()


async def recorded_run(request: TrainRequest) -> list[dict[str, Any]] | None:
    """The events of an identical finished run, from any layer of the shared cache (None if there is none)."""
    found = await anyio.to_thread.run_sync(get_cache().get, cache_key(request))
    return found[0] if found is not None and isinstance(found[0], list) else None


async def replay(events: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """The recorded events at once; start and end say they come from the cache (times are the recording's)."""
    SLOTS.count_replay()
    for event in events:
        if event.get("type") in ("start", "end"):
            event = {**event, "cached": True}
        yield event


class TooManyRuns(Exception):
    """Every training slot of this process is taken."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} training run(s) already in progress on this server; try again shortly")
        self.limit = limit


async def training_events(request: TrainRequest) -> AsyncIterator[dict[str, Any]]:
    """The events of a replayed or a new run; TooManyRuns if a new run finds no free slot."""
    events = await recorded_run(request)
    if events is not None:
        return replay(events)
    limit = get_settings().max_train_runs
    if not SLOTS.try_acquire(limit):
        raise TooManyRuns(limit)
    try:
        session = TrainingSession(request).start()
    except BaseException:  # no thread will ever release the slot: give it back now
        SLOTS.release()
        raise
    return session.events()


async def ndjson(items: AsyncIterator[dict[str, Any]]) -> AsyncIterator[str]:
    """One strict JSON object a line; closing it closes `items` (a training session's events: its thread stops)."""
    try:
        async for item in items:
            yield strict_dumps(item) + "\n"
    finally:
        await items.aclose()  # type: ignore[attr-defined]


async def training_stream(request: TrainRequest) -> AsyncIterator[str]:
    """NDJSON lines of a replayed or a new run; TooManyRuns if a new run finds no free slot."""
    return ndjson(await training_events(request))


async def chart_stream(request: TrainCharts, lang: str) -> AsyncIterator[str]:
    """NDJSON lines of /train's chart messages (app/figures/train_stream.py) for a replayed or a new run."""
    events = await training_events(request.training())
    return ndjson(_charts(events, ChartStream(request, lang)))


async def _charts(events: AsyncIterator[dict[str, Any]], stream: ChartStream) -> AsyncIterator[dict[str, Any]]:
    try:
        async for event in events:
            for message in stream.messages(event):
                yield message
    finally:
        await events.aclose()  # type: ignore[attr-defined]


async def recorded_answer(request: TrainCharts) -> tuple[dict[str, Any], str]:
    """(/train's answer of this request as the server recorded it, `recorded`), or (nothing trained, `pending`)."""
    events = await recorded_run(request.training())
    if events is None:
        return empty_answer(request), PENDING
    return answer_of(request, events), "recorded"
