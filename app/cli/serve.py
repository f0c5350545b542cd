"""`resnorm-explorer [serve]` (or `python -m app`): serve ResNorm Explorer with uvicorn (`--warm-only`: fill the cache).

Every option is one field of app.settings.Settings and mirrors its RESNORM_* environment variable; an
option given on the command line wins over the variable. The options are written back into the
environment before uvicorn starts, so every worker process reads the same settings.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import sys

from pydantic.fields import FieldInfo

from ..config import field_bounds
from ..settings import Settings, env_name, get_settings, load_settings
from .options import OneLineParser, add_model_options

KEEP_ALIVE_S = 65
# uvicorn's supervisor kills a worker that has not answered its ping within this. Its default, 5 s, killed busy
# workers of a 2-core laptop under a room of 200 (the ping waits for the worker's GIL while it imports torch or
# renders under load): each kill lost that worker's memory cache and orphaned a torch import. A hung worker is still
# replaced, a minute later.
WORKER_HEALTHCHECK_S = 60


def _note(name: str, info: FieldInfo) -> str:
    """The variable, the default and the bounds (from the field's own constraints, as a request option's help)."""
    default = "unset" if info.default is None else info.default
    bounds = field_bounds(name, Settings)
    return f"env {env_name(name)}, default {default}{'; ' + bounds if bounds else ''}"


def build_parser(prog: str = "python -m app") -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=prog,
        description="Serve ResNorm Explorer (pages and JSON API) with uvicorn.",
        epilog="Every option can also be set by the environment variable named in its help; the option wins.\n"
        "The Docker image sets RESNORM_HOST=0.0.0.0 and RESNORM_WORKERS=0 (one worker per core).\n\n"
        f"Other commands, each with --help: {prog} trace | sweep | lecture | warm | site | fetch-models ({prog} serve is this one).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_options(parser, Settings, note=_note)
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn log level [default info]",
    )
    parser.add_argument(
        "--print-settings", action="store_true", help="print the resolved settings as JSON and exit without serving"
    )
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="compute every page's default view into the cache (RESNORM_CACHE_DIR) and exit, "
        "e.g. while building the Docker image",
    )
    return parser


def resolve(argv: list[str] | None = None, prog: str = "python -m app") -> tuple[Settings, argparse.Namespace]:
    """Options -> environment -> Settings; exits with a usage error naming the bad option or variable."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    given = {name: getattr(args, name) for name in Settings.model_fields if getattr(args, name) is not None}
    try:
        settings = load_settings(**given)  # fails on an option before the environment is touched
    except ValueError as exc:  # one line naming the variable, not argparse's usage block
        parser.exit(2, f"{prog}: error: {exc} (see --help)\n")
    for name, raw in given.items():
        os.environ[env_name(name)] = raw
    os.environ[env_name("workers")] = str(settings.workers)  # 0 resolved once, the same for every worker
    get_settings.cache_clear()
    return settings, args


def listen_problem(host: str, port: int) -> str | None:
    """Why a server could not listen on host:port, or None. Checked before torch loads (seconds), so a busy
    port is one line instead of a start-up followed by uvicorn's error."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror}; check --host / RESNORM_HOST"
    with socket.socket(family, kind, proto) as sock:
        if os.name != "nt":  # as uvicorn does (on Windows this option would let two servers share a port)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use (is ResNorm Explorer already running?); "
                    f"choose another with --port or RESNORM_PORT"
                )
            if exc.errno == errno.EACCES:
                return (
                    f"not allowed to listen on port {port} (ports below 1024 need administrator rights); "
                    f"choose another with --port"
                )
            return f"cannot listen on {host}:{port}: {exc.strerror}"
    return None


def main(argv: list[str] | None = None, prog: str = "python -m app") -> None:
    settings, args = resolve(argv, prog)
    threads = settings.threads_per_run()
    if args.print_settings:
        print(json.dumps({**settings.model_dump(), "threads_per_run": threads}, indent=2))
        return
    if args.warm_only:
        from ..pages import warm_computations
        from ..services.warmup import warm_command

        sys.exit(warm_command(warm_computations()))
    problem = listen_problem(settings.host, settings.port)
    if problem:
        sys.exit(f"{prog}: error: {problem}")
    # OpenMP sizes its pool when torch first loads: without this each worker starts one thread per core.
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("MKL_NUM_THREADS", str(threads))
    import uvicorn

    print(
        f"ResNorm Explorer on http://{settings.host}:{settings.port}  ({settings.workers} worker(s), "
        f"{settings.compute_slots} compute slot(s) each, {threads} torch thread(s) per run)",
        file=sys.stderr,
    )
    # Keep-alive longer than a student's pause (uvicorn's 5 s equals the Retry-After of a 503, so a browser's
    # retry would race the server closing the idle connection).
    uvicorn.run(
        f"{top_package()}.main:app",
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=args.log_level,
        server_header=False,
        timeout_graceful_shutdown=10,
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_S,
    )


def top_package() -> str:
    """The name this copy of the code runs under: `app` in a checkout, `resnorm_explorer` when installed."""
    return (__package__ or "app.cli").rpartition(".")[0]
