"""/compare as one request: 2 to 4 variants, each a model the page resolved (a preset on the page's sizes, or the
custom settings, plus the variant's own changes), answered as cached /api/trace requests (a composite kind of
app/experiments/requests.py). The chart is app/figures/compare.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from ..config import PRESETS, TraceConfig

Json = dict[str, Any]


class CompareVariant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str = Field(description="the preset's key (app/config/presets.py), or custom: the page's own settings")
    changes: str = Field("", max_length=200, description="the variant's own changes as typed, e.g. dtype:float16")
    config: TraceConfig = Field(default_factory=TraceConfig)

    @field_validator("key")
    @classmethod
    def known(cls, key: str) -> str:
        if key != "custom" and key not in PRESETS:
            expected = "one of " + ", ".join([*PRESETS, "custom"])
            raise PydanticCustomError("preset", "no such preset {key}", {"key": key, "expected": expected})
        return key


class CompareRequest(BaseModel):
    """POST /api/figure/compare: the variants side by side (the rows' y scales are view patches of the chart)."""

    model_config = ConfigDict(extra="forbid")
    variants: list[CompareVariant] = Field(min_length=2, max_length=4)


def parts(req: CompareRequest) -> list[tuple[str, BaseModel]]:
    return [("trace", variant.config) for variant in req.variants]


def combine(req: CompareRequest, *traces: Json) -> Json:
    return {
        "variants": [
            {"key": v.key, "changes": v.changes, "trace": t} for v, t in zip(req.variants, traces, strict=True)
        ]
    }
