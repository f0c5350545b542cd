"""The compute pool: bounded slots, a bounded wait that ends in Busy (503), cache and coalescing."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

from app.errors import Busy
from app.services.compute import ComputePool


def test_a_full_pool_answers_busy_after_the_queue_timeout():
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=0.2, threads=1)
    release = threading.Event()

    async def scenario() -> None:
        slow = asyncio.create_task(pool.run(release.wait, 5))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        with pytest.raises(Busy) as busy:
            await pool.run(lambda: 1)
        assert time.perf_counter() - started < 2 and busy.value.retry_after >= 1
        release.set()
        assert await slow is True
        assert await pool.run(lambda: 2) == 2  # the slot is free again

    asyncio.run(scenario())


def test_coalescing_and_lru_eviction():
    pool = ComputePool(slots=2, cache_size=2, queue_timeout_s=5, threads=1)
    calls = []

    def compute(x: int) -> int:
        calls.append(x)
        time.sleep(0.05)
        return x * x

    async def scenario() -> None:
        results = await asyncio.gather(*(pool.run_sourced("a", compute, 3) for _ in range(5)))
        assert results == [(9, "computed")] + [(9, "coalesced")] * 4 and calls == [3]
        await pool.run_sourced("b", compute, 4)
        await pool.run_sourced("c", compute, 5)  # evicts "a"
        assert (await pool.run_sourced("a", compute, 3))[1] == "computed" and calls == [3, 4, 5, 3]

    asyncio.run(scenario())


def test_a_failure_reaches_every_waiter_and_is_not_cached():
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=5, threads=1)

    def broken() -> None:
        time.sleep(0.05)
        raise ValueError("boom")

    async def scenario() -> None:
        results = await asyncio.gather(*(pool.run_sourced("k", broken) for _ in range(3)), return_exceptions=True)
        assert all(isinstance(r, ValueError) for r in results)
        assert pool.cached("k") is None

    asyncio.run(scenario())


def test_a_caller_that_leaves_neither_fails_the_others_nor_frees_its_slot():
    """A closed tab or a cancelled sweep must not cancel a computation others wait for, nor free its slot early."""
    running, peak, lock = [0], [0], threading.Lock()

    def slow(x: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return x

    async def scenario() -> None:
        pool = ComputePool(slots=1, cache_size=8, queue_timeout_s=5, threads=1)
        owner = asyncio.create_task(pool.run_sourced("k", slow, 1))
        await asyncio.sleep(0.1)
        waiter = asyncio.create_task(pool.run_sourced("k", slow, 1))
        other = asyncio.create_task(pool.run_sourced("j", slow, 2))
        await asyncio.sleep(0.05)
        owner.cancel()
        assert await waiter == (1, "coalesced")
        assert await other == (2, "computed")
        assert peak[0] == 1  # one slot: never two computations at once
        assert pool.cached("k") == 1

    asyncio.run(scenario())


def test_a_full_queue_answers_busy_at_once():
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=30, threads=1, max_waiting=2)
    release = threading.Event()

    async def scenario() -> None:
        holder = asyncio.create_task(pool.run(release.wait, 5))
        queued = [asyncio.create_task(pool.run(lambda: 1)) for _ in range(2)]
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        with pytest.raises(Busy):
            await pool.run(lambda: 1)
        assert time.perf_counter() - started < 1  # not after the 30 s queue timeout
        release.set()
        assert await holder is True and [await q for q in queued] == [1, 1]

    asyncio.run(scenario())


def child_pid(_: int = 0) -> int:
    import os

    return os.getpid()


def die(_: int = 0) -> None:
    import os

    os._exit(3)  # what the kernel's out-of-memory killer does to a child, as far as the pool can tell


def test_model_runs_happen_in_child_processes_that_come_back_after_one_dies():
    import os

    from app.services.processes import ProcessRunner

    runner = ProcessRunner(1)
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=60, threads=1, processes=runner)

    async def scenario() -> None:
        first = await pool.run_model(child_pid)
        assert first != os.getpid()
        with pytest.raises(BrokenProcessPool):
            await pool.run_model(die)  # the retry dies too: the caller gets the error, not a hang
        assert runner.restarts >= 1 and pool.active == 0
        assert await pool.run_model(child_pid) not in (first, os.getpid())  # a fresh child serves again

    try:
        asyncio.run(scenario())
    finally:
        runner.shutdown()


class SlowToFree:
    """A leftover whose freeing takes a while and leaves a mark (a model of depth 96 takes ~5 ms)."""

    def __init__(self, mark: str) -> None:
        self.mark = mark

    def __del__(self) -> None:
        import time
        from pathlib import Path

        time.sleep(3)
        Path(self.mark).write_text("freed")


def answer_and_leftover(mark: str) -> tuple[dict, SlowToFree]:
    return {"answer": 42}, SlowToFree(mark)


def test_a_compute_process_answers_before_it_frees_the_leftovers(tmp_path):
    from app.services.processes import ProcessRunner, answer_first

    mark = tmp_path / "freed"
    runner = ProcessRunner(1)
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=60, threads=1, processes=runner)

    async def scenario() -> None:
        assert await pool.run_model(answer_first, answer_and_leftover, str(mark)) == {"answer": 42}
        assert not mark.exists()  # the answer came first
        for _ in range(200):  # then the child frees what the job left (within 20 s)
            if mark.exists():
                return
            await asyncio.sleep(0.1)
        raise AssertionError("the leftovers were never freed")

    try:
        asyncio.run(scenario())
    finally:
        runner.shutdown()
    in_process = tmp_path / "in-process"
    assert answer_first(answer_and_leftover, str(in_process)) == {"answer": 42}
    assert in_process.read_text() == "freed"  # without a compute process: freed before the answer returns


def answer_first_kind(queue) -> None:
    from app.services.processes import answer_first

    answer = answer_first(lambda: ({"answer": 42}, None))
    queue.put(type(answer).__name__)  # the name: pickling a wrapper would unwrap it on the way


def test_a_spawned_server_worker_without_compute_processes_gets_the_plain_answer():
    """uvicorn's workers are spawned processes: there, without compute processes, a trace runs in a thread and its
    route must get the answer itself (not the wrapper only a compute process sends back)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    worker = context.Process(target=answer_first_kind, args=(queue,))
    worker.start()
    try:
        assert queue.get(timeout=60) == "dict"
    finally:
        worker.join(timeout=30)


class InACycle:
    """Cyclic garbage, freed only by the cyclic collector; leaves a mark when it is."""

    def __init__(self, mark: str) -> None:
        self.mark, self.me = mark, self

    def __del__(self) -> None:
        from pathlib import Path

        Path(self.mark).write_text("collected")


def leave_a_cycle(mark: str) -> str:
    import gc

    InACycle(mark)
    return "automatic collector " + ("on" if gc.isenabled() else "off")


def test_compute_processes_collect_cycles_after_each_job_not_during_it(tmp_path):
    from app.services.processes import ProcessRunner

    runner = ProcessRunner(1)
    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=60, threads=1, processes=runner)
    marks = [tmp_path / f"job{i}" for i in range(3)]

    async def scenario() -> None:
        for mark in marks:
            assert await pool.run_model(leave_a_cycle, str(mark)) == "automatic collector off"
        for _ in range(100):
            if all(mark.exists() for mark in marks):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"cycles left uncollected: {[m.name for m in marks if not m.exists()]}")

    try:
        asyncio.run(scenario())
    finally:
        runner.shutdown()
