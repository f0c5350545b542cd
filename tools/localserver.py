"""A real server of this app on 127.0.0.1, in a child process: for the benchmarks, the load test and the browser tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(process: subprocess.Popen, port: int, timeout_s: float) -> bool:
    """Wait until something accepts connections on 127.0.0.1:port: False if `process` exits or time runs out first."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.05)


@contextmanager
def local_server(
    args: list[str],
    port: int,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout_s: float = 60.0,
    program: str = sys.executable,
) -> Iterator[str]:
    """Run `<program> <args>` (this Python unless told; it must listen on `port`), wait until /api/health
    answers, yield the base URL, and stop the process on exit. RuntimeError if it dies or stays silent."""
    process = subprocess.Popen([program, *args], env=env or dict(os.environ), cwd=cwd)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_health(process, base, timeout_s)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_health(process: subprocess.Popen, base: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(base + "/api/health", timeout=2)
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer /api/health within {timeout_s:.0f} s") from None
            time.sleep(0.3)


def uvicorn_args(port: int) -> list[str]:
    """One worker of app.main:app under uvicorn, quiet."""
    return ["-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]


@contextmanager
def bench_server() -> Iterator[tuple[str, int]]:
    """The benchmarks' server: one uvicorn worker in its default configuration, an empty cache of its own and no
    warm-up. Yields its base URL and the torch threads each of its runs uses."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="resnorm-bench-cache-") as cache_dir:
        env = {**os.environ, "RESNORM_WARM": "0", "RESNORM_CACHE_DIR": cache_dir}
        with local_server(uvicorn_args(port), port, env=env) as base:
            with urllib.request.urlopen(base + "/api/health", timeout=30) as response:
                threads = json.loads(response.read())["compute"]["torch_threads"]
            yield base, int(threads)
