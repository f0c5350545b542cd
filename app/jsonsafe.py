"""Strict JSON: inf and NaN become null and their paths are listed, never the tokens NaN/Infinity."""
from __future__ import annotations

import json
import math
from typing import Any

from fastapi.responses import JSONResponse

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


def strict_dumps(value: Any) -> str:
    """Serialise with non-finite floats nulled; adds `nonfinite_fields` to a dict whose floats overflowed."""
    try:  # the usual case, everything finite: no copy (the walk below costs a third of the encoding)
        return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except ValueError:  # an inf or NaN somewhere
        pass
    clean, paths = to_strict(value)
    if paths and isinstance(clean, dict):
        clean.setdefault("nonfinite_fields", paths[:MAX_LISTED_PATHS])
        clean.setdefault("nonfinite_count", len(paths))
    return json.dumps(clean, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


class StrictJSONResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return strict_dumps(content).encode("utf-8")
