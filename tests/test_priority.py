"""Model runs are scheduled below the web process (RESNORM_COMPUTE_NICE): in compute processes and in the threads that
run the real models, so a page is answered while every compute slot is busy."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from app.services.compute import ComputePool
from app.services.processes import ProcessRunner
from app.settings import load_settings

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="per-thread nice values are a Linux feature")


def _priority() -> int:
    """This thread's nice value (on Linux each thread has its own)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_compute_threads_run_nicer_and_the_event_loop_does_not():
    pool = ComputePool(slots=2, cache_size=0, queue_timeout_s=5, threads=1, nice=7)
    here = _priority()
    ran = asyncio.run(pool.run(_priority))
    assert ran == min(19, here + 7) and _priority() == here


def test_compute_processes_run_nicer():
    runner = ProcessRunner(1, nice=5)
    try:
        child = asyncio.run(runner.run(1, os.nice, 0))
    finally:
        runner.shutdown()
    assert child == min(19, os.nice(0) + 5)


def test_the_default_lowers_compute_and_bounds_are_named():
    assert load_settings().compute_nice == 10
    with pytest.raises(ValueError, match="RESNORM_COMPUTE_NICE: must be <= 19"):
        load_settings(compute_nice=20)
