"""Parametrisation grids built from the request model's own `Literal` types: a new norm, placement, residual,
block, init or dtype added to app/config/request.py is covered by every grid below without editing a test."""

from __future__ import annotations

import itertools
import typing

from app.config import TraceConfig


def choices(field: str) -> tuple[str, ...]:
    """Every value the request model allows for an enumerated field, e.g. choices("norm")."""
    values = typing.get_args(TraceConfig.model_fields[field].annotation)
    if not values:
        raise TypeError(f"{field} is not an enumerated (Literal) field")
    return values


def product(*fields: str) -> list[tuple[str, ...]]:
    """Every combination of the values of `fields`."""
    return list(itertools.product(*(choices(field) for field in fields)))


def covering(primary: tuple[str, ...], others: tuple[str, ...]) -> list[dict[str, str]]:
    """Every combination of the `primary` fields, with the `others` cycling through all their values, so each value
    of each other field also meets several primary combinations (far fewer cases than the full product)."""
    rows = []
    cycles = {field: itertools.cycle(choices(field)) for field in others}
    for combination in product(*primary):
        rows.append(
            {**dict(zip(primary, combination, strict=True)), **{field: next(cycle) for field, cycle in cycles.items()}}
        )
    return rows


def case_id(row: dict[str, str]) -> str:
    return "-".join(row.values())


def all_pairs(fields: tuple[str, ...]) -> list[dict[str, str]]:
    """A covering array of strength 2: every pair of values of every two `fields` meets in some row. Rows start as the
    product of the two largest fields; each further field takes, row by row, the value that covers the most pairs not
    yet covered, and rows are added for any pair left over (deterministic, IPO-style: Lei & Tai 1998)."""
    ordered = sorted(fields, key=lambda f: -len(choices(f)))
    rows = [dict(zip(ordered[:2], pair, strict=True)) for pair in product(*ordered[:2])]
    for k, field in enumerate(ordered[2:], start=2):
        earlier = ordered[:k]
        missing = {(f, v, w) for f in earlier for v in choices(f) for w in choices(field)}
        for row in rows:
            best = max(choices(field), key=lambda w: sum((f, row[f], w) in missing for f in earlier))
            row[field] = best
            missing -= {(f, row[f], best) for f in earlier}
        for f, v, w in sorted(missing):
            hit = next((r for r in rows if r.get(f) == v and r[field] == w), None)
            if hit is None:
                rows.append({**rows[0], f: v, field: w})
    return [{f: row[f] for f in fields} for row in rows]
