"""Strict JSON: inf and NaN become null and their paths are listed, never the tokens NaN/Infinity."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterable, Iterable
from typing import Any

import numpy as np
import orjson
from fastapi.responses import JSONResponse, StreamingResponse

# orjson writes non-finite floats as null silently, which is why every value is first checked (all_finite);
# non-string keys become strings, as the standard library's json does; numpy numbers are numbers.
OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY

MAX_LISTED_PATHS = 50


def to_strict(value: Any, path: str = "", found: list[str] | None = None) -> tuple[Any, list[str]]:
    """Return (a copy of value with non-finite floats replaced by None, the JSON paths replaced)."""
    found = [] if found is None else found
    if isinstance(value, float):
        if math.isfinite(value):
            return value, found
        found.append(path or "$")
        return None, found
    if isinstance(value, dict):
        return {k: to_strict(v, f"{path}.{k}" if path else str(k), found)[0] for k, v in value.items()}, found
    if isinstance(value, (list, tuple)):
        return [to_strict(v, f"{path}[{i}]", found)[0] for i, v in enumerate(value)], found
    return value, found


def all_finite(value: Any) -> bool:
    """No inf or NaN anywhere in value (a walk without copies: a quarter of a millisecond for a depth-96 trace)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(all_finite, value.values()))
    if isinstance(value, (list, tuple)):
        return all(map(all_finite, value))
    return True


def strict_json(value: Any) -> bytes:
    """UTF-8 JSON with non-finite floats nulled; adds `nonfinite_fields` to a dict whose floats overflowed.
    orjson: a depth-96 trace in 0.1 ms, against 1.7 ms for the standard library."""
    if all_finite(value):  # the usual case: no copy
        return dumps(value)
    clean, paths = to_strict(value)
    if paths and isinstance(clean, dict):
        clean.setdefault("nonfinite_fields", paths[:MAX_LISTED_PATHS])
        clean.setdefault("nonfinite_count", len(paths))
    return dumps(clean)


def dumps(value: Any, allow_nan: bool = False) -> bytes:
    """Compact UTF-8 JSON: orjson, or the standard library for what orjson refuses (an integer beyond 64 bits,
    echoed back in an error answer; the tokens NaN and Infinity, allowed only in the cache's own entries)."""
    if not allow_nan:
        try:
            return orjson.dumps(value, option=OPTIONS)
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan).encode()


FLOAT32_NORMAL = float(np.finfo(np.float32).tiny)  # 1.18e-38: below it a float32 keeps fewer digits


def float32_decimals(values: list[float]) -> list[float]:
    """Each value as the shortest decimal that names the same float32 (8.000001, not 8.000000953674316): for numbers
    computed in float32, the digits past the seventh are noise, and a depth-96 trace's JSON shrinks from 31.8 to
    18.4 kB gzipped. Values a float32 holds with fewer digits or not at all (below 1.2e-38, past 3.4e38, inf, NaN:
    the float64 fallbacks, ratios of extremes) are kept as they are."""
    original = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):  # past 3.4e38 the cast gives inf: such values are kept as they are
        single = original.astype(np.float32)
    short = orjson.loads(orjson.dumps(single, option=orjson.OPT_SERIALIZE_NUMPY))  # float32's shortest reprs
    faithful = ((np.abs(single) >= FLOAT32_NORMAL) & np.isfinite(single)) | (original == 0)
    return [s if keep else v for s, v, keep in zip(short, values, faithful.tolist(), strict=True)]


def strict_dumps(value: Any) -> str:
    """strict_json as text (a line of a streamed answer)."""
    return strict_json(value).decode()


class StrictJSONResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return strict_json(content)


class NDJSONResponse(StreamingResponse):
    """A stream of strict JSON lines (application/x-ndjson), each flushed as it comes: never stored by a cache or
    buffered by a proxy (nginx reads X-Accel-Buffering)."""

    media_type = "application/x-ndjson"

    def __init__(
        self, lines: AsyncIterable[str] | Iterable[str], status_code: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(
            lines, status_code, {"Cache-Control": "no-store", "X-Accel-Buffering": "no", **(headers or {})}
        )
