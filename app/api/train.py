"""POST /api/train: short real training runs streamed as NDJSON, one strict JSON object per line.

Training runs in its own thread, never on the event loop; a process holds at most
`max_train_runs` training streams (more get 429 + Retry-After). A request that already ran to its end
is replayed from app.train_cache at once (no slot, no thread). When the client goes away the
streaming generator is closed, which sets the run's cancel flag; the thread checks it every step.
"""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, AsyncIterator

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from app.errors import FieldError
from app.experiments.tasks import TaskMismatch, tasks_payload
from app.experiments.train import MAX_STEPS, MAX_TRAIN_MACS, TrainRequest, check_runs, train_events
from app.experiments.train_presets import presets_payload
from app.jsonsafe import StrictJSONResponse, strict_dumps
from app.settings import get_settings
from app.train_cache import FinishedRuns, replayed

router = APIRouter(tags=["train"])

STALE_AFTER_S = 60.0   # a stream nobody has read for this long is abandoned: stop its training
RETRY_AFTER_S = 10


class TrainSlots:
    """Counts training streams of this process; `active` drops only when a training thread has really ended."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = 0
        self.started = 0
        self.steps = 0   # optimizer steps taken by every training thread of this process

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


SLOTS = TrainSlots()
FINISHED = FinishedRuns()


class TrainingSession:
    """One request's training thread and the queue that carries its events to the event loop."""

    def __init__(self, request: TrainRequest) -> None:
        self.request = request
        self.cancel = threading.Event()
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue = asyncio.Queue()
        self.last_read = time.monotonic()
        self.thread = threading.Thread(target=self._train, name="resnorm-train", daemon=True)

    def start(self) -> "TrainingSession":
        self.thread.start()
        return self

    def _train(self) -> None:
        import torch

        torch.set_num_threads(get_settings().threads_per_run())
        events = []
        try:
            for event in train_events(self.request, self.cancel):
                SLOTS.steps += event.get("type") == "step"
                if time.monotonic() - self.last_read > STALE_AFTER_S:
                    self.cancel.set()
                if self.cancel.is_set() or not self._send(event):
                    break
                events.append(event)
            else:
                FINISHED.keep(self.request.model_dump_json(), events)
        except Exception as exc:  # never leave the stream hanging: say what failed, then end it
            self._send({"type": "error", "error": f"training failed: {type(exc).__name__}: {exc}"})
        finally:
            SLOTS.release()
            self._send(None)

    def _send(self, event: dict[str, Any] | None) -> bool:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, event)
            return True
        except RuntimeError:  # the event loop is gone (server shutting down)
            self.cancel.set()
            return False

    async def ndjson(self) -> AsyncIterator[str]:
        try:
            while True:
                event = await self.queue.get()
                self.last_read = time.monotonic()
                if event is None:
                    return
                yield strict_dumps(event) + "\n"
        finally:  # client disconnected, or stream finished: either way the thread must stop
            self.cancel.set()


@router.post("/api/train")
async def train(body: TrainRequest | None = None):
    """Train 1-4 configs on a synthetic task; NDJSON events `start`, `step`, `done` (one per run), `end`."""
    body = body or TrainRequest()
    try:
        check_runs(body)
    except TaskMismatch as exc:
        raise FieldError(exc.field, exc.message, exc.allowed) from None
    finished = FINISHED.get(body.model_dump_json())
    if finished is not None:
        return StreamingResponse(_replay(finished), media_type="application/x-ndjson", headers={"Cache-Control": "no-store"})
    limit = get_settings().max_train_runs
    if not SLOTS.try_acquire(limit):
        message = f"{limit} training run(s) already in progress on this server; try again shortly"
        return StrictJSONResponse({"error": message, "status": 429, "retry_after": RETRY_AFTER_S},
                                  status_code=429, headers={"Retry-After": str(RETRY_AFTER_S)})
    try:
        session = TrainingSession(body).start()
    except BaseException:  # no thread will ever release the slot: give it back now
        SLOTS.release()
        raise
    return StreamingResponse(session.ndjson(), media_type="application/x-ndjson",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _replay(events: list[dict[str, Any]]) -> AsyncIterator[str]:
    for event in replayed(events):
        yield strict_dumps(event) + "\n"


@router.get("/api/train/status", response_class=StrictJSONResponse)
async def status() -> StrictJSONResponse:
    """Training streams running in this process (a thread counts until it has really stopped)."""
    return StrictJSONResponse({"active": SLOTS.active, "max": get_settings().max_train_runs,
                               "started": SLOTS.started, "steps": SLOTS.steps,
                               "finished_kept": len(FINISHED), "replays": FINISHED.hits})


@router.get("/api/train/presets", response_class=StrictJSONResponse)
async def presets() -> StrictJSONResponse:
    """Named comparisons (runs + settings, English and Chinese), the tasks, the defaults and the limits."""
    defaults = {name: field.default for name, field in TrainRequest.model_fields.items() if name != "runs"}
    return StrictJSONResponse({
        "presets": presets_payload(), "tasks": tasks_payload(), "defaults": defaults,
        "limits": {"max_runs": 4, "max_steps": MAX_STEPS, "max_train_macs": MAX_TRAIN_MACS,
                   "max_concurrent": get_settings().max_train_runs},
    })


def _register_page() -> None:
    from app.api import train_page

    train_page.register(router)


_register_page()
