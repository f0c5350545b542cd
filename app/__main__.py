"""`python -m app` (in a checkout) or `python -m resnorm_explorer` (installed): the `resnorm-explorer` command."""

from __future__ import annotations

from .cli import main
from .cli.serve import build_parser, listen_problem, resolve

__all__ = ["build_parser", "listen_problem", "main", "resolve"]

if __name__ == "__main__":
    main(prog=f"python -m {__package__ or 'app'}")
