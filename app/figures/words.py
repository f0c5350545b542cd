"""Numbers into words, one way for every caption: the direction of a series and the site's number format."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Literal

from .. import i18n, numbers

FLAT_WITHIN = 1.2  # a series that ends within ×1.2 of where it started (either way) stayed flat
Direction = Literal["grew", "shrank", "flat", "overflow", "underflow"]


def direction(series: Sequence[float | None]) -> Direction:
    """What a series did from its first value to its last: any missing or infinite value is an overflow, an exact 0
    after a nonzero start an underflow, else the end-to-start ratio against FLAT_WITHIN."""
    if any(v is None or not math.isfinite(v) for v in series):
        return "overflow"
    start, end = float(series[0]), float(series[-1])  # type: ignore[arg-type]
    if start == 0:
        return "flat" if end == 0 else "grew"
    if end == 0:
        return "underflow"
    ratio = end / start
    if ratio > FLAT_WITHIN:
        return "grew"
    if ratio < 1 / FLAT_WITHIN:
        return "shrank"
    return "flat"


def ratio(series: Sequence[float | None]) -> float | None:
    """End over start, None when either is missing or the start is 0."""
    start, end = series[0], series[-1]
    if start is None or end is None or not (math.isfinite(start) and math.isfinite(end)) or start == 0:
        return None
    return end / start


def fmt(value: float | None, lang: str) -> str:
    """app/numbers.py's formatter, the site's one number format."""
    return numbers.fmt(value, lang=lang)


def precise(value: float | None, lang: str, digits: int, overflow: str) -> str:
    """A lesson's value with `digits` significant digits, or the lesson's word for an overflow (inf, NaN, null)."""
    if value is None or not math.isfinite(value):
        return overflow
    return numbers.fmt(value, digits=digits, lang=lang)


def say(table: Mapping[str, tuple[str, str]], key: str, lang: str, **values: object) -> str:
    """A chart's own string (its table) or a shared one (the table app/i18n.py's `t` reads), {placeholders} filled."""
    return i18n.lookup(table if key in table else i18n.table(), key, lang, **values)


def sentences(parts: Sequence[str | Literal[False] | None], lang: str) -> str:
    """Join the non-empty sentences: a space between English ones, none between Chinese ones."""
    kept = [p for p in parts if p]
    if lang != "zh":
        return " ".join(kept)
    return re.sub(r"([。）」])\s+", r"\1", "".join(kept))
