"""`python -m app`: serve ResNorm Explorer with uvicorn (`python -m app warm`: fill the cache and exit).

Every option mirrors one RESNORM_* environment variable (see app/settings.py); an option given on the
command line wins over the variable. The options are written back into the environment before uvicorn
starts, so every worker process reads the same settings.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, fields

from app.settings import HELP, Settings, env_name, get_settings, parse_value, settings_from_env

KEEP_ALIVE_S = 65


def _option(field: str) -> str:
    return "--" + field.replace("_", "-")


def _epilog() -> str:
    rows = [f"  {env_name(f.name):<26} default {f.default!s:<10} {HELP[f.name]}" for f in fields(Settings)]
    return ("environment variables (an option above overrides its variable):\n" + "\n".join(rows) +
            "\n\nThe Docker image sets RESNORM_HOST=0.0.0.0 and RESNORM_WORKERS=0 (one worker per core).")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m app", description="Serve ResNorm Explorer (pages and JSON API) with uvicorn.",
        epilog=_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in fields(Settings):
        parser.add_argument(_option(f.name), dest=f.name, metavar=type(f.default).__name__.upper(), default=None,
                            help=f"{HELP[f.name]} [env {env_name(f.name)}, default {f.default}]")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                        help="uvicorn log level [default info]")
    parser.add_argument("--print-settings", action="store_true",
                        help="print the resolved settings as JSON and exit without serving")
    return parser


def resolve(argv: list[str] | None = None) -> tuple[Settings, argparse.Namespace]:
    """Options -> environment -> Settings; exits with a usage error naming the bad option or variable."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        for f in fields(Settings):
            raw = getattr(args, f.name)
            if raw is not None:
                parse_value(f.name, raw)  # fail on the option before touching the environment
                os.environ[env_name(f.name)] = raw
        settings = settings_from_env()
    except ValueError as exc:
        parser.error(str(exc))
    os.environ[env_name("workers")] = str(settings.workers)  # 0 resolved once, the same for every worker
    get_settings.cache_clear()
    return settings, args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["warm"]:  # `python -m app warm [options]`: fill the cache with every page's default view
        from app.services.warmup import warm_command

        resolve(argv[1:])
        sys.exit(warm_command())
    settings, args = resolve(argv)
    threads = settings.threads_per_run()
    if args.print_settings:
        print(json.dumps({**asdict(settings), "threads_per_run": threads}, indent=2))
        return
    # OpenMP sizes its pool when torch first loads: without this each worker starts one thread per core.
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("MKL_NUM_THREADS", str(threads))
    import uvicorn

    print(f"ResNorm Explorer on http://{settings.host}:{settings.port}  ({settings.workers} worker(s), "
          f"{settings.compute_slots} compute slot(s) each, {threads} torch thread(s) per run)", file=sys.stderr)
    # Keep-alive longer than a student's pause (uvicorn's 5 s equals the Retry-After of a 503, so a browser's
    # retry would race the server closing the idle connection).
    uvicorn.run("app.main:app", host=settings.host, port=settings.port, workers=settings.workers,
                log_level=args.log_level, server_header=False, timeout_graceful_shutdown=10,
                timeout_keep_alive=KEEP_ALIVE_S)


if __name__ == "__main__":
    main()
