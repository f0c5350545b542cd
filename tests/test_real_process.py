"""The server's models process: one for every worker (a lock), nicer than the web process, started again when it
dies while the pages keep answering (the sentence it held gets one clear error naming its model), and a client that
disconnects takes its queued sentence out of the batch. On a tiny random model folder, offline."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")

from app.models.real.sources import local_source
from app.services import compute, real_client, real_models
from app.services.real_client import ModelsClient
from app.services.sentence_queue import Job, SentenceQueue, run_jobs
from tests.conftest import strict
from tests.test_real_models import App, by_hand, in_process_models, same_numbers, tiny_folder


def test_one_real_process_serves_every_worker_and_is_started_again_when_it_dies(client, monkeypatch, tmp_path: Path):
    folder = tiny_folder(tmp_path / "model", "llama", 0)
    source = local_source(folder)
    assert source is not None
    monkeypatch.setattr(real_models, "sources", lambda: {source.name: source})
    models = real_client.get_models()
    assert isinstance(models, ModelsClient)  # the default server's way: a process of its own

    def trace(text: str) -> Any:
        return client.post("/api/real_trace", json={"model": source.name, "text": text})

    answer = strict(trace("the quick brown fox"))
    assert same_numbers(answer, by_hand(folder))
    before = client.portal.call(models.figures)
    assert before["pid"] != os.getpid() and before["nice"] == min(19, os.nice(0) + 10)
    compute_pool = compute.get_pool()  # a whole job (the set's intervention) runs there too, where it is loaded
    assert client.portal.call(compute_pool.run_real, os.getpid) == before["pid"]
    assert source.name in client.portal.call(compute_pool.run_real, real_models.loaded_descriptions)

    other_worker = ModelsClient(models.socket_path, models.lock_path, models.nice)  # as a second worker would
    try:
        assert client.portal.call(other_worker.figures)["pid"] == before["pid"]
        assert other_worker.supervisor is None and models.supervisor is not None  # the lock: one process
    finally:
        other_worker.close()

    os.kill(before["pid"], signal.SIGSTOP)  # holds the next sentence, so that it is in flight when it dies
    with ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(trace, "the lazy dog")
        time.sleep(0.5)
        assert client.get("/").status_code == 200 and client.post("/api/trace", json={"depth": 2}).status_code == 200
        os.kill(before["pid"], signal.SIGKILL)
        lost = in_flight.result(timeout=60)
    assert lost.status_code == 503 and int(lost.headers["Retry-After"]) > 0
    error = strict(lost)["errors"][0]
    assert error["field"] == "model" and source.name in error["message"] and "started again" in error["message"]

    assert client.get("/models").status_code == 200  # while it starts again
    again = trace("the lazy dog")
    assert again.status_code == 200, again.text
    after = client.portal.call(models.figures)
    assert after["pid"] != before["pid"] and models.supervisor is not None and models.supervisor.restarts == 1


def test_a_client_that_leaves_takes_its_sentence_out_of_the_batch(server_url, client, monkeypatch, tmp_path: Path):
    import httpx

    app = App(client, monkeypatch, tiny_folder(tmp_path / "model", "llama", 0), tmp_path / "cache")
    held, release, ran = threading.Event(), threading.Event(), []

    def holding(batch: list[Job], threads: int) -> list[dict[str, Any]]:
        texts = [job.request.text for job in batch]
        ran.append(texts)
        if "the fox" in texts:
            held.set()
            assert release.wait(30)
        return run_jobs(batch, threads)

    queue = SentenceQueue(16, 1024, 1, run=holding)
    in_process_models(monkeypatch, queue)
    url = f"{server_url}/api/real_trace"
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(httpx.post, url, json={"model": app.name, "text": "the fox"}, timeout=60)
        assert held.wait(30)
        with pytest.raises(httpx.ReadTimeout):  # the client gives up and closes its connection
            httpx.post(url, json={"model": app.name, "text": "the lazy dog"}, timeout=1.0)
        deadline = time.monotonic() + 10
        while queue.describe()["cancelled"] < 1:
            assert time.monotonic() < deadline, "the sentence of the client that left is still queued"
            time.sleep(0.05)
        release.set()
        assert first.result(timeout=60).status_code == 200
    assert ran == [["the fox"]] and queue.waiting() == 0
