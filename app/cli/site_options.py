"""The options of `resnorm-explorer site` (app/cli/site.py), each checked in one line: depths, languages, the
server a copy asks, and the sentences /models bakes, each line checked as POST /api/real_trace checks its text."""

from __future__ import annotations

import argparse
from pathlib import Path

from .commands import LANGS

DEFAULT_DEPTHS = "12,96"
MAX_SENTENCES = 100  # each is a real-model trace per model shown: seconds each


def depths_option(text: str) -> tuple[int, ...]:
    from ..config import MAX_DEPTH

    try:
        depths = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not depths or not all(1 <= d <= MAX_DEPTH for d in depths):
        raise argparse.ArgumentTypeError(f"each depth must be from 1 to {MAX_DEPTH}; got {text!r}")
    return depths


def langs_option(text: str) -> tuple[str, ...]:
    langs = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not langs or any(lang not in LANGS for lang in langs):
        raise argparse.ArgumentTypeError(f"languages are {', '.join(LANGS)}; got {text!r}")
    return langs


def server_option(text: str) -> str:
    """An explorer server's address: http(s)://host[:port][/path], no query; a trailing slash is dropped."""
    from urllib.parse import urlsplit

    url = text.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment or " " in url:
        raise argparse.ArgumentTypeError(
            f"must be the explorer server's address, such as https://explorer.example.edu; got {text!r}"
        )
    return url


def sentence_rules() -> str:
    from ..config.real import MAX_TEXT_CHARS, MAX_TOKENS

    return (
        f"one sentence per line, each 1 to {MAX_TEXT_CHARS} characters of printable text (tab is the only control "
        f"character) and at most {MAX_TOKENS} tokens; blank lines are skipped; at most {MAX_SENTENCES} sentences"
    )


def read_sentences(text: str) -> tuple[tuple[int, str], ...]:
    """(line number, sentence) of every non-blank line of a sentence file, each checked as POST /api/real_trace
    checks its text; ArgumentTypeError names the first bad line and what is allowed."""
    from pydantic import ValidationError

    from ..config.real import RealTraceRequest

    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            RealTraceRequest(text=line)
        except ValidationError as exc:
            error = exc.errors()[0]
            problem = f"{len(line)} characters" if error["type"] == "string_too_long" else str(error["msg"])
            problem = problem.removeprefix("Value error, ").split(" | ")[0].removeprefix("text: ")
            raise argparse.ArgumentTypeError(f"line {number}: {problem}; allowed: {sentence_rules()}") from None
        found.append((number, line))
    if len(found) > MAX_SENTENCES:
        raise argparse.ArgumentTypeError(f"{len(found)} sentences; allowed: {sentence_rules()}")
    return tuple(found)


def sentences_file(path: str) -> tuple[tuple[int, str], ...]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot read it as UTF-8 text ({exc.__class__.__name__})") from None
    try:
        return read_sentences(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{path} {exc}") from None
