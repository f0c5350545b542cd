"""`python -m tools.bench_norms`: LayerNorm vs RMSNorm, forward + backward with torch's own kernels, side by side.

The same measurement GET /api/norm_speed serves (app/experiments/lessons/norm_speed.py): widths 64..4096,
interleaved, median of repeats with the middle half as spread, here with a longer budget and one thread.
Prints one line per width: both medians, RMSNorm / LayerNorm, and op-by-op LayerNorm / RMSNorm.
"""

from __future__ import annotations

import argparse

import torch

from app.experiments.lessons.norm_speed import measure_norm_speed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=8.0, help="seconds of repeats (at least the minimum count)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the server's default per request is 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    answer = measure_norm_speed(budget_s=args.budget)
    print(
        f"norm speed: torch {answer['torch']}, {answer['threads']} thread(s), {answer['tokens']} tokens, "
        f"{answer['repeats']} interleaved repeats, ATen calls per forward + backward {answer['operator_calls']}"
    )
    print(f"{'width':>6} {'LayerNorm µs':>14} {'RMSNorm µs':>14} {'op-by-op LN µs':>15} {'RMS/LN':>7} {'opLN/RMS':>9}")
    for row in answer["rows"]:
        cells = [
            f"{row[k]['median_us']:7.1f} ±{(row[k]['p75_us'] - row[k]['p25_us']) / 2:5.1f}"
            for k in ("layernorm", "rmsnorm", "layernorm_composed")
        ]
        print(
            f"{row['width']:>6} {cells[0]:>14} {cells[1]:>14} {cells[2]:>15} {row['ratio']:7.2f} {row['composed_ratio']:9.2f}"
        )


if __name__ == "__main__":
    main()
