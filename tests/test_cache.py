"""The shared result cache: on disk, shared by processes, never serving a damaged entry; replayed training;
the warm-up at the lowest priority."""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from app.services.cache import ResultCache, decode, encode
from app.services.compute import ComputePool, get_pool
from tests.conftest import strict_json, strict_lines
from tools.localserver import free_port, local_server, uvicorn_args

SMALL = {"step": 1, "loss": 0.5, "values": [1.0, float("inf"), -0.0]}


def large_value(n: int = 20_000) -> dict:
    """Incompressible enough (random floats) to be stored by diskcache in a file of its own, not in SQLite."""
    rng = random.Random(0)
    return {"layers": [rng.random() for _ in range(n)]}


def test_entries_round_trip_with_nan_and_inf():
    value = {"a": [float("nan"), float("inf"), 1e-300], "b": None, "c": "层"}
    back = decode(encode(value))
    assert back["a"][1] == float("inf") and back["a"][0] != back["a"][0] and back["a"][2] == 1e-300
    assert back["b"] is None and back["c"] == "层"


def test_a_second_cache_on_the_same_folder_reads_what_the_first_wrote(tmp_path):
    """Two worker processes of one server: two ResultCache objects over one folder, no shared memory."""
    first = ResultCache(tmp_path, 2**26, namespace="t")
    first.set("k", SMALL)
    second = ResultCache(tmp_path, 2**26, namespace="t")
    found = second.get("k")
    assert found is not None
    value, source = found
    assert source == "disk" and value["values"][1] == float("inf") and value["loss"] == 0.5
    again = second.get("k")
    assert again is not None and again[1] == "memory"
    assert ResultCache(tmp_path, 2**26, namespace="other code").get("k") is None  # another code version


def _damage_file_entries(folder: Path) -> int:
    files = [p for p in folder.rglob("*.val")]
    for path in files:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    return len(files)


def _damage_database_entries(folder: Path) -> int:
    with sqlite3.connect(folder / "cache.db") as db:
        rows = db.execute("SELECT rowid, value FROM Cache WHERE typeof(value) = 'blob'").fetchall()
        for rowid, value in rows:
            data = bytearray(value)
            data[len(data) // 2] ^= 0xFF
            db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (bytes(data), rowid))
    return len(rows)


@pytest.mark.parametrize(
    "value,damage",
    [(SMALL, _damage_database_entries), (large_value(), _damage_file_entries)],
    ids=["in-sqlite", "in-a-file"],
)
def test_a_damaged_entry_is_dropped_and_recomputed_never_served(tmp_path, value, damage):
    writer = ResultCache(tmp_path, 2**26, namespace="t")
    writer.set("k", value)
    assert damage(tmp_path) == 1  # the entry really was where this test damages it
    reader = ResultCache(tmp_path, 2**26, namespace="t")  # a fresh process: nothing in memory
    assert reader.get("k") is None and reader.counts["corrupt"] == 1
    assert not reader.disk.contains(reader.stored_key("k"))  # dropped, so the next request recomputes and stores

    pool = ComputePool(slots=1, cache_size=4, queue_timeout_s=5, threads=1, cache=reader)

    async def recompute():
        answer = await pool.run_sourced("k", lambda: value)
        await pool.flush()  # the disk copy is written after the answer
        return answer

    result, source = asyncio.run(recompute())
    assert source == "computed" and result == value
    assert ResultCache(tmp_path, 2**26, namespace="t").get("k") == (value, "disk")


def test_an_unreadable_database_file_means_no_disk_cache_not_a_crash(tmp_path):
    (tmp_path / "cache.db").write_bytes(b"this is not an SQLite database" * 100)
    cache = ResultCache(tmp_path, 2**26, namespace="t")
    assert not cache.disk.ok and cache.stats()["disk"]["error"]
    cache.set("k", SMALL)
    assert cache.get("k") == (SMALL, "memory")


def test_the_disk_cache_is_bounded(tmp_path):
    cache = ResultCache(tmp_path, 2 * 2**20, memory_items=1, namespace="t")
    for i in range(40):  # ~40 x 180 kB written into a 2 MB cache
        cache.set(f"k{i}", large_value())
    assert cache.disk.volume() < 3 * 2**20
    assert cache.get("k39") is not None and cache.get("k0") is None  # the oldest left first


def test_a_server_process_answers_from_the_disk_cache_what_this_process_computed(client):
    """Workers of one server share the disk cache: a separate process reads what the test client's app stored."""
    body = {"depth": 5, "seed": 4_040}
    stored = get_pool().cache.counts["stored"]
    first = client.post("/api/trace", json=body)
    assert first.headers["x-resnorm-cache"] == "computed"
    wait_until(lambda: get_pool().cache.counts["stored"] > stored)  # written to disk just after the answer
    port = free_port()
    env = {**os.environ, "RESNORM_COMPUTE_PROCESSES": "0"}
    with local_server(uvicorn_args(port), port, env=env) as base:
        second = httpx.post(f"{base}/api/trace", json=body, timeout=60)
        health = httpx.get(f"{base}/api/health", timeout=10).json()
    assert second.headers["x-resnorm-cache"] == "disk" and second.json()["layers"] == first.json()["layers"]
    assert health["compute"]["computed"] == 0 and health["compute"]["cache"]["hits"]["disk"] == 1


def wait_until(condition, timeout_s: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_a_finished_training_run_is_replayed_from_the_shared_cache_and_says_so(client):
    """Replays come from the shared cache: every layer, so a restart or another worker replays too."""
    body = {
        "runs": [{"depth": 2, "d_model": 16, "n_heads": 2, "seq_len": 8, "vocab_size": 8}],
        "steps": 12,
        "seed": 31_337,
    }
    before = client.get("/api/train/status").json()
    first = strict_lines(client.post("/api/train", json=body).text)
    second = strict_lines(client.post("/api/train", json=body).text)
    after = client.get("/api/train/status").json()
    assert first[-1]["type"] == "end" and "cached" not in first[0] and "cached" not in first[-1]
    assert second[0]["cached"] is True and second[-1]["cached"] is True
    strip = lambda events: [{k: v for k, v in e.items() if k != "cached"} for e in events]  # noqa: E731
    assert strip(second) == first  # the same losses, step for step
    assert after["started"] == before["started"] + 1 and after["replays"] == before["replays"] + 1


def test_a_stopped_training_run_is_not_replayed(client):
    from app.experiments.train import TrainRequest
    from app.services.training import cache_key

    request = TrainRequest(
        runs=[{"depth": 1, "d_model": 8, "n_heads": 2, "seq_len": 8, "vocab_size": 8}], steps=2000, seed=99
    )
    with client.stream("POST", "/api/train", json=request.model_dump()) as response:
        lines = response.iter_lines()
        assert strict_json(next(lines))["type"] == "start"
    assert get_pool().cache.get(cache_key(request)) is None


def _tiny_warm_items(calls: list) -> list:
    from app.experiments.requests import Computation

    def square(x: int) -> int:
        calls.append(x)
        return x * x

    return [Computation(f"warm-test:{i}", square, (i,), f"item {i}") for i in range(3)]


def test_the_warm_up_waits_for_idle_slots_and_takes_none(tmp_path, monkeypatch):
    """While a user's computation holds the only slot, and for QUIET_S after it, the warm-up starts nothing; then it
    computes everything."""
    from app.services import warmup

    calls: list = []
    items = _tiny_warm_items(calls)
    monkeypatch.setattr(warmup, "PROGRESS", warmup.WarmProgress())
    monkeypatch.setattr(warmup, "QUIET_S", 0.4)
    pool = ComputePool(
        slots=1, cache_size=8, queue_timeout_s=5, threads=1, cache=ResultCache(tmp_path, 2**26, namespace="t")
    )
    release = threading.Event()

    async def scenario() -> None:
        user = asyncio.create_task(pool.run(release.wait, 10))
        await asyncio.sleep(0.05)
        warming = asyncio.create_task(warmup.warm_in_background(pool, items, use_processes=False))
        await asyncio.sleep(0.3)
        assert calls == [] and warmup.PROGRESS.total == 3 and warmup.PROGRESS.done == 0
        release.set()
        await user
        await asyncio.sleep(0.15)  # idle, but a job took a slot less than QUIET_S ago: someone is using the server
        assert calls == []
        await asyncio.wait_for(warming, timeout=10)

    asyncio.run(scenario())
    assert sorted(calls) == [0, 1, 2] and warmup.PROGRESS.payload(True)["done"] == 3
    assert pool.active == 0 and pool.cache.get("warm-test:2") == (4, "memory")


def test_a_user_never_waits_behind_the_warm_up_computing_the_same_key(tmp_path, monkeypatch):
    """The warm-up's run is at the lowest priority: a request for the key it computes now is computed at full
    priority beside it, not joined to it (on a busy machine the joined request waited seconds for a starved run)."""
    from app.experiments.requests import Computation
    from app.services import warmup
    from app.services.compute import COMPUTED

    monkeypatch.setattr(warmup, "PROGRESS", warmup.WarmProgress())
    pool = ComputePool(
        slots=1, cache_size=8, queue_timeout_s=5, threads=1, cache=ResultCache(tmp_path, 2**26, namespace="t")
    )
    started, release = threading.Event(), threading.Event()

    def slow_square(x: int) -> int:
        started.set()
        release.wait(10)
        return x * x

    items = [Computation("warm-test:slow", slow_square, (7,), "item slow")]

    async def scenario() -> tuple[tuple, bool]:
        warming = asyncio.create_task(warmup.warm_in_background(pool, items, use_processes=False))
        await asyncio.to_thread(started.wait, 5)
        user = await asyncio.wait_for(pool.run_sourced("warm-test:slow", lambda x: x * x, 7), timeout=5)
        still_warming = not warming.done()
        release.set()
        await asyncio.wait_for(warming, timeout=10)
        return user, still_warming

    user, still_warming = asyncio.run(scenario())
    assert user == (49, COMPUTED) and still_warming
    assert pool.cache.get("warm-test:slow") == (49, "memory") and warmup.PROGRESS.done == 1


def test_warm_all_fills_the_cache_that_a_server_then_reads(tmp_path, monkeypatch):
    from app.services import warmup

    calls: list = []
    items = _tiny_warm_items(calls)
    pool = ComputePool(
        slots=2, cache_size=8, queue_timeout_s=5, threads=1, cache=ResultCache(tmp_path, 2**26, namespace="t")
    )
    lines: list[str] = []
    progress = asyncio.run(warmup.warm_all(pool, items, report=lines.append))
    assert progress.done == progress.total == 3 and progress.failed == 0 and len(lines) == 3
    assert ResultCache(tmp_path, 2**26, namespace="t").get("warm-test:1") == (1, "disk")


def test_the_default_views_are_valid_requests_with_distinct_keys():
    from app.pages import warm_computations

    items = warm_computations()
    keys = [item.key for item in items]
    assert len(keys) == len(set(keys)) and len(items) > 96  # at least the default sweep's 96 depths
    assert all(item.fn.__module__.startswith("app.") and item.label for item in items)  # picklable by name
    # the pages' single views first, then the deck (opened right after the start), the 1..96 sweep last
    groups = [
        "sweep" if i.label.endswith(" sweep") else "lecture" if i.label.startswith("lecture ") else "page"
        for i in items
    ]
    assert groups == sorted(groups, key=["page", "lecture", "sweep"].index) and groups.count("sweep") >= 90


# --- coalescing across the worker processes of one server: they share only the disk folder --------------------


def _pool_on(folder: Path) -> ComputePool:
    """What one worker process of a server has: its own pool and memory, the server's disk folder."""
    return ComputePool(
        slots=1, cache_size=4, queue_timeout_s=5, threads=1, cache=ResultCache(folder, 2**26, namespace="t")
    )


async def _until(condition, timeout_s: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def test_two_workers_of_one_server_compute_a_request_once(tmp_path):
    """While one worker computes a request, another worker asked the same waits for it and answers from disk."""
    calls: list[int] = []

    def slow_square(x: int) -> int:
        calls.append(x)
        time.sleep(0.4)
        return x * x

    first, second = _pool_on(tmp_path), _pool_on(tmp_path)

    async def scenario() -> None:
        computing = asyncio.create_task(first.run_sourced("k", slow_square, 7))
        await _until(lambda: second.cache.computing_elsewhere("k"))
        assert await second.run_sourced("k", slow_square, 7) == (49, "coalesced")
        assert await computing == (49, "computed")

    asyncio.run(scenario())
    assert calls == [7] and (first.computed, second.computed, second.coalesced) == (1, 0, 1)
    assert not second.cache.computing_elsewhere("k") and not first.cache.computing_elsewhere("k")


def test_a_failed_computation_in_another_worker_is_computed_here(tmp_path):
    """A failure is not cached and releases the marker: the waiting worker computes, it does not wait forever."""

    def broken() -> None:
        time.sleep(0.3)
        raise ValueError("boom")

    first, second = _pool_on(tmp_path), _pool_on(tmp_path)

    async def scenario() -> None:
        failing = asyncio.create_task(first.run_sourced("k", broken))
        await _until(lambda: second.cache.computing_elsewhere("k"))
        assert await second.run_sourced("k", lambda: 3) == (3, "computed")
        with pytest.raises(ValueError):
            await failing

    asyncio.run(scenario())


def test_the_marker_of_a_worker_that_died_is_taken_over_at_once(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pool = _pool_on(tmp_path)
    pool.cache.disk.add("computing:" + pool.cache.stored_key("k"), f"{int(gone.stdout)}:other".encode(), 600)
    assert not pool.cache.computing_elsewhere("k")

    async def scenario() -> tuple:
        answer = await pool.run_sourced("k", lambda: 5)
        await pool.flush()
        return answer

    assert asyncio.run(scenario()) == (5, "computed")
    assert pool.cache.disk.get("computing:" + pool.cache.stored_key("k")) is None  # released after the disk write


def test_two_server_processes_on_one_cache_folder_compute_a_trace_once(tmp_path):
    """Real processes (as `--workers 2` starts them): the second asks while the first computes a depth-96 trace."""
    env = {**os.environ, "RESNORM_CACHE_DIR": str(tmp_path), "RESNORM_WARM": "0"}
    body = {"depth": 96, "seed": 5_151}
    with (
        local_server(uvicorn_args(port_a := free_port()), port_a, env=env) as first,
        local_server(uvicorn_args(port_b := free_port()), port_b, env=env) as second,
    ):
        with ThreadPoolExecutor(1) as background:
            computing = background.submit(httpx.post, f"{first}/api/trace", json=body, timeout=120)
            wait_until(lambda: httpx.get(f"{first}/api/health", timeout=10).json()["compute"]["active"] == 1)
            waited = httpx.post(f"{second}/api/trace", json=body, timeout=120)
            computed = computing.result()
        health = httpx.get(f"{second}/api/health", timeout=10).json()["compute"]
    assert computed.headers["x-resnorm-cache"] == "computed" and waited.headers["x-resnorm-cache"] == "coalesced"
    assert waited.json()["layers"] == computed.json()["layers"]
    assert health["computed"] == 0 and health["coalesced"] == 1


# --- the warm-up set: one list, derived from the page registry, for a running server and --warm-only alike -------

_WARM_ONLY = """
import json, sys
import app.services.warmup as warmup
warmup.warm_command = lambda items: print(json.dumps(sorted(i.key for i in items))) or 0
from app.__main__ import main
main(["--warm-only"])
"""

_SERVER = """
import json
import app.services.warmup as warmup
seen = []
async def record(pool, items, use_processes):
    seen.extend(i.key for i in items)
warmup.warm_in_background = record
from fastapi.testclient import TestClient
from app.main import app
with TestClient(app):
    pass
print(json.dumps(sorted(seen)))
"""


def _warm_keys(script: str, tmp_path: Path) -> list[str]:
    import json
    import os
    import subprocess
    import sys

    env = {
        **os.environ,
        "RESNORM_WARM": "1",
        "RESNORM_COMPUTE_PROCESSES": "0",
        "RESNORM_CACHE_DIR": str(tmp_path),
    }
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_warm_only_and_a_running_server_warm_the_same_set(tmp_path):
    """Each in a fresh interpreter, so neither sees pages the other imported: the deck's charts are in both."""
    from app.experiments.lecture import DECK
    from app.services.deck import source_request

    warm_only, server = _warm_keys(_WARM_ONLY, tmp_path), _warm_keys(_SERVER, tmp_path)
    assert warm_only == server and len(server) == len(set(server))
    deck_trace = next(s for slide in DECK if slide["chart"] for s in slide["chart"]["sources"] if s["api"] == "trace")
    assert source_request(deck_trace)[1].cache_key() in server  # type: ignore[attr-defined]
