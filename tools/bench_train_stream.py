"""/train's loss chart while it trains: a whole chart and then a patch per step (what POST /api/train/charts sends),
against rebuilding the whole chart every few steps, and against the raw events the page used to read and draw
itself. Bytes as the server's GZip sends a stream (level 4, flushed after every line) and the server's time per
message, on the events of a 12-block preset shaped run (2 or 4 runs x 300 steps, a per-layer snapshot every 10
steps) with seeded random losses: the chart's bytes depend on the events' shapes, not on what was learned."""

from __future__ import annotations

import argparse
import random
import time
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from app.experiments.train_answer import TrainCharts, empty_answer
from app.experiments.train_curves import add_event
from app.experiments.train_presets import preset_request
from app.figures import train, train_profile
from app.figures.train_stream import ChartStream
from app.jsonsafe import strict_json

Json = dict[str, Any]


def made_up_events(request: TrainCharts, seed: int = 0) -> list[Json]:
    """What POST /api/train streams for `request`, in its order and shapes, with seeded random numbers."""
    rng = random.Random(seed)
    depth, runs, every = request.runs[0].depth, len(request.runs), max(1, round(request.steps / 30))
    out: list[Json] = [{"type": "start", "steps": request.steps, "probe_every": every}]
    for step in range(1, request.steps + 1):
        for run in range(runs):
            event: Json = {"type": "step", "run": run, "step": step, "loss": rng.uniform(0.01, 2.8),
                           "grad_norm": rng.uniform(0.1, 3), "lr": 1e-3}  # fmt: skip
            if step == 1 or step % every == 0 or step == request.steps:
                layers: Json = {key: [rng.uniform(0.01, 10) for _ in range(depth)]
                                for key in ("act_norm", "grad_norm", "param_grad_norm")}  # fmt: skip
                event["layers"] = {**layers, "embedding_act_norm": rng.uniform(1, 8),
                                   "embedding_grad_norm": rng.uniform(0, 1)}  # fmt: skip
            out.append(event)
    out += [
        {
            "type": "done",
            "run": run,
            "diverged": False,
            "diverged_step": None,
            "steps_done": request.steps,
            "final_loss": 0.02,
            "eval_loss": 0.03,
            "accuracy": 0.99,
            "sequence_accuracy": 0.9,
        }
        for run in range(runs)
    ]
    return [*out, {"type": "end", "elapsed_ms": 41000.0, "diverged": []}]  # fmt: skip


def patches(request: TrainCharts, events: Iterable[Json]) -> Iterable[Json]:
    stream = ChartStream(request, "en")
    for event in events:
        yield from stream.messages(event)


def rebuilds(every: int) -> Callable[[TrainCharts, Iterable[Json]], Iterable[Json]]:
    """The whole loss chart every `every` steps of the last run (and the per-layer charts as the stream sends them)."""

    def messages(request: TrainCharts, events: Iterable[Json]) -> Iterable[Json]:
        stream, answer, last = ChartStream(request, "en"), empty_answer(request), len(request.runs) - 1
        for event in events:
            add_event(answer, event)
            profile = [m for m in stream.messages(event) if m.get("chart") == train_profile.CHART.key]
            due = event.get("type") in ("start", "end") or (
                event.get("type") == "step" and event["run"] == last and event["step"] % every == 0
            )
            yield from ([{"type": "chart", **train.build(answer, "en").to_json()}] if due else [])
            yield from profile

    return messages


def measured(way: Callable[[TrainCharts, Iterable[Json]], Iterable[Json]], request: TrainCharts, events: list[Json]):
    """(messages, raw bytes, gzipped bytes, ms to build them all, slowest message ms)."""
    squeeze = zlib.compressobj(4, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    raw = packed = count = 0
    slowest, started, last = 0.0, time.perf_counter(), time.perf_counter()
    for message in way(request, events):
        line = strict_json(message) + b"\n"
        now = time.perf_counter()
        slowest, last = max(slowest, now - last), now
        raw += len(line)
        packed += len(squeeze.compress(line) + squeeze.flush(zlib.Z_SYNC_FLUSH))
        count += 1
    return count, raw, packed, (time.perf_counter() - started) * 1000, slowest * 1000


def events_only(request: TrainCharts, events: Iterable[Json]) -> Iterable[Json]:
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--presets", default="post_vs_pre,fixes", help="/train presets whose shapes to stream")
    args = parser.parse_args()
    ways = [("raw events (/api/train)", events_only), ("whole chart + a patch a step", patches),
            *((f"whole chart every {n} steps", rebuilds(n)) for n in (10, 30))]  # fmt: skip
    print(f"{'preset':<12} {'way':<30} {'messages':>8} {'raw kB':>8} {'gzip kB':>8} {'build ms':>9} {'max ms':>7}")
    for key in args.presets.split(","):
        base = preset_request(key)
        request = TrainCharts(**base.model_dump(), kinds=None)
        events = made_up_events(request)
        for name, way in ways:
            count, raw, packed, total, slowest = measured(way, request, events)
            print(
                f"{key:<12} {name:<30} {count:>8} {raw / 1000:>8.1f} {packed / 1000:>8.1f} {total:>9.1f} {slowest:>7.2f}"
            )


if __name__ == "__main__":
    main()
