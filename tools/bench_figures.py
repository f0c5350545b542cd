"""The /norms chart on the server path: build time as plain dicts vs through plotly.graph_objects (validated and
written back to JSON), and the gzipped bytes a page receives: the trace alone vs the trace plus the chart."""

from __future__ import annotations

import gzip
import json
import statistics
import time

import plotly.graph_objects as go

from app.config import TraceConfig
from app.experiments.trace import run_trace
from app.figures import build
from app.jsonsafe import strict_json

REPEATS = 200


def median_ms(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def gzipped(value: object) -> int:
    return len(gzip.compress(strict_json(value), compresslevel=4))  # the server's GZip level


def main() -> None:
    for fields in ({}, {"depth": 96}):
        trace = run_trace(TraceConfig(**fields))
        chart = build("norms", trace, "en")
        as_dicts = median_ms(lambda trace=trace: build("norms", trace, "en"))
        as_objects = median_ms(lambda trace=trace: go.Figure(build("norms", trace, "en").figure).to_plotly_json(), 50)
        answer, both = gzipped(trace), gzipped(trace) + gzipped(chart.to_json())
        print(
            f"/norms {fields or 'default'}: build {as_dicts:.2f} ms as dicts, {as_objects:.2f} ms through "
            f"graph_objects; gzipped trace {answer} B, chart {both - answer} B (trace + chart {both / answer:.2f}x)"
        )
        print(f"  chart JSON {len(json.dumps(chart.to_json()))} B raw")


if __name__ == "__main__":
    main()
