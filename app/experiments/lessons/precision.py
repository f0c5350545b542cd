"""Floating-point precision: how big a number each format holds, how small a step it still sees,
and where a snowballing stack run in float16 first overflows.

float16 has 5 exponent and 10 fraction bits (IEEE 754-2008), bfloat16 8 and 7 (Kalamkar et al. 2019),
float32 8 and 23. Every limit below comes from torch.finfo and every sum from a real torch addition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, create_model, model_validator
from pydantic.fields import FieldInfo

from ...config import TraceConfig
from ...models.stack import DTYPES
from . import lesson_field

FORMATS = ("float32", "bfloat16", "float16")
VALUE_LIMIT = 1e300

# The default snowballing stack: no norm and a plain identity shortcut, so every block adds to a stream
# that nothing rescales; with Xavier weights its size grows about 1.3x per block (see tests/test_lessons.py).
SNOWBALL_DEFAULTS: dict[str, Any] = {
    "arch": "transformer",
    "norm": "none",
    "residual": "identity",
    "init": "xavier",
    "depth": 48,
}
# The TraceConfig fields the /precision page offers for its float16 stack.
STACK_FIELDS = ("arch", "depth", "norm", "norm_position", "residual", "residual_scale", "init", "activation", "seed")


def stack_schema() -> dict[str, Any]:
    """TraceConfig's schema for the fields the /precision page offers, with the snowballing stack's defaults."""
    props = TraceConfig.model_json_schema()["properties"]
    return {
        name: {**props[name], "default": SNOWBALL_DEFAULTS.get(name, props[name].get("default"))}
        for name in STACK_FIELDS
    }


class PrecisionRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    big: float = lesson_field(
        10000.0,
        "Large number a",
        "大数 a",
        "The running total, e.g. a weight or an activation that has grown large.",
        "累加的总量，例如已经变大的权重或激活。",
        ge=-VALUE_LIMIT,
        le=VALUE_LIMIT,
        allow_inf_nan=False,
    )
    small: float = lesson_field(
        0.001,
        "Small update b",
        "小更新 b",
        "What gets added to it, e.g. one learning-rate-sized update.",
        "加到它上面的量，例如一次学习率大小的更新。",
        ge=-VALUE_LIMIT,
        le=VALUE_LIMIT,
        allow_inf_nan=False,
    )


def snowball_config(overrides: dict[str, str]) -> TraceConfig:
    """The stack to trace: SNOWBALL_DEFAULTS overlaid with the client's TraceConfig fields, always float16."""
    values = {**{k: str(v) for k, v in SNOWBALL_DEFAULTS.items()}, **overrides, "dtype": "float16"}
    return TraceConfig.model_validate_strings(values)


def number_formats(req: PrecisionRequest) -> list[dict[str, Any]]:
    return [_format_row(name, DTYPES[name], req.big, req.small) for name in FORMATS]


def _format_row(name: str, dtype: torch.dtype, big: float, small: float) -> dict[str, Any]:
    info = torch.finfo(dtype)
    a, b = torch.tensor(big, dtype=dtype), torch.tensor(small, dtype=dtype)
    total = a + b
    spacing = torch.nextafter(a.abs(), torch.tensor(math.inf, dtype=dtype)) - a.abs()  # one step (ulp) at |a|
    return {
        "dtype": name,
        "bits": info.bits,
        "fraction_bits": round(-math.log2(info.eps)),
        "max": info.max,
        "eps": info.eps,
        "tiny": info.tiny,
        "stored_big": a.item(),
        "stored_small": b.item(),
        "sum": total.item(),
        "spacing_at_big": spacing.item(),
        "overflowed": not math.isfinite(a.item()),
        "update_lost": math.isfinite(a.item()) and bool(total == a) and small != 0.0,
        "sum_error": total.double().item() - (big + small),
    }


def overflow_summary(trace16: dict[str, Any], trace32: dict[str, Any]) -> dict[str, Any]:
    """Where the float16 stream first holds inf/NaN, next to the same stack in float32."""
    f16_max = torch.finfo(torch.float16).max
    layers16, layers32 = trace16["layers"], trace32["layers"]
    overflow = next((l["layer"] for l in layers16 if not math.isfinite(l["act_max_abs"])), None)
    overflow_sublayer = next(
        (f"{s['layer']}.{s['sublayer']}" for s in trace16["sublayers"] if not math.isfinite(s["act_max_abs"])), None
    )
    beyond = next((l["layer"] for l in layers32 if l["act_max_abs"] > f16_max), None)
    return {  # headline numbers first: strict JSON lists only the first 50 overflowed paths
        "overflow_layer": overflow,
        "overflow_sublayer": overflow_sublayer,
        "float32_exceeds_float16_max_at": beyond,
        "float16_loss": trace16["loss"],
        "float32_loss": trace32["loss"],
        "float16_nonfinite": trace16["summary"]["nonfinite"],
        "config": trace16["config"],
        "float16_max": f16_max,
        "layers": [l["layer"] for l in layers16],
        "float16_max_abs": [l["act_max_abs"] for l in layers16],
        "float32_max_abs": [l["act_max_abs"] for l in layers32],
        "float16_act_norm": [l["act_norm"] for l in layers16],
        "float32_act_norm": [l["act_norm"] for l in layers32],
    }


def precision_lesson(req: PrecisionRequest, trace16: dict[str, Any], trace32: dict[str, Any]) -> dict[str, Any]:
    return {
        "big": req.big,
        "small": req.small,
        "float64_sum": req.big + req.small,
        "formats": number_formats(req),
        "snowball": overflow_summary(trace16, trace32),
    }


class PrecisionView(BaseModel):
    """What GET /api/precision answers: the two numbers to add, and the float16 stack whose overflow it shows."""

    model_config = ConfigDict(frozen=True)

    numbers: PrecisionRequest = PrecisionRequest()
    stack: TraceConfig  # float16 (snowball_config)

    def traces(self) -> list[TraceConfig]:
        """The stack in float16, then in float32 (the reference that does not overflow)."""
        return [self.stack, self.stack.model_copy(update={"dtype": "float32"})]


def precision_view(query: Mapping[str, Any]) -> PrecisionView:
    """The view for a query: PrecisionRequest's fields are the numbers, every other key configures the stack."""
    numbers = {k: v for k, v in query.items() if k in PrecisionRequest.model_fields}
    stack = {k: str(v) for k, v in query.items() if k not in PrecisionRequest.model_fields}
    return PrecisionView(numbers=PrecisionRequest.model_validate(numbers), stack=snowball_config(stack))


def precision_view_lesson(view: PrecisionView, trace16: dict[str, Any], trace32: dict[str, Any]) -> dict[str, Any]:
    return precision_lesson(view.numbers, trace16, trace32)


def _stack_field(name: str) -> tuple[Any, Any]:
    info = TraceConfig.model_fields[name]
    return info.annotation, FieldInfo.merge_field_infos(info, default=SNOWBALL_DEFAULTS.get(name, info.default))


class _Stack(BaseModel):
    """The /precision page's body, under the stack's own cross-field rules (TraceConfig's validators)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="after")
    def _check_stack(self) -> Any:
        page_view(self)
        return self


PrecisionPage = create_model(  # type: ignore[call-overload]
    "PrecisionPage",
    __base__=_Stack,
    __doc__="The /precision page's settings in one flat body, as GET /api/precision takes them in its query: the "
    "two numbers to add and the float16 stack's fields (its defaults are the snowballing stack's).",
    big=(float, PrecisionRequest.model_fields["big"]),
    small=(float, PrecisionRequest.model_fields["small"]),
    **{name: _stack_field(name) for name in STACK_FIELDS},
)


def page_view(page: BaseModel) -> PrecisionView:
    """The view a page body asks for: its numbers, and its stack in float16."""
    values = page.model_dump()
    numbers = PrecisionRequest(big=values.pop("big"), small=values.pop("small"))
    return PrecisionView(numbers=numbers, stack=TraceConfig(**{**SNOWBALL_DEFAULTS, **values, "dtype": "float16"}))
