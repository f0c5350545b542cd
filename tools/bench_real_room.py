"""`python -m tools.bench_real_room`: a room of students sending different sentences to one pretrained model at once.

A real server (`python -m app`, 2 workers, an empty cache that keeps nothing in memory) traces N different sentences
of 8-30 tokens: one after another from one client, then all N at once from N clients, first with the models
process batching them (RESNORM_MODELS_BATCH=16) and then tracing one at a time (RESNORM_MODELS_BATCH=1, on a second
server). Every client sends again after a busy answer's Retry-After, at most 3 times, and must be answered within
120 s. Printed side by side: wall time, throughput against one after another, p50 / p95 / max latency, retries,
errors and the batch sizes the answers report; then whether the targets are met (throughput >= 1.5x at 20 clients
batched, no error, every answer within 120 s). Development only (tools/bench_real_models.py runs it).

Each phase gets sentences of its own (a name in front, one name per phase, all of one token count), so no
phase is answered from another's cache, and every phase traces the same token counts.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.localserver import free_port, local_server

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = [
    "The student",
    "A tired lecturer",
    "Every residual block",
    "The new teaching assistant",
    "My classmate",
    "The small pretrained model",
    "Our professor from Shanghai",
    "The curious reader",
    "A layer norm",
]
VERBS = ["explains", "doubts", "draws", "measures", "remembers", "questions", "plots", "forgets", "describes"]
OBJECTS = [
    "why the stream grows",
    "the norm of every token",
    "the attention sink on the first token",
    "how gradients flow back",
    "the massive activation in one coordinate",
    "a chart of thirty blocks",
]
TAILS = [
    "",
    "before the break.",
    "on the whiteboard, slowly and carefully.",
    "in front of the whole class today.",
    "while the projector warms up and the room slowly fills with sleepy students.",
    "again.",
]
# Names put in front of the sentences, one per phase; those of one token count in the model's tokenizer are used
NAMES = [
    "Alice",
    "Bob",
    "Carol",
    "Dave",
    "Eve",
    "Frank",
    "Grace",
    "Henry",
    "Ivan",
    "Judy",
    "Kate",
    "Leo",
    "Mary",
    "Nick",
    "Oscar",
    "Paul",
    "Anna",
    "Tom",
    "Sam",
    "Max",
]
PHASES = 5
RETRIES, DEADLINE_S = 3, 120.0


def base_sentences(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        sentence = " ".join(
            p for p in (rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)) if p
        )
        if sentence not in found:
            found.append(sentence)
    return found


def phase_sentences(model: str, count: int) -> dict[str, list[str]]:
    """Per marker (one phase each), `count` sentences "<marker> says: <base>" of 8-30 tokens, each base with the
    same token count under every marker (checked with the model's own tokenizer, loaded alone)."""
    from app.config.real import RealTraceRequest
    from app.services.real_models import count_tokens, resolve

    source, digest = resolve(model)

    def tokens(text: str) -> int:
        return int(count_tokens(source, digest, RealTraceRequest(model=model, text=text))["tokens"])

    by_length: dict[int, list[str]] = {}
    for name in NAMES:
        by_length.setdefault(tokens(f"{name} says: hello"), []).append(name)
    markers = max(by_length.values(), key=len)[:PHASES]
    kept = []
    for base in base_sentences(8 * count):
        counts = {tokens(f"{m} says: {base}") for m in markers}
        if len(counts) == 1 and 8 <= counts.pop() <= 30:
            kept.append(base)
        if len(kept) == count:
            break
    if len(markers) < PHASES or len(kept) < count:
        raise RuntimeError(f"{model}: {len(markers)} names and {len(kept)} sentences of equal length, too few")
    return {m: [f"{m} says: {b}" for b in kept] for m in markers}


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    retries: int = 0
    errors: list[str] = field(default_factory=list)
    batches: Counter = field(default_factory=Counter)
    wall_s: float = 0.0

    def row(self, sequential_s: float | None) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        quantile = (lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]) if ordered else (lambda q: None)
        return {
            "phase": self.name,
            "wall_s": round(self.wall_s, 2),
            "throughput_vs_one_after_another": round(sequential_s / self.wall_s, 2) if sequential_s else 1.0,
            "p50_s": _round(quantile(0.5)),
            "p95_s": _round(quantile(0.95)),
            "max_s": _round(max(ordered, default=None)),
            "retries": self.retries,
            "errors": len(self.errors),
            "batch_sizes": dict(sorted(self.batches.items())),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


async def one_client(client: Any, model: str, text: str, phase: Phase) -> None:
    started = time.perf_counter()
    for attempt in range(RETRIES + 1):
        try:
            response = await client.post("/api/real_trace", json={"model": model, "text": text}, timeout=DEADLINE_S)
        except Exception as exc:  # a timeout or a dropped connection is an error of the room
            phase.errors.append(f"{type(exc).__name__}")
            return
        if response.status_code == 503 and "Retry-After" in response.headers and attempt < RETRIES:
            phase.retries += 1
            await asyncio.sleep(float(response.headers["Retry-After"]))
            continue
        break
    elapsed = time.perf_counter() - started
    if response.status_code != 200 or elapsed > DEADLINE_S:
        phase.errors.append(f"{response.status_code} after {elapsed:.0f} s")
        return
    phase.latencies.append(elapsed)
    phase.batches[response.json()["summary"].get("batch", 1)] += 1


async def run_phase(base: str, model: str, texts: list[str], name: str, at_once: bool) -> Phase:
    import httpx

    phase = Phase(name)
    limits = httpx.Limits(max_connections=len(texts) + 4, max_keepalive_connections=len(texts) + 4)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=DEADLINE_S) as client:
        started = time.perf_counter()
        if at_once:
            await asyncio.gather(*(one_client(client, model, text, phase) for text in texts))
        else:
            for text in texts:
                await one_client(client, model, text, phase)
        phase.wall_s = time.perf_counter() - started
    return phase


def serve(batch: int) -> tuple[list[str], int, dict[str, str]]:
    port = free_port()
    env = {
        **os.environ,
        "RESNORM_WARM": "0",
        "RESNORM_CACHE_SIZE": "0",
        "RESNORM_MODELS_BATCH": str(batch),
        "RESNORM_CACHE_DIR": tempfile.mkdtemp(prefix="bench-room-"),
    }
    return ["-m", "app", "--port", str(port), "--workers", "2", "--log-level", "warning"], port, env


def room(model: str, sizes: tuple[int, ...] = (20, 60)) -> list[dict[str, Any]]:
    """The phases of one model, on a batching server and on one that traces one sentence at a time."""
    sentences = phase_sentences(model, max(sizes))
    markers = iter(sentences)
    rows: list[dict[str, Any]] = []
    for batch in (16, 1):
        args, port, env = serve(batch)
        with local_server(args, port, env=env, cwd=str(ROOT), timeout_s=180) as base:
            # the load, and each worker's first look at the weight files (their digest) from fresh connections
            warm_up = [f"Warm up the {model} model, {i}." for i in range(4)]
            asyncio.run(run_phase(base, model, warm_up[:1], "load", False))
            asyncio.run(run_phase(base, model, warm_up[1:], "workers", True))
            if batch == 16:
                texts = sentences[next(markers)]
                sequential = asyncio.run(run_phase(base, model, texts, "one after another", False))
                per_sentence = sequential.latencies
                rows.append(sequential.row(None))
            for size in sizes:
                texts = sentences[next(markers)][:size]
                name = f"{size} at once, " + ("batched" if batch > 1 else "one at a time")
                phase = asyncio.run(run_phase(base, model, texts, name, True))
                rows.append(phase.row(sum(per_sentence[:size]) if len(per_sentence) >= size else None))
    return rows


def main(argv: list[str] | None = None) -> None:
    import argparse
    import json

    from app.models.real.sources import available_sources

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2,minilm", help="comma-separated models (default: both)")
    args = parser.parse_args(argv)
    for model in [n for n in args.models.split(",") if n in available_sources()]:
        rows = room(model)
        for row in rows:
            print(json.dumps({"model": model, **row}), flush=True)
        print(json.dumps({"model": model, "targets": targets(rows)}), flush=True)


THROUGHPUT_TARGET = 1.5  # 20 clients at once, batched, against the same sentences one after another


def targets(rows: list[dict[str, Any]]) -> dict[str, bool]:
    """The room's targets (docs/benchmarks.md): throughput at 20 clients, no error, every client within the deadline
    (a client past it, or past its retries, is counted as an error)."""
    twenty = next((r for r in rows if r["phase"] == "20 at once, batched"), None)
    return {
        f"throughput at 20 >= {THROUGHPUT_TARGET}": bool(
            twenty and twenty["throughput_vs_one_after_another"] >= THROUGHPUT_TARGET
        ),
        "no errors": all(r["errors"] == 0 for r in rows),
        f"every answer within {DEADLINE_S:.0f} s": all((r["max_s"] or 0) <= DEADLINE_S for r in rows),
    }


if __name__ == "__main__":
    main()
