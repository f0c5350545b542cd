"""/gradients' profile as one request: the page's model and its counterpart (the other residual choice), for the chosen
seed and, once asked, the next three, each pair answered as two cached /api/trace requests (a composite kind of
app/experiments/requests.py). The chart is app/figures/gradients.py."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config import TraceConfig

BAND = 4  # the seeds drawn once the band is in: the chosen one and the next three
SEED_MAX = 2**31 - 1

Json = dict[str, Any]


class GradProfile(BaseModel):
    """POST /api/figure/gradients: the page's model and how many seeds to draw (1: the chosen seed alone, fast;
    4: with the next three seeds, the band a verdict must hold on)."""

    model_config = ConfigDict(extra="forbid")
    config: TraceConfig = Field(default_factory=TraceConfig)
    seeds: int = Field(1, ge=1, le=BAND, description="seeds drawn: the config's seed and the next ones (1 or up to 4)")


def counterpart(cfg: TraceConfig) -> TraceConfig:
    """The same model with the other residual choice: a plain stack, or the identity shortcut for a plain one."""
    return cfg.model_copy(update={"residual": "identity" if cfg.residual == "none" else "none", "residual_scale": 1.0})


def seeds_of(cfg: TraceConfig, n: int) -> list[int]:
    """The config's seed and the next n − 1 (counting down from it where the field's maximum is reached)."""
    up = [s for s in range(cfg.seed, cfg.seed + n) if s <= SEED_MAX]
    return up + list(range(cfg.seed - 1, max(-1, cfg.seed - 1 - (n - len(up))), -1))


def parts(req: GradProfile) -> list[tuple[str, BaseModel]]:
    """Per seed: the page's model and its counterpart, each cached as its own /api/trace."""
    out: list[tuple[str, BaseModel]] = []
    for seed in seeds_of(req.config, req.seeds):
        cfg = req.config.model_copy(update={"seed": seed})
        out += [("trace", cfg), ("trace", counterpart(cfg))]
    return out


def combine(req: GradProfile, *traces: Json) -> Json:
    shortcut_first = req.config.residual != "none"
    pairs = [traces[i : i + 2] for i in range(0, len(traces), 2)]
    return {
        "config": req.config.model_dump(),
        "seeds": seeds_of(req.config, req.seeds),
        "with": [p[0] if shortcut_first else p[1] for p in pairs],
        "without": [p[1] if shortcut_first else p[0] for p in pairs],
    }
