"""What each size may be, given the others: the compute budget (budget.py) turned into per-setting limits.

A request over the budget is refused with the setting to blame and the largest value of it that fits; the pages
ask POST /api/budget for every size's limit so their controls refuse such values before a request is sent.
Every cost in budget.py grows with each size, so each limit is a binary search, then a step down to a value the
request model also accepts (n_heads and GroupNorm's groups must divide d_model).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from .budget import (
    MAX_ACTIVATION_FLOATS,
    MAX_FORWARD_MACS,
    MAX_PARAMETERS,
    activation_floats,
    fits_budget,
    forward_macs,
    parameter_count,
)

# The settings the budget depends on, in the order a reader would look for the cause.
SIZE_FIELDS = ("depth", "d_model", "seq_len", "batch", "vocab_size", "n_heads")
MAX_STEPS_DOWN = 64  # from the budget's limit down to a value the request model accepts (a divisor, a multiple)


# The request model arrives as the class of the config asked about (type(cfg)): app/config/request.py calls this
# module from its validator, so importing it here would make a circle.
Model = type[BaseModel]


@cache  # the schema is fixed for the process; building it is most of a report's cost
def _bounds(model: Model, field: str) -> tuple[int, int]:
    schema = model.model_json_schema()["properties"][field]
    return int(schema["minimum"]), int(schema["maximum"])


def _within_budget(model: Model, values: dict[str, Any]) -> bool:
    config: Any = model.model_construct(**values)  # the fields fits_budget reads (config/budget.py)
    return fits_budget(config)


def _accepted(model: Model, values: dict[str, Any]) -> bool:
    """Valid and affordable; validated without the budget check, so this never recurses into the error message."""
    try:
        model.model_validate(values, context={"budget": False})
    except ValidationError:
        return False
    return _within_budget(model, values)


def largest_fitting(model: Model, values: dict[str, Any], field: str) -> int | None:
    """The largest value of `field` that fits with every other setting as it is (None: not even the minimum)."""
    low, high = _bounds(model, field)
    if not _within_budget(model, {**values, field: low}):
        return None
    while low < high:  # the largest value within the budget: costs grow with every size
        middle = (low + high + 1) // 2
        if _within_budget(model, {**values, field: middle}):
            low = middle
        else:
            high = middle - 1
    for candidate in range(low, max(_bounds(model, field)[0], low - MAX_STEPS_DOWN) - 1, -1):
        if _accepted(model, {**values, field: candidate}):
            return candidate
    return None


def size_limits(cfg: Any) -> dict[str, int | None]:
    values = cfg.model_dump()
    return {field: largest_fitting(type(cfg), values, field) for field in SIZE_FIELDS}


def cause(values: dict[str, Any], limits: dict[str, int | None]) -> str | None:
    """The size to blame: the one that needs the smallest cut (largest limit / value) to fit; None when it fits."""
    over = {f: limits[f] / values[f] for f in SIZE_FIELDS if limits[f] is not None and values[f] > limits[f]}
    return max(over, key=lambda f: over[f]) if over else None


def budget_report(cfg: Any) -> dict[str, Any]:
    """POST /api/budget's answer (cfg: a TraceConfig): the costs against their limits, each size's limit given the
    others, the cause."""
    model: Model = type(cfg)
    values = cfg.model_dump()
    limits = size_limits(cfg)
    fits = _within_budget(model, values)
    return {
        "fits": fits,
        "cause": None if fits else cause(values, limits),
        "limits": {f: {"value": values[f], "min": _bounds(model, f)[0], "max": limits[f]} for f in SIZE_FIELDS},
        "costs": {
            "forward_multiply_adds": {"value": forward_macs(cfg), "limit": MAX_FORWARD_MACS},
            "parameters": {"value": parameter_count(cfg), "limit": MAX_PARAMETERS},
            "saved_activation_floats": {"value": activation_floats(cfg), "limit": MAX_ACTIVATION_FLOATS},
        },
    }


def over_budget_message(cfg: Any) -> str:
    """The 422 text for a model over the budget (format of app/errors.py: "field: why | allowed: ..."): the size
    needing the smallest cut, the largest value of it that fits, and the other ways out."""
    values = cfg.model_dump()
    limits = size_limits(cfg)
    blamed = cause(values, limits)
    exceeded = "; ".join(
        f"{name.replace('_', ' ')} {cost['value']:.3g} > {cost['limit']:.3g}"
        for name, cost in budget_report(cfg)["costs"].items()
        if cost["value"] > cost["limit"]
    )
    others = [
        f"{f} <= {limits[f]}" for f in SIZE_FIELDS if f != blamed and limits[f] is not None and values[f] > limits[f]
    ]
    if blamed is None:  # no single size brings it within the budget
        sizes = ", ".join(f"{f} {values[f]}" for f in SIZE_FIELDS)
        return (
            f"depth: the model is too large for this server's compute budget ({sizes}; {exceeded})"
            " | allowed: lower two or more sizes"
        )
    rest = ", ".join(f"{f} {values[f]}" for f in SIZE_FIELDS if f != blamed)
    return (
        f"{blamed}: {values[blamed]} is too large for this server's compute budget with the other sizes as they are "
        f"({rest}; {exceeded}) | allowed: {blamed} <= {limits[blamed]}"
        + (f" (or {', '.join(others)})" if others else "")
    )
