"""Xiong et al. 2020, theorem 1, measured: how the gradient of the last block's FFN parameters scales with depth.

At initialisation the theorem bounds ‖∂L/∂W‖ of the last FFN layer: independent of the depth L in Post-LN, shrinking
like L^(−½) in Pre-LN. DepthScan traces one preset at several depths and seeds (each an ordinary /api/trace request,
cached under its own key) and reads `ffn_param_grad_norm` of the last block: the norm of the gradient of all of that
block's FFN parameters together (both weight matrices and their biases), not the theorem's one matrix; the slide says
so. The exponent is the least-squares slope of log(gradient) against log(depth), per seed.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..config import PRESETS as ALL_PRESETS
from ..config import TraceConfig, preset_config

DEPTHS = (6, 12, 24, 48, 96)
SEEDS = (0, 1, 2, 3)
PRESETS = ("post_ln", "pre_ln_2017")  # Post-LN and Pre-LN on the 2017 recipe (ReLU, Xavier)


class DepthScan(BaseModel):
    """POST /api/depth_scan: the presets, depths and seeds to trace (every combination)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    presets: tuple[str, ...] = Field(PRESETS, min_length=1, max_length=2, description="preset names (/api/presets)")
    depths: tuple[Annotated[int, Field(ge=2, le=96)], ...] = Field(DEPTHS, min_length=3, max_length=5)
    seeds: tuple[Annotated[int, Field(ge=0, le=1000)], ...] = Field(SEEDS, min_length=1, max_length=4)

    @field_validator("presets")
    @classmethod
    def _known(cls, presets: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [p for p in presets if p not in ALL_PRESETS]
        if unknown:
            raise ValueError(f"unknown preset {unknown[0]!r}; one of {', '.join(ALL_PRESETS)}")
        return presets

    def configs(self) -> list[TraceConfig]:
        return [
            TraceConfig(**{**preset_config(preset, TraceConfig(depth=depth)).model_dump(), "seed": seed})
            for preset in self.presets
            for seed in self.seeds
            for depth in self.depths
        ]


def exponent(depths: list[int], values: list[float | None]) -> float | None:
    """The least-squares slope of log(value) against log(depth); None when a value is missing or not positive."""
    if any(v is None or not math.isfinite(v) or v <= 0 for v in values):
        return None
    xs, ys = [math.log(d) for d in depths], [math.log(v) for v in values]  # type: ignore[arg-type]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def depth_scan(req: DepthScan, *traces: dict[str, Any]) -> dict[str, Any]:
    """{"layers": the depths (the key the deck's per-layer charts read as x), preset: {"seeds": [per seed: the last
    block's FFN parameter gradient at each depth], "exponents": [per seed]}}."""
    out: dict[str, Any] = {"layers": list(req.depths), "seeds": list(req.seeds)}
    it = iter(traces)
    for preset in req.presets:
        seeds = [[next(it)["layers"][-1].get("ffn_param_grad_norm") for _ in req.depths] for _ in req.seeds]
        out[preset] = {"seeds": seeds, "exponents": [exponent(list(req.depths), row) for row in seeds]}
    return out
