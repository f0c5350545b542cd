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
