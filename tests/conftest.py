"""Shared fixtures (a TestClient, a live server, a real redis-server) and helpers (strict JSON, page data, norms by hand).

Every answer the tests read must be strict JSON: `strict_json` refuses the NaN/Infinity tokens Python's parser
accepts, and httpx's `Response.json()` is made to refuse them too, so every `.json()` in the suite checks it.
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import re
import shutil
import socket
import tempfile
import threading
import time

import httpx
import pytest
import torch

torch.set_num_threads(1)


def _refuse_constant(token: str):
    raise AssertionError(f"non-strict JSON token {token}")


def strict_json(text: str | bytes):
    """Parse JSON, refusing NaN / Infinity (the product promises null plus a flag instead)."""
    return json.loads(text, parse_constant=_refuse_constant)


def strict(response) -> dict:
    """A response's body as strict JSON."""
    return strict_json(response.text)


def strict_lines(text: str) -> list[dict]:
    """An NDJSON stream, every line strict JSON."""
    return [strict_json(line) for line in text.splitlines() if line.strip()]


def page_data(html: str) -> dict:
    """The JSON block a page hands its script (no inline code)."""
    match = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', html, re.S)
    assert match, "page-data block missing"
    return strict_json(match.group(1))


def layernorm_by_hand(x, eps=1e-5, gamma=None, beta=None) -> tuple[float, float, list[float]]:
    """(mean, biased variance, gamma * (x - mean) / sqrt(variance + eps) + beta) in plain Python floats."""
    n = len(x)
    mean = sum(x) / n
    variance = sum((v - mean) ** 2 for v in x) / n
    gamma, beta = gamma or [1.0] * n, beta or [0.0] * n
    return (
        mean,
        variance,
        [g * (v - mean) / math.sqrt(variance + eps) + b for v, g, b in zip(x, gamma, beta, strict=True)],
    )


def rmsnorm_by_hand(x, eps=1e-5, gamma=None) -> list[float]:
    rms = math.sqrt(sum(v * v for v in x) / len(x) + eps)
    return [g * v / rms for v, g in zip(x, gamma or [1.0] * len(x), strict=True)]


def train_through_api(client, source: dict) -> list[dict]:
    """A training request streamed from POST /api/train: its NDJSON events, the last one `end`."""
    with client.stream("POST", "/api/train", json=source["body"]) as response:
        assert response.status_code == 200
        events = [strict_json(line) for line in response.iter_lines() if line.strip()]
    assert events[-1]["type"] == "end", events[-1]
    return events


_plain_response_json = httpx.Response.json


def _strict_response_json(self, **kwargs):
    kwargs.setdefault("parse_constant", _refuse_constant)
    return _plain_response_json(self, **kwargs)


# every response.json() in the suite checks strictness (patched on the class, so mypy objects: on purpose here)
httpx.Response.json = _strict_response_json  # type: ignore[method-assign]

# Every test session starts with an empty cache of its own (servers started by tests inherit it) and no
# background warm-up competing with the tests; tests/test_cache.py turns the warm-up on where it is the subject.
_CACHE_DIR = tempfile.mkdtemp(prefix="resnorm-test-cache-")
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)
os.environ["RESNORM_CACHE_DIR"] = _CACHE_DIR
os.environ["RESNORM_WARM"] = "0"


def pytest_collection_modifyitems(items):
    # Playwright's sync API keeps an event loop running in this thread for the session: browser tests go last,
    # so the tests that call asyncio.run() are not refused.
    items.sort(key=lambda item: item.nodeid.startswith("tests/browser/"))


def settled() -> None:
    """Wait for the server's start-up import thread (app/experiments/train.py's warm_up_in_background imports
    torch._dynamo, seconds on a loaded machine): importing beside pytest's own set-up of the next test once ended that
    set-up in 'dictionary changed size during iteration', and enabling deterministic algorithms (tests/test_isolation.py)
    imports it too: never both at once."""
    from app.experiments.train import WARM_THREAD

    for thread in threading.enumerate():
        if thread.name == WARM_THREAD:
            thread.join(timeout=120)


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app) as test_client:
        settled()
        yield test_client


@pytest.fixture(scope="session")
def server_url():
    """The app under a real uvicorn server in a thread: disconnects and 429s only exist over a real socket."""
    import uvicorn

    from app.main import app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    settled()
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def redis_url():
    """A real redis-server of its own on a free loopback port, no persistence; stopped by its PID at the end."""
    import shutil
    import subprocess

    import redis

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (.ci/run installs it: apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


# --- the packaged pretrained models, loaded once per test session ---------------------------------------------------


@functools.cache
def _loaded_packaged(name: str):
    from app.models.real.loading import load_model
    from app.models.real.sources import packaged_source
    from app.settings import get_settings

    source = packaged_source(name)
    if source is None:
        return None
    # SmolLM2's first load dequantises its GGUF file once (~20-60 s), later loads take ~1 s idle, ~19 s on a busy
    # machine: every test that reads the packaged models shares this one copy (the traces never change it)
    return load_model(source, get_settings().resolved_models_dir())


def packaged_model(name: str):
    """The packaged model `name` (minilm, smollm2), loaded once per session; skips the test where it is missing."""
    pytest.importorskip("transformers")
    loaded = _loaded_packaged(name)
    if loaded is None:
        pytest.skip(f"{name} is not installed")
    return loaded
