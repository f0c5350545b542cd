"""The sentence queue of the models process: what waits together is traced together (per model, weights and
options, within the sentence and token budgets), a sentence whose client left is dropped, a full queue says when to
come back, and one failing sentence does not fail its neighbours. Stand-in runner and tokenizer: no model needed."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from app.config.real import RealTraceRequest
from app.experiments.real_trace import TooManyTokens
from app.models.real.sources import ModelSource
from app.services.real_errors import ModelUnavailable, RoomFull
from app.services.sentence_queue import Job, SentenceQueue

WAIT_S = 10


class Room:
    """A queue whose runner records each batch's texts and holds while a batch contains "hold"."""

    def __init__(
        self,
        max_sentences: int = 16,
        max_tokens: int = 1024,
        fail: type[Exception] | None = None,
        runners: int = 1,
        max_waiting: int = 256,
        together: bool = False,
    ) -> None:
        self.batches: list[list[str]] = []
        self.replies: dict[int, tuple[bool, Any]] = {}
        self.release, self.holding = threading.Event(), threading.Event()
        self.replied = threading.Condition()
        self.fail = fail
        self.queue = SentenceQueue(
            max_sentences, max_tokens, 1, run=self.run, count=self.count, runners=runners, max_waiting=max_waiting
        )
        self.together = threading.Barrier(runners) if together else None
        self._ids = 0

    def run(self, batch: list[Job], threads: int) -> list[dict[str, Any]]:
        texts = [job.request.text for job in batch]
        self.batches.append(texts)
        if self.together is not None:
            self.together.wait(WAIT_S)  # every runner has a batch at the same time
        if "hold" in texts:
            self.holding.set()
            assert self.release.wait(WAIT_S)
        if self.fail is not None and any("bad" in t for t in texts):
            raise self.fail("bad", "is broken") if self.fail is ModelUnavailable else self.fail("bad sentence")
        return [{"text": t} for t in texts]

    @staticmethod
    def count(job: Job) -> int:
        if job.request.text.startswith("long"):
            raise TooManyTokens(300, 256)
        return len(job.request.text.split())

    def submit(self, text: str, model: str = "a", owner: Any = None, gradients: bool = True) -> Job:
        self._ids += 1
        request = RealTraceRequest(model=model, text=text, gradients=gradients)
        job = Job(self._ids, ModelSource(model, "local", "/nowhere"), "digest", request, self.reply, owner)
        self.queue.submit(job)
        return job

    def reply(self, job: Job, ok: bool, value: Any) -> None:
        with self.replied:
            self.replies[job.id] = (ok, value)
            self.replied.notify_all()

    def hold(self) -> None:
        """Keep the batch thread busy, so that what is submitted next waits together."""
        self.submit("hold")
        assert self.holding.wait(WAIT_S)

    def wait_for(self, count: int) -> None:
        with self.replied:
            assert self.replied.wait_for(lambda: len(self.replies) >= count, WAIT_S), self.replies


def test_what_waits_together_is_traced_together_per_model_and_options():
    room = Room()
    room.hold()
    for i in range(5):
        room.submit(f"a{i}")
        if i < 2:
            room.submit(f"b{i}", model="b")
    room.submit("plain", gradients=False)
    room.release.set()
    room.wait_for(9)
    assert room.batches == [["hold"], ["a0", "a1", "a2", "a3", "a4"], ["b0", "b1"], ["plain"]]
    assert all(ok for ok, _ in room.replies.values())
    assert room.replies[2] == (True, {"text": "a0"})  # each its own answer
    assert room.queue.describe()["recent_batches"] == [1, 5, 2, 1]


def test_a_sentence_whose_client_left_is_dropped_before_its_batch():
    room = Room()
    room.hold()
    left = room.submit("left")
    room.submit("stays")
    assert room.queue.cancel(left.id)
    room.release.set()
    room.wait_for(2)
    assert room.batches == [["hold"], ["stays"]] and left.id not in room.replies
    assert room.queue.describe()["cancelled"] == 1


def test_a_closed_connection_drops_its_sentences_only():
    room = Room()
    room.hold()
    (
        room.submit("mine one", owner="conn-1"),
        room.submit("theirs", owner="conn-2"),
        room.submit("mine two", owner="conn-1"),
    )
    assert room.queue.drop_owner("conn-1") == 2
    assert not room.queue.cancel(2, owner="conn-2") and room.queue.waiting() == 1  # another owner's id: kept
    room.release.set()
    room.wait_for(2)
    assert room.batches == [["hold"], ["theirs"]]


@pytest.mark.parametrize(("max_sentences", "max_tokens", "sizes"), [(3, 1024, [3, 3, 1]), (16, 10, [2, 2, 2, 1])])
def test_batches_keep_to_the_sentence_and_token_budgets(max_sentences: int, max_tokens: int, sizes: list[int]):
    room = Room(max_sentences, max_tokens)
    room.hold()
    for i in range(7):
        room.submit(f"four tokens sentence {i}")
    room.release.set()
    room.wait_for(8)
    assert [len(b) for b in room.batches[1:]] == sizes


def test_a_full_queue_says_when_to_come_back():
    room = Room(max_waiting=8)
    room.hold()
    jobs = [room.submit(f"s{i}") for i in range(9)]
    room.wait_for(1)
    ok, error = room.replies[jobs[-1].id]
    assert not ok and isinstance(error, RoomFull) and error.retry_after > 0
    room.release.set()
    room.wait_for(10)
    assert sum(ok for ok, _ in room.replies.values()) == 9


def test_a_failing_sentence_does_not_fail_its_neighbours():
    room = Room(fail=ValueError)
    room.hold()
    good, bad, long, other = room.submit("good"), room.submit("bad"), room.submit("long text"), room.submit("other")
    room.release.set()
    room.wait_for(5)
    assert room.replies[good.id] == (True, {"text": "good"}) and room.replies[other.id] == (True, {"text": "other"})
    assert not room.replies[bad.id][0] and "failed" in str(room.replies[bad.id][1])
    assert isinstance(room.replies[long.id][1], TooManyTokens)  # counted before any pass: its own error


def test_a_model_that_cannot_load_fails_its_whole_batch_once():
    room = Room(fail=ModelUnavailable)
    room.hold()
    jobs = [room.submit(t) for t in ("bad", "two", "three")]
    room.release.set()
    room.wait_for(4)
    assert all(isinstance(room.replies[j.id][1], ModelUnavailable) for j in jobs)
    assert room.batches == [["hold"], ["bad", "two", "three"]]  # not tried again one by one


def test_idle_runners_share_a_burst_and_trace_at_the_same_time():
    """Two runners (one a core): a room's burst is split evenly between them, and both trace at once."""
    room = Room(runners=2, together=True)
    with room.queue._changed:  # all ten at once, however busy the machine (the queue's lock is reentrant)
        for i in range(10):
            room.submit(f"s{i}")
    room.wait_for(10)
    assert sorted(len(batch) for batch in room.batches) == [5, 5]
    assert sorted(text for batch in room.batches for text in batch) == sorted(f"s{i}" for i in range(10))


def test_a_batch_takes_the_shortest_sentences_of_the_two_oldest_batches():
    """Sentences of like length are traced together (less padding); the longer ones go next, in arrival order."""
    room = Room(max_sentences=2)
    room.hold()
    for text in ("a b c d e", "x", "f g h i j", "y", "k l m n o p"):
        room.submit(text)
    room.release.set()
    room.wait_for(6)
    assert room.batches[1:] == [["x", "y"], ["a b c d e", "f g h i j"], ["k l m n o p"]]


def test_an_idle_runner_leaves_a_busy_runner_its_share():
    """One runner traces a sentence when 16 arrive: the other takes ceil((16 + 1) / 2) = 9, not all 16, so both
    cores have work when the first is free again."""
    room = Room(runners=2)
    room.hold()
    with room.queue._changed:
        for i in range(16):
            room.submit(f"s{i}")
    room.wait_for(9)  # the other runner answered its batch while the first is still busy
    room.release.set()
    room.wait_for(17)
    assert [len(batch) for batch in room.batches[:2]] == [1, 9]


def _torch_threads_and_thread(pause: float) -> tuple[int, str, float, float]:
    import torch

    started = time.monotonic()
    time.sleep(pause)
    return torch.get_num_threads(), threading.current_thread().name, started, time.monotonic()


def test_a_whole_job_runs_beside_the_sentences_one_at_a_time_under_the_servers_torch_settings():
    """The set's intervention: a job of its own on the loaded models, under the queue's torch threads, never two at
    once (each is a batched pass over the whole set), while a sentence's batch is still traced meanwhile."""
    import torch

    room = Room()
    room.queue.threads = 3
    outside = torch.get_num_threads()
    room.hold()  # a batch is being traced: the whole jobs do not wait for it
    first, second = (room.queue.run_whole(_torch_threads_and_thread, (0.2,)) for _ in range(2))
    (threads, name, _, first_end), (_, _, second_start, _) = first.result(WAIT_S), second.result(WAIT_S)
    room.release.set()
    assert threads == 3 and name.startswith("models-job") and torch.get_num_threads() == outside
    assert second_start >= first_end  # one at a time
    room.wait_for(1)
    assert room.batches == [["hold"]]
