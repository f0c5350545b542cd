"""Shared fixtures: one TestClient for the app (no server process needed)."""
from __future__ import annotations

import atexit
import os
import shutil
import socket
import tempfile
import threading
import time

import pytest
import torch

torch.set_num_threads(1)

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


@pytest.fixture(scope="session")
def client():
    from fastapi.testclient import TestClient

    from app.main import app

    with TestClient(app) as test_client:
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
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL)
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
