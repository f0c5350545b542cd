"""The one place where concurrent sentences meet: a queue of trace jobs, traced as padded batches per model.

It runs where the models are loaded (the server's models process, real_process.py; threads of the worker when the
server runs without compute processes). A runner thread waits for a job, lets a room's burst arrive (ARRIVAL_GAP_S),
then takes its share of the oldest job's group (one model, one version of its weights, one set of options; the
waiting sentences and those the other runners trace, shared evenly), up to RESNORM_MODELS_BATCH sentences and
RESNORM_MODELS_BATCH_TOKENS padded tokens (sentences x the longest). It loads the model once, traces the batch in
one pass (app/experiments/real_batch.py) and answers each sentence. There are RESNORM_COMPUTE_SLOTS runners, one
torch thread each (on 2 cores, two batches at once use both cores: more OpenMP threads in one pass ran 10-20x
slower on a busy machine, see processes.py). While batches compute, the next sentences queue, so a room sending at
once is traced in a few passes. A job whose client left before its batch started is dropped; a full queue refuses
new jobs (503 with Retry-After, as every endpoint does).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..config.real import MAX_TOKENS, RealTraceRequest
from ..experiments.isolation import as_server
from ..experiments.real_batch import trace_batch
from ..experiments.real_trace import TooManyTokens
from ..models.real.sources import ModelSource
from ..models.real.weights import WeightsChanged
from . import real_models
from .processes import lower_this_thread
from .real_errors import ModelUnavailable, RoomFull

logger = logging.getLogger(__name__)
# Sentences the queue holds, whatever the batch size; more are told to come back. At ~0.3 s a SmolLM2 sentence a
# core, a full queue waits ~40 s on 2 cores: within the 120 s a client waits.
MAX_WAITING = 256
RETRY_AFTER_S = 5
# A runner lets a room's burst arrive: it waits while sentences keep coming less than ARRIVAL_GAP_S apart, at most
# LINGER_S after the oldest (a sentence alone waits ARRIVAL_GAP_S)
LINGER_S, ARRIVAL_GAP_S = 0.05, 0.01


Reply = Callable[["Job", bool, Any], None]  # (the job, whether it succeeded, its answer or its exception)


@dataclass(eq=False)
class Job:
    id: int
    source: ModelSource
    digest: str
    request: RealTraceRequest
    reply: Reply
    owner: Hashable = None  # the connection it came from: a closed connection's jobs are dropped
    tokens: int | None = None  # counted by the runner that takes it, with the tokenizer alone
    error: Exception | None = None
    cancelled: bool = False
    queued: float = field(default_factory=time.monotonic)

    def group(self) -> tuple[Any, ...]:
        """Jobs traced together: one model, one version of its weights, one set of options."""
        r = self.request
        return (self.source, self.digest, r.gradients, r.attention, r.special_tokens)


@dataclass
class QueueStats:
    batches: int = 0
    sentences: int = 0
    cancelled: int = 0
    refused: int = 0
    recent: deque[int] = field(default_factory=lambda: deque(maxlen=64))  # sizes of the latest batches


class SentenceQueue:
    def __init__(
        self,
        max_sentences: int,
        max_tokens: int,
        threads: int,
        run: Callable[[list[Job], int], list[dict[str, Any]]] | None = None,
        count: Callable[[Job], int] | None = None,
        nice: int = 0,
        runners: int = 1,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        self.max_sentences, self.max_tokens, self.threads, self.nice = max_sentences, max_tokens, threads, nice
        self.runners = runners
        self.max_waiting = max_waiting
        self._run, self._count = run or run_jobs, count or count_job
        self._jobs: list[Job] = []
        self._counting: list[Job] = []  # taken by a runner, being counted
        self._changed = threading.Condition()
        self._runners: list[threading.Thread] = []
        self._idle = 0  # runners waiting for work
        self._busy: dict[int, int] = {}  # runner thread -> sentences in the batch it traces
        self._whole: ThreadPoolExecutor | None = None  # whole jobs on a loaded model (run_whole)
        self.stats = QueueStats()

    def submit(self, job: Job) -> None:
        with self._changed:
            if len(self._jobs) >= self.max_waiting:
                self.stats.refused += 1
                refused = True
            else:
                refused = False
                self._jobs.append(job)
                self._changed.notify_all()  # a lingering runner counts the burst
        if refused:
            job.reply(job, False, RoomFull(self.max_waiting, RETRY_AFTER_S))
        self._start()

    def run_whole(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Future:
        """fn(*args): a whole job on the loaded models beside the sentences (the sentence set's intervention, a
        batched pass of its own), one at a time in a lowered thread of its own, under the server's torch settings."""
        with self._changed:
            if self._whole is None:
                self._whole = ThreadPoolExecutor(
                    1, thread_name_prefix="models-job", initializer=lower_this_thread, initargs=(self.nice,)
                )
        return self._whole.submit(_as_server_call, self.threads, fn, args)

    def cancel(self, job_id: int, owner: Hashable = None) -> bool:
        """Drop a job whose client left, if its batch has not started (a started batch finishes)."""
        return self._drop(lambda job: job.id == job_id and job.owner == owner) > 0

    def drop_owner(self, owner: Hashable) -> int:
        return self._drop(lambda job: job.owner == owner)

    def _drop(self, which: Callable[[Job], bool]) -> int:
        with self._changed:
            gone = [job for job in self._jobs if which(job)]
            self._jobs = [job for job in self._jobs if not which(job)]
            for job in self._counting:  # taken by a runner, not traced yet
                if which(job) and not job.cancelled:
                    job.cancelled = True
                    gone.append(job)
            self.stats.cancelled += len(gone)
        return len(gone)

    def waiting(self) -> int:
        with self._changed:
            return len(self._jobs)

    def describe(self) -> dict[str, Any]:
        s = self.stats
        return {
            "waiting": self.waiting(),
            "batches": s.batches,
            "sentences": s.sentences,
            "cancelled": s.cancelled,
            "refused": s.refused,
            "recent_batches": list(s.recent),
            "max_sentences": self.max_sentences,
            "max_tokens": self.max_tokens,
        }

    def _start(self) -> None:
        with self._changed:
            while len(self._runners) < self.runners:
                runner = threading.Thread(target=self._loop, daemon=True, name=f"sentences-{len(self._runners)}")
                self._runners.append(runner)
                runner.start()

    def _loop(self) -> None:
        lower_this_thread(self.nice)
        me = threading.get_ident()
        while True:
            batch = self._take()
            if batch:
                self._answer(batch)
            with self._changed:
                self._busy.pop(me, None)

    def _take(self) -> list[Job]:
        """This runner's share of the oldest job's group: from a window of the oldest jobs of that group (counted
        outside the lock), the shortest that fit the budgets, so that a batch pads little; the others go back to
        the front of the queue, in the order they came (the window is two batches: a long sentence waits at most
        one batch longer)."""
        with self._changed:
            window, share = self._claim()
        for job in window:
            self._counted(job)
        with self._changed:
            for job in window:
                self._counting.remove(job)
            live = [job for job in window if not job.cancelled]
            failed = [job for job in live if job.error is not None]
            chosen: list[Job] = []
            width = 0
            for job in sorted((job for job in live if job.error is None), key=lambda job: job.tokens or 0):
                wider = max(width, job.tokens or 0)
                if len(chosen) == share or (chosen and (len(chosen) + 1) * wider > self.max_tokens):
                    break  # sorted by length: no later job fits either
                chosen.append(job)
                width = wider
            back = [job for job in live if job.error is None and job not in chosen]
            self._busy[threading.get_ident()] = len(chosen)
            self._jobs[:0] = back
            if back:
                self._changed.notify_all()
        for job in failed:
            job.reply(job, False, job.error)
        return chosen

    def _claim(self) -> tuple[list[Job], int]:
        """Under the lock: wait for a job, let a burst arrive (see LINGER_S), then take a window of the oldest
        job's group and this runner's share of it (so that the runners finish together)."""
        self._idle += 1
        try:
            while True:
                if not self._jobs:  # also when another runner took them while this one lingered
                    self._changed.wait()
                    continue
                deadline = min(self._jobs[0].queued + LINGER_S, self._jobs[-1].queued + ARRIVAL_GAP_S)
                if len(self._jobs) >= self.max_sentences * self._idle or time.monotonic() >= deadline:
                    break
                self._changed.wait(deadline - time.monotonic())
            group = self._jobs[0].group()
            same = [job for job in self._jobs if job.group() == group]
            # Even finishing times: the waiting sentences and those the other runners are tracing, shared by all
            # runners (taking everything while the other runner traced one sentence left a core idle)
            busy = sum(self._busy.values())
            share = min(self.max_sentences, max(1, -(-(len(same) + busy) // self.runners)))
        finally:
            self._idle -= 1
        window = same[: 2 * self.max_sentences]
        self._jobs = [job for job in self._jobs if job not in window]
        self._counting.extend(window)
        return window, share

    def _counted(self, job: Job) -> None:
        if job.tokens is not None or job.error is not None:
            return
        try:
            job.tokens = self._count(job)
        except Exception as exc:  # too long, or the tokenizer cannot be loaded: this job's own error
            job.error = exc

    def _answer(self, batch: list[Job]) -> None:
        try:
            answers = self._run(batch, self.threads)
        except (WeightsChanged, ModelUnavailable) as exc:  # the model itself: the same for every sentence
            for job in batch:
                job.reply(job, False, exc)
            return
        except Exception:
            if len(batch) == 1:
                logger.exception("a trace failed")
                batch[0].reply(batch[0], False, RuntimeError("the trace failed; see the server's log"))
                return
            for job in batch:  # one sentence must not fail its neighbours: each alone
                self._answer([job])
            return
        self.stats.batches += 1
        self.stats.sentences += len(batch)
        self.stats.recent.append(len(batch))
        for job, answer in zip(batch, answers, strict=True):
            job.reply(job, True, answer)


def count_job(job: Job) -> int:
    """The job's token count with the model's tokenizer alone; TooManyTokens over the cap (before any load)."""
    counted = real_models.count_tokens(job.source, job.digest, job.request)
    if not counted["fits"]:
        raise TooManyTokens(counted["tokens"], MAX_TOKENS)
    return int(counted["tokens"])


def run_jobs(batch: list[Job], threads: int) -> list[dict[str, Any]]:
    """Load (or reuse) the batch's model and trace its sentences in one padded pass under the server's settings."""
    first = batch[0]
    loaded = real_models.get_shelf().get(first.source, first.digest)
    started = time.perf_counter()
    with as_server(threads):
        answers = trace_batch(loaded, [job.request.text for job in batch], real_models.options_of(first.request))
    elapsed = round(time.perf_counter() - started, 3)  # the batch's pass, not the load
    for answer in answers:
        answer["summary"].update(compute_s=elapsed, batch=len(batch))
    return answers


def _as_server_call(threads: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    with as_server(threads):
        return fn(*args)
