"""'RMSNorm is faster': measured, not assumed. LayerNorm against RMSNorm, forward + backward, torch's own ops.

RMSNorm skips the mean and the shift, so it does fewer arithmetic operations (Zhang & Sennrich 2019 report
7%-64% faster training on GPUs with their own implementation). Whether that shows depends on the kernels: at
these sizes both norms are memory-bound (a few operations per number read), so the time is the number of
passes over memory, and a fused kernel that reads x once beats an unfused one that makes several passes.
The answer reports what this server measured, whichever way it comes out.

Method: for each width, interleaved (LayerNorm, RMSNorm, then RMSNorm, LayerNorm on the next repeat, so slow
drifts of a shared machine hit both alike), `inner` forward + backward calls are timed together; the median
over repeats is the figure, the quartiles and extremes its spread. A third contender, LayerNorm written out
of elementary ops (mean, subtract, variance, rsqrt, multiply, add: the same kind of ops torch's CPU RMSNorm
runs), separates what the formula costs from what the kernel costs; a dispatch mode counts the ATen operator
calls of one forward + backward of each (views and allocations included), which shows fused against unfused.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict
from torch.utils._python_dispatch import TorchDispatchMode

WIDTHS = (64, 256, 1024, 4096)  # from this explorer's widths up to LLaMA-7B's
TOKENS = 256  # rows normalized per call (e.g. 8 sequences of 32 tokens)
MIN_REPEATS, MAX_REPEATS = 7, 25
BUDGET_S = 2.0  # repeats stop once this much time has passed (at least MIN_REPEATS)
CLEAR = 0.05  # a ratio counts as a winner only beyond 1 ± 5 %, at every width
WIDE = 0.5  # a spread (middle half of the repeats) wider than half the median: the server was busy
SAMPLE_S = 0.002  # each timed sample runs enough calls to last about this long
KERNELS = {
    "layernorm": "torch.nn.functional.layer_norm",
    "rmsnorm": "torch.nn.functional.rms_norm",
    "layernorm_composed": "(x - mean) * rsqrt(var + eps) * gain + shift, one torch op at a time",
}


def _composed_layernorm(x: torch.Tensor, gain: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    centred = x - x.mean(-1, keepdim=True)
    return centred * torch.rsqrt(centred.pow(2).mean(-1, keepdim=True) + 1e-5) * gain + shift


def _step(kind: str, width: int) -> Callable[[], None]:
    """One forward + backward of `kind` on fresh float32 tensors, with a gain (and LayerNorm's shift)."""
    generator = torch.Generator().manual_seed(width)
    x = torch.randn(TOKENS, width, generator=generator).requires_grad_()
    upstream = torch.randn(TOKENS, width, generator=generator)
    gain = torch.ones(width, requires_grad=True)
    shift = torch.zeros(width, requires_grad=True)
    if kind == "layernorm":
        return lambda: F.layer_norm(x, (width,), gain, shift, eps=1e-5).backward(upstream)
    if kind == "rmsnorm":
        return lambda: F.rms_norm(x, (width,), gain, eps=1e-6).backward(upstream)
    return lambda: _composed_layernorm(x, gain, shift).backward(upstream)


def _calls_per_sample(step: Callable[[], None]) -> int:
    step()  # warm-up: first-call allocations and dispatch caches are not what we measure
    once = max(min(_sample(step, 1) for _ in range(3)), 0.1) * 1e-6  # the fastest of 3: a busy moment is no guide
    return max(1, min(1000, round(SAMPLE_S / once)))


def _sample(step: Callable[[], None], calls: int) -> float:
    """Microseconds per forward + backward, averaged over `calls` back-to-back calls."""
    started = time.perf_counter()
    for _ in range(calls):
        step()
    return (time.perf_counter() - started) / calls * 1e6


class _OperatorCounter(TorchDispatchMode):
    """Counts the ATen operators that reach a kernel, as torch.utils.flop_counter does (backward included).
    Dispatch modes are per thread, so other requests are not counted; unlike the profiler it prints nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def _operator_calls(step: Callable[[], None]) -> int:
    """ATen operator calls of one forward + backward."""
    with _OperatorCounter() as counter:
        step()
    return counter.calls


def _spread(samples: list[float]) -> dict[str, float]:
    quartiles = statistics.quantiles(samples, n=4, method="inclusive")
    return {
        "median_us": statistics.median(samples),
        "p25_us": quartiles[0],
        "p75_us": quartiles[2],
        "min_us": min(samples),
        "max_us": max(samples),
    }


def speed_verdict(ratios: list[float]) -> str:
    """RMSNorm's time ÷ LayerNorm's at every width: "slower" or "faster" only where every width agrees beyond CLEAR,
    else "mixed". The page's caption and the deck's slide say what this returns."""
    if all(r > 1 + CLEAR for r in ratios):
        return "slower"
    if all(r < 1 - CLEAR for r in ratios):
        return "faster"
    return "mixed"


def spread_of(rows: list[dict[str, Any]]) -> str:
    """ "wide" where some width's middle half of the repeats spans more than WIDE of its median (a busy machine)."""
    wide = any(
        row[kind]["p75_us"] - row[kind]["p25_us"] > WIDE * row[kind]["median_us"] for row in rows for kind in KERNELS
    )
    return "wide" if wide else "narrow"


def measure_norm_speed(budget_s: float | None = None, widths: tuple[int, ...] | None = None) -> dict[str, Any]:
    budget_s = BUDGET_S if budget_s is None else budget_s
    widths = widths or WIDTHS
    steps = {(kind, width): _step(kind, width) for width in widths for kind in KERNELS}
    calls = {key: _calls_per_sample(step) for key, step in steps.items()}
    samples: dict[tuple[str, int], list[float]] = {key: [] for key in steps}
    started = time.perf_counter()
    repeats = 0
    while repeats < MAX_REPEATS and (repeats < MIN_REPEATS or time.perf_counter() - started < budget_s):
        order = list(KERNELS) if repeats % 2 == 0 else list(reversed(KERNELS))  # nobody always goes first
        for width in widths:
            for kind in order:
                samples[(kind, width)].append(_sample(steps[(kind, width)], calls[(kind, width)]))
        repeats += 1
    rows = []
    for width in widths:
        row: dict[str, Any] = {"width": width, **{kind: _spread(samples[(kind, width)]) for kind in KERNELS}}
        row["ratio"] = row["rmsnorm"]["median_us"] / row["layernorm"]["median_us"]  # > 1: RMSNorm slower
        row["composed_ratio"] = row["layernorm_composed"]["median_us"] / row["rmsnorm"]["median_us"]
        row["ns_per_number"] = {kind: row[kind]["median_us"] * 1e3 / (TOKENS * width) for kind in KERNELS}
        rows.append(row)
    return {
        "rows": rows,
        "verdict": speed_verdict([row["ratio"] for row in rows]),
        "spread": spread_of(rows),
        "widths": list(widths),
        "tokens": TOKENS,
        "dtype": "float32",
        "repeats": repeats,
        "calls_per_sample": {f"{kind}@{width}": n for (kind, width), n in calls.items()},
        "operator_calls": {kind: _operator_calls(steps[(kind, widths[0])]) for kind in KERNELS},
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "kernels": KERNELS,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }


class NormSpeedRequest(BaseModel):
    """GET /api/norm_speed takes no input: what decides the measurement is this server and the hour."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def norm_speed_key(req: NormSpeedRequest) -> str:
    """Measured at most once an hour; the key names what decides the measurement, so a shorter one (tests) is never
    served as the page's."""
    return f"lesson:norm_speed:v2:{int(time.time() // 3600)}:{WIDTHS}:{BUDGET_S}"  # v2: the answer has its verdict


def timed_norm_speed(req: NormSpeedRequest) -> dict[str, Any]:
    return {**measure_norm_speed(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
