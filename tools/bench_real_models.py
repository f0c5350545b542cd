"""`python -m tools.bench_real_models`: load time, memory and answer times of the packaged pretrained models.

Per model (each in a fresh child process, so load times and memory are the first ones): the load (for SmolLM2
also the one-off dequantisation, when the float32 copy is not there yet), parameter memory, the process's
resident and proportional set size (PSS: shared memory-mapped pages counted once per sharer), the first answer
after the load (with gradients for the causal model) and a repeated answer from the result cache, through
POST /api/real_trace on an in-process TestClient, a text of exactly the 256-token cap (its first answer's time
against the 15 s target, and its size), and 8 sentences as one padded batch against one pass each (CPU time,
largest relative difference). One torch thread, like a server request on 2 cores. Then the room of sentences
(tools/bench_real_room.py) unless --no-room.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

    from app.models.real.loading import LoadedModel

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
        at_cap = cap_answer(client, name)
    answer = first.json()
    return {
        **_memory_mb(),
        **batch_against_single(loaded),
        "model": name,
        "tokens": answer["summary"]["tokens"],
        "gradients": answer["gradient"] is not None,
        "load_s": round(load_s, 2),
        "parameters_mb": round(loaded.memory_mb, 1),
        "first_answer_s": round(first_s, 3),
        "cached_answer_ms": round(cached_ms, 1),
        "cache": again.headers["X-Resnorm-Cache"],
        **at_cap,
    }


CAP_TARGET_S = 15.0  # a 256-token SmolLM2 trace with gradients on an idle 2-core machine


def cap_answer(client: TestClient, name: str) -> dict[str, object]:
    """A text of exactly the token cap (the built-in English sentences, repeated and cut where /api/real_tokens
    says): the time of its first answer (with gradients for a causal model) and the answer's size."""
    from app.config.real import MAX_TEXT_CHARS, MAX_TOKENS
    from app.experiments.real_sentences import SENTENCES

    text = (" ".join(SENTENCES["en"]) * 8)[:MAX_TEXT_CHARS]  # more than 256 tokens in 2,000 characters
    counted = client.post("/api/real_tokens", json={"model": name, "text": text}).json()
    body = {"model": name, "text": text[: counted["truncate_at"]]}
    started = time.perf_counter()
    answer = client.post("/api/real_trace", json=body)
    seconds = time.perf_counter() - started
    answer.raise_for_status()
    tokens = answer.json()["summary"]["tokens"]
    return {
        "cap_tokens": tokens,
        "cap_answer_s": round(seconds, 2),
        "cap_answer_kb": round(len(answer.content) / 1000, 1),
        "cap_target_met": tokens == MAX_TOKENS and seconds <= CAP_TARGET_S,
    }


def batch_against_single(loaded: LoadedModel, count: int = 8) -> dict[str, object]:
    """The largest relative difference between a padded batch's answers and one pass per sentence (stream norms
    and gradient norms per token), and the CPU time of each way."""
    from app.experiments.real_batch import trace_batch
    from app.experiments.real_trace import TraceOptions, trace_real
    from tools.bench_real_room import base_sentences

    texts = base_sentences(count)
    started = time.process_time()
    single = [trace_real(loaded, text, TraceOptions()) for text in texts]
    single_cpu = time.process_time() - started
    started = time.process_time()
    batched = trace_batch(loaded, texts, TraceOptions())
    batch_cpu = time.process_time() - started
    worst = {"stream": 0.0, "gradient": 0.0}
    for alone, together in zip(single, batched, strict=True):
        for part in worst:
            if alone[part] is not None:
                a, b = alone[part]["per_token"], together[part]["per_token"]
                worst[part] = max(worst[part], _largest_relative(a, b))
    return {
        "batch_of": count,
        "batch_cpu_s": round(batch_cpu, 2),
        "single_cpu_s": round(single_cpu, 2),
        "batch_max_rel_diff": {k: float(f"{v:.2g}") for k, v in worst.items()},
    }


def _largest_relative(a: list[list[float]], b: list[list[float]]) -> float:
    pairs = [(x, y) for row_a, row_b in zip(a, b, strict=True) for x, y in zip(row_a, row_b, strict=True)]
    return max((abs(x - y) / abs(x) for x, y in pairs if abs(x) > 1e-6), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="measure one model in this process (the parent runs each in a child)")
    parser.add_argument(
        "--no-room", action="store_true", help="leave out the room of sentences (tools/bench_real_room.py)"
    )
    args = parser.parse_args()
    if args.model:
        print(json.dumps(measure(args.model)))
        return
    from app.models.real.sources import available_sources

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
    if not args.no_room:
        from tools import bench_real_room

        bench_real_room.main([])


if __name__ == "__main__":
    main()
