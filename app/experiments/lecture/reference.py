"""The deck's one reference model, and the requests the reference slides share.

96 blocks, d_model 64, tanh, Xavier initialisation, seed 0; the deck switches only the two stabilizers on and off:
the identity shortcut and a Pre-LN LayerNorm. Why this model: it is the setting in which the plain stack shows the
chain product live (×0.776 per block, 3.6·10⁻¹¹ at block 1) instead of rounding it to exactly 0, as GELU or ReLU with
Xavier do. Seeds 1 to 3 are the same model with other random weights: a claim must hold on all four.

Every slide built on other settings says so first ("Not the reference model: …", `departs` in build.slide);
tests/test_lecture.py checks that the two agree. The summary slide re-sends these very requests, so its numbers are
the slides' numbers.
"""

from __future__ import annotations

from typing import Any

from ...config import REFERENCE_MODEL, TraceConfig
from . import sources as src

# The fields that make the reference model (app/config/presets.py: /gradients opens on the same model).
REFERENCE: dict[str, Any] = {"d_model": 64, "init": "xavier", "seed": 0, **REFERENCE_MODEL}
SEEDS = (0, 1, 2, 3)
# What the deck switches: (norm, norm_position, residual) per stabilizer setting.
SETTINGS: dict[str, dict[str, str]] = {
    "neither": {"norm": "none", "residual": "none"},
    "shortcut": {"norm": "none", "residual": "identity"},
    "norm": {"norm": "layernorm", "norm_position": "pre", "residual": "none"},
    "both": {"norm": "layernorm", "norm_position": "pre", "residual": "identity"},
}
# One name and one colour per stabilizer setting on every slide (a student follows the colour from slide to slide).
NAMES: dict[str, tuple[str, str]] = {
    "neither": ("No shortcut, no norm", "无捷径、无归一化"),
    "shortcut": ("Shortcut, no norm", "有捷径、无归一化"),
    "norm": ("LayerNorm, no shortcut", "有 LayerNorm、无捷径"),
    "both": ("LayerNorm + shortcut", "LayerNorm + 捷径"),
}
COLORS = {"neither": "vermillion", "shortcut": "orange", "norm": "purple", "both": "blue"}
# The fields a reference slide may change: the stabilizers and the seed.
SWITCHED = ("norm", "norm_position", "residual", "seed")


def reference(setting: str, seed: int = 0) -> TraceConfig:
    return src.model(**{**REFERENCE, "seed": seed, **SETTINGS[setting]})


def request(setting: str, seed: int = 0) -> dict[str, Any]:
    """The POST /api/trace source of a reference slide (the same dict wherever it is used)."""
    return src.trace(reference(setting, seed))


def is_reference(cfg: TraceConfig) -> bool:
    """Whether a config is the reference model with only the stabilizers (and the seed) switched."""
    base = reference("neither").model_dump()
    mine = cfg.model_dump()
    return all(mine[k] == v for k, v in base.items() if k not in SWITCHED)


DEPARTS_PREFIX = ("Not the reference model: ", "不是参考模型：")


def departs(en: str, zh: str) -> tuple[str, str]:
    """The first line of a slide on other settings, in large type."""
    return (DEPARTS_PREFIX[0] + en, DEPARTS_PREFIX[1] + zh)
