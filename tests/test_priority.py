"""Model runs are scheduled below the web process (RESNORM_COMPUTE_NICE): in compute processes, in the pretrained
models' process (tests/test_real_process.py) and in compute threads, so a page is answered while every compute
slot is busy."""

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


def test_the_default_server_has_a_real_process():
    """transformers' Python would hold the worker's GIL while its event loop answers pages: the pretrained models run
    in a process of the server's own, at the compute nice value (tests/test_real_process.py)."""
    from app.services.real_client import ModelsClient, get_models

    assert isinstance(get_models(), ModelsClient)  # started by the first /models request


def test_the_default_lowers_compute_and_bounds_are_named():
    assert load_settings().compute_nice == 10
    with pytest.raises(ValueError, match="RESNORM_COMPUTE_NICE: must be <= 19"):
        load_settings(compute_nice=20)


def test_a_compute_process_leaves_when_its_worker_is_killed():
    """A worker killed outright (uvicorn's supervisor, the OOM killer) cannot stop its children: they exit alone."""
    import signal
    import subprocess
    import time

    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, os, time\n"
            "from app.services.processes import ProcessRunner\n"
            "print(asyncio.run(ProcessRunner(1).run(1, os.getpid)), flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 15
    while _alive(child):
        assert time.monotonic() < deadline, "the compute process outlived its worker"
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"  # a zombie has exited (its parent, init, reaps it soon)
    except FileNotFoundError:
        return False
