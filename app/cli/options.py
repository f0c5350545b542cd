"""Command-line options derived from a request model's fields (never retyped), and one-line errors.

`--depth 48 --norm-position post` is TraceConfig's `depth` and `norm_position`: each option takes the text a URL
query would, and the model validates it exactly as GET /api/trace does, so a bad value fails with the same words.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, Literal, NoReturn, get_args

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ..config import field_bounds
from ..config.machine import TooLargeForMachine


class OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors in one line (prog: error: ... (see --help)) and exit code 2, and no abbreviated
    options: `--depth 5` must never be read as --depth-scaled-norm where a command has no --depth."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


OPTION_OF = {"depths": "--from/--to"}  # request fields the command line spells differently (a sweep's depths)


def option_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def add_model_options(
    parser: argparse.ArgumentParser,
    model: type[BaseModel],
    skip: tuple[str, ...] = (),
    note: Callable[[str, FieldInfo], str] | None = None,
) -> None:
    """One option per field of `model` (a request model, or the server's Settings): its help is the field's
    description and, in brackets, `note(name, info)` (by default its default and its bounds)."""
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        allowed = get_args(info.annotation) if getattr(info.annotation, "__origin__", None) is Literal else ()
        metavar = "|".join(map(str, allowed)) if allowed else _metavar(info.annotation)
        if note is None:
            bounds = field_bounds(name, model)
            bracket = f"default {info.default}{'; ' + bounds if bounds and not allowed else ''}"
        else:
            bracket = note(name, info)
        parser.add_argument(
            option_name(name), dest=name, metavar=metavar, default=None, help=f"{info.description} [{bracket}]"
        )


def _metavar(annotation: Any) -> str:
    return {int: "INT", float: "FLOAT", bool: "true|false"}.get(annotation, "TEXT")


def given_fields(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, str]:
    """The options the user typed, as the text values model_validate_strings reads."""
    return {name: getattr(args, name) for name in model.model_fields if getattr(args, name, None) is not None}


def validation_line(exc: ValidationError) -> str:
    """A pydantic error as one line naming the option: '--depth: Input should be less than or equal to 128'."""
    error = exc.errors()[0]
    message = error["msg"].removeprefix("Value error, ")
    # a field's own error names it in loc; the model's consistency checks name it at the start of the message
    field = next((str(part) for part in error["loc"] if isinstance(part, str)), message.partition(": ")[0])
    if not field.isidentifier():
        field = ""
    if message.startswith(f"{field}: "):  # the model's own checks already name the field
        message = message[len(field) + 2 :]
    return f"{OPTION_OF.get(field, option_name(field))}: {message}" if field else message


ANYWAY = "add --budget none to run it anyway"


def too_large_line(exc: TooLargeForMachine) -> str:
    """This machine's refusal as one line naming the option: '--depth: this model needs about 30 GB, ...'."""
    return f"{OPTION_OF.get(exc.field, option_name(exc.field))}: {exc.reason(ANYWAY)}"


def fail(prog: str, message: str, code: int = 1) -> NoReturn:
    print(f"{prog}: error: {message}", file=sys.stderr)
    sys.exit(code)
