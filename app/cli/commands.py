"""The subcommands that compute: trace, sweep, lecture, warm. Each takes (argv, prog) and returns an exit code;
app/cli/__init__.py turns a refused value into exit 2, Ctrl-C into 130 and any failure into one line and 1.

trace and sweep compute in this process under the server's torch settings (app/experiments/isolation.py) with
--threads torch threads (default RESNORM_TORCH_THREADS, else one: the server's answer bit for bit), bounded by this
machine's memory as `rx` calls are (app/config/machine.py; --budget server: the server's compute budget); lecture
and warm go through the compute pool, whose processes pin the same settings."""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from pathlib import Path
from typing import Any, Literal

from ..config import TraceConfig
from ..experiments.isolation import SERVER_THREADS, as_server
from ..settings import env_name, load_settings
from .options import OneLineParser, add_model_options, given_fields

LANGS = ("en", "zh")
# --budget's words and the Python API's budget= values they stand for (app/config/machine.py)
BUDGETS: dict[str, Literal["machine", "server"] | None] = {"machine": "machine", "server": "server", "none": None}


def _parser(prog: str, description: str) -> OneLineParser:
    return OneLineParser(prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)


def _format_options(parser: argparse.ArgumentParser) -> None:
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print strict JSON (inf/NaN as null), as the HTTP API")
    shape.add_argument("--csv", action="store_true", help="print one CSV row per layer")
    parser.add_argument("--lang", choices=LANGS, default="en", help="language of the table's words [default en]")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="INT",
        help=f"torch threads [env {env_name('torch_threads')}, default {SERVER_THREADS}: the server's numbers bit for "
        "bit; more agree within 1e-6 relative in float32]",
    )
    parser.add_argument(
        "--budget",
        choices=list(BUDGETS),
        default="machine",
        help="machine: refuse a model needing over half of this machine's memory; server: the server's compute "
        "budget; none: no limit [default machine]",
    )


def _threads(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """--threads, else RESNORM_TORCH_THREADS (0 or unset: one, as each compute process of the server)."""
    if args.threads is not None:
        if args.threads < 1:
            parser.error(f"--threads: must be at least 1; got {args.threads}")
        return int(args.threads)
    try:
        return load_settings().torch_threads or SERVER_THREADS
    except ValueError as exc:
        parser.error(str(exc))


def _config(args: argparse.Namespace) -> TraceConfig:
    """The model the options describe, validated as GET /api/trace validates its query; the server's compute budget
    only with --budget server, this machine's memory by default."""
    from ..config.machine import check_machine

    budget = BUDGETS[args.budget]
    cfg = TraceConfig.model_validate_strings(given_fields(args, TraceConfig), context={"budget": budget == "server"})
    check_machine(cfg, budget)
    return cfg


def trace(argv: list[str], prog: str) -> int:
    parser = _parser(prog, "Trace one model: per-layer activation and gradient norms of one forward+backward pass.")
    add_model_options(parser, TraceConfig)
    _format_options(parser)
    args = parser.parse_args(argv)
    threads = _threads(args, parser)
    from ..notebook import Trace
    from ..notebook.traces import label

    cfg = _config(args)
    with as_server(threads):
        result = Trace(_run_trace(cfg), args.lang)
    if args.json:
        print(result.to_json())
    elif args.csv:
        _write_csv([{"layer": 0, **result.result["embedding"]}, *result.layers])
    else:
        _print_table(label(cfg), result.result, args.lang)
    return 0


def _run_trace(cfg: TraceConfig) -> dict[str, Any]:
    from ..experiments.trace import run_trace

    return run_trace(cfg)


def sweep(argv: list[str], prog: str) -> int:
    parser = _parser(prog, "Trace one stack at every depth from --from to --to (the /gradients heatmap's data).")
    add_model_options(parser, TraceConfig, skip=("depth",))
    parser.add_argument("--from", dest="start", type=int, default=1, metavar="INT", help="first depth [default 1]")
    parser.add_argument("--to", dest="stop", type=int, default=96, metavar="INT", help="last depth [default 96]")
    _format_options(parser)
    args = parser.parse_args(argv)
    threads = _threads(args, parser)
    from ..notebook import sweep as run_sweep

    # parsed as GET /api/trace parses a query, at depth 1 (without the server's budget: a model too large at depth 1
    # is too large at every depth, and the sweep says so in its own words); the sweep then checks its deepest depth
    given = {**given_fields(args, TraceConfig), "depth": "1"}
    fields = TraceConfig.model_validate_strings(given, context={"budget": False}).model_dump()
    fields.pop("depth")
    budget = BUDGETS[args.budget]
    result = run_sweep(
        args.start, args.stop, lang=args.lang, progress=sys.stderr.isatty(), threads=threads, budget=budget, **fields
    )
    if args.json:  # interrupted: the depths done so far, and a flag saying the rest are missing
        from ..jsonsafe import strict_dumps

        answer = {"config": result.config.model_dump(), "depths": result.depths, "results": result.rows}
        print(strict_dumps({**answer, "interrupted": result.interrupted}))
    elif args.csv:
        _write_csv([{k: v for k, v in row.items() if not isinstance(v, list)} for row in result.rows])
    else:
        from ..notebook.strings import t

        for row in result.rows:
            print(f"L={row['depth']:4d}  {t('nb.grad_survival', args.lang)}: {row['grad_survival']:.4g}")
    return 130 if result.interrupted else 0


DEFAULT_ORIGIN = "http://127.0.0.1:8000"


def add_origin(parser: argparse.ArgumentParser) -> None:
    """--origin: the server a written deck's 'open in the explorer' links point to (`lecture` and `site`)."""
    parser.add_argument(
        "--origin",
        default=DEFAULT_ORIGIN,
        metavar="URL",
        help=f"the server the slides' 'open in the explorer' links point to [default {DEFAULT_ORIGIN}]",
    )


def lecture(argv: list[str], prog: str) -> int:
    parser = _parser(prog, "Write the lecture deck as one self-contained HTML file that presents offline.")
    parser.add_argument("--lang", choices=LANGS, default="en", help="the deck's language [default en]")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the deck (- for stdout)")
    add_origin(parser)
    args = parser.parse_args(argv)
    problem = _unwritable(args.output)
    if problem:  # before minutes of computing, not after
        parser.exit(1, f"{prog}: error: {problem}\n")
    import asyncio

    from ..pages.lecture_offline import offline_html
    from ..services.compute import get_pool

    def report(started: int, total: int, name: str) -> None:  # minutes of computing: say where it is
        print(f"{prog}: {started} of {total}: {name}", file=sys.stderr, flush=True)

    html = asyncio.run(offline_html(get_pool(), args.lang, origin=args.origin.rstrip("/"), progress=report))
    if args.output == "-":
        sys.stdout.write(html)
    else:
        Path(args.output).write_text(html, encoding="utf-8")
        print(f"{args.output}: {len(html.encode()) / 1e6:.1f} MB", file=sys.stderr)
    return 0


def _unwritable(output: str) -> str | None:
    """Why the deck could not be written to `output`, or None (- is stdout)."""
    if output == "-":
        return None
    path = Path(output)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        return f"-o {output}: is a folder; give a file name such as {path / 'deck.html'}"
    if not folder.is_dir():
        return f"-o {output}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"-o {output}: not allowed to write there"
    return None


def warm(argv: list[str], prog: str) -> int:
    _parser(prog, "Compute every page's default view into the cache (RESNORM_CACHE_DIR) and exit.").parse_args(argv)
    from ..pages import warm_computations
    from ..services.warmup import warm_command

    return warm_command(warm_computations())


def _write_csv(rows: list[dict[str, Any]]) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(dict.fromkeys(k for row in rows for k in row)), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    sys.stdout.write(out.getvalue())


def _print_table(title: str, result: dict[str, Any], lang: str) -> None:
    from ..notebook.strings import t
    from ..numbers import fmt

    summary = result["summary"]
    print(t("nb.summary", lang, model=title))
    for key in ("grad_survival", "norm_growth"):
        print(f"  {t('nb.' + key, lang)}: {fmt(summary[key])}")
    print(f"  {t('nb.loss', lang)}: {fmt(result['loss'])}")
    print(f"{'layer':>5} {'act_norm':>12} {'grad_norm':>12} {'branch_norm':>12}")
    for row in [{"layer": 0, **result["embedding"], "branch_norm": None}, *result["layers"]]:
        print(f"{row['layer']:>5} {fmt(row['act_norm']):>12} {fmt(row['grad_norm']):>12} {fmt(row['branch_norm']):>12}")
