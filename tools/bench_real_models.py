"""`python -m tools.bench_real_models`: load time, memory and answer times of the packaged pretrained models.

Per model (each in a fresh child process, so load times and memory are the first ones): the load (for SmolLM2
also the one-off dequantisation, when the float32 copy is not there yet), parameter memory, the process's
resident and proportional set size (PSS: shared memory-mapped pages counted once per sharer), the first answer
after the load (with gradients for the causal model) and a repeated answer from the result cache, through
POST /api/real_trace on an in-process TestClient. One torch thread, like a server request on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SENTENCE = "Residual connections keep the gradient alive through thirty blocks of a small model."  # ~16 tokens


def _memory_mb() -> dict[str, float]:
    """Resident and proportional set size of this process (Linux /proc; empty elsewhere)."""
    try:
        with open("/proc/self/smaps_rollup") as handle:
            fields = {line.split(":")[0]: float(line.split()[1]) / 1024 for line in handle if line.endswith("kB\n")}
    except OSError:
        return {}
    return {"rss_mb": round(fields.get("Rss", 0), 1), "pss_mb": round(fields.get("Pss", 0), 1)}


def measure(name: str) -> dict[str, object]:
    import tempfile

    os.environ.setdefault("RESNORM_CACHE_DIR", tempfile.mkdtemp(prefix="bench-real-"))
    os.environ["RESNORM_WARM"] = "0"
    os.environ["RESNORM_COMPUTE_PROCESSES"] = "0"
    os.environ["RESNORM_TORCH_THREADS"] = "1"
    from fastapi.testclient import TestClient

    from app.main import app
    from app.services.real_models import get_shelf, resolve

    with TestClient(app) as client:
        started = time.perf_counter()
        loaded = get_shelf().get(*resolve(name))
        load_s = time.perf_counter() - started
        body = {"model": name, "text": SENTENCE}
        started = time.perf_counter()
        first = client.post("/api/real_trace", json=body)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        again = client.post("/api/real_trace", json=body)
        cached_ms = (time.perf_counter() - started) * 1000
    answer = first.json()
    return {
        "model": name,
        "tokens": answer["summary"]["tokens"],
        "gradients": answer["gradient"] is not None,
        "load_s": round(load_s, 2),
        "parameters_mb": round(loaded.memory_mb, 1),
        **_memory_mb(),
        "first_answer_s": round(first_s, 3),
        "cached_answer_ms": round(cached_ms, 1),
        "cache": again.headers["X-Resnorm-Cache"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="measure one model in this process (the parent runs each in a child)")
    args = parser.parse_args()
    if args.model:
        print(json.dumps(measure(args.model)))
        return
    from app.models.pretrained.sources import available_sources

    names = [n for n in ("minilm", "smollm2") if n in available_sources()]
    if not names:
        print("no packaged model here: resnorm-explorer fetch-models")
        return
    for name in names:
        out = subprocess.run(
            [sys.executable, "-m", "tools.bench_real_models", "--model", name], capture_output=True, text=True
        )
        if out.returncode != 0:
            print(f"{name}: failed\n{out.stderr[-2000:]}")
            continue
        print(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
