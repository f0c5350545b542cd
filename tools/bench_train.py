"""Training benchmark: `python -m tools.bench_train`. Not a test: it prints figures, it asserts nothing.

Target (issue 5): a 6-block d_model-64 model trains 300 steps of `copy` in < 30 s on 2 cores, and the
first streamed step reaches the client in < 1 s. Measured through a real server socket, so it includes
request validation, model building, the thread hand-off and the NDJSON encoding.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    import uvicorn

TARGET_TOTAL_S = 30.0
TARGET_FIRST_S = 1.0


def _serve() -> tuple[str, uvicorn.Server]:
    import uvicorn

    from app.main import app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", server


def timed_run(url: str, body: dict) -> dict:
    """Seconds to the first `step` line and to the end of the stream, plus the final event of run 0."""
    started = time.perf_counter()
    first, done = None, None
    with httpx.stream("POST", f"{url}/api/train", json=body, timeout=300) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            event = json.loads(line)
            if event.get("type") == "step" and first is None:
                first = time.perf_counter() - started
            if event.get("type") == "done" and event["run"] == 0:
                done = event
    return {"first_step_s": first, "total_s": time.perf_counter() - started, "done": done}


def main() -> None:
    # An empty cache of our own and no warm-up: every run below trains, except the replay, which says so.
    cache_dir = tempfile.mkdtemp(prefix="resnorm-bench-train-")
    os.environ.update(RESNORM_WARM="0", RESNORM_CACHE_DIR=cache_dir)
    from app.settings import get_settings

    url, server = _serve()
    default_sizes = {"runs": [{"depth": 6, "d_model": 64}], "task": "copy", "steps": 300, "lr": 1e-3}
    preset_sizes = {
        **default_sizes,
        "runs": [{"depth": 6, "d_model": 64, "seq_len": 16, "vocab_size": 16, "batch": 16}],
    }
    print(f"torch threads per training run: {get_settings().threads_per_run()}")
    time.sleep(3.0)  # a server is started before its first lesson: let the one-time optimizer import finish
    for label, body in (
        ("first request, default sizes (batch 4 x 32 tokens, vocab 128)", default_sizes),
        ("second request, default sizes, another seed", {**default_sizes, "seed": 1}),
        ("preset sizes (batch 16 x 16 tokens, vocab 16)", preset_sizes),
        ("the first request again (replayed from the finished-run cache)", default_sizes),
    ):
        result = timed_run(url, body)
        done = result["done"]
        print(
            f"{label}: first step {result['first_step_s']:.2f} s (target < {TARGET_FIRST_S} s), "
            f"300 steps {result['total_s']:.1f} s (target < {TARGET_TOTAL_S} s); final loss {done['final_loss']:.3f}, "
            f"held-out accuracy {done['accuracy']:.3f}"
        )
    server.should_exit = True
    shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
