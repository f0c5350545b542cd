"""The chain product: backpropagation multiplies one factor per layer.

A plain stack y = f(x) with per-layer derivative g passes g^l back through l layers; the shortcut
y = f(x) + x turns each factor into 1 + g (He et al. 2016, "Identity Mappings in Deep Residual
Networks", eq. 5), so the product starts at 1 instead of shrinking or exploding.
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from ..paths import chain_paths
from . import lesson_field

MAX_DEPTH = 1000


class ChainRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    derivative: float = lesson_field(
        0.9,
        "Per-layer derivative g",
        "每层导数 g",
        "The derivative of one layer's branch f; the plain stack multiplies g per layer, the shortcut 1 + g.",
        "单层分支 f 的导数；普通堆叠每层乘以 g，有捷径时每层乘以 1 + g。",
        ge=0.0,
        le=10.0,
        allow_inf_nan=False,
    )
    depth: int = lesson_field(
        96,
        "Depth L (layers)",
        "深度 L（层数）",
        "How many layers the gradient passes through.",
        "梯度要穿过的层数。",
        ge=1,
        le=MAX_DEPTH,
    )


# Where /chain opens (Page.defaults; the API keeps g = 0.9): a small branch derivative, where the plain product dies
# (0.01^96 = 1e-192) and the shortcut's stays near 1 (1.01^96 = 2.599), the shortcut's lesson.
PAGE_START: dict[str, Any] = {"derivative": 0.01}

# The worked cases of the teaching material: (g, L, which product the lesson is about).
WORKED_CASES: tuple[dict[str, Any], ...] = (
    {
        "key": "vanish",
        "derivative": 0.9,
        "depth": 96,
        "product": "plain",
        "caption": "g = 0.9, no shortcut: after 96 layers the first layer hears almost nothing.",
        "caption_zh": "g = 0.9，没有捷径：经过 96 层后，第一层几乎收不到梯度。",
    },
    {
        "key": "explode",
        "derivative": 1.1,
        "depth": 96,
        "product": "plain",
        "caption": "g = 1.1, no shortcut: a factor a little above 1 explodes over 96 layers.",
        "caption_zh": "g = 1.1，没有捷径：略大于 1 的因子经过 96 层后会爆炸。",
    },
    {
        "key": "shortcut",
        "derivative": 0.01,
        "depth": 96,
        "product": "residual",
        "caption": "g = 0.01 with the shortcut: each factor is 1.01, so the product stays near 1.",
        "caption_zh": "g = 0.01，有捷径：每个因子是 1.01，所以乘积保持在 1 附近。",
    },
)


def chain_products(derivative: float, depth: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cumulative products per layer in float64: (g^l, (1+g)^l) for l = 1..L."""
    g = torch.full((depth,), derivative, dtype=torch.float64)
    return torch.cumprod(g, dim=0), torch.cumprod(1.0 + g, dim=0)


def chain_lesson(req: ChainRequest) -> dict[str, Any]:
    plain, residual = chain_products(req.derivative, req.depth)
    with torch.no_grad():
        # log10 of the products summed as logs: finite even where the product itself overflows float64.
        g = torch.full((req.depth,), req.derivative, dtype=torch.float64)
        plain_log10 = torch.cumsum(torch.log10(g), dim=0)
        residual_log10 = torch.cumsum(torch.log10(1.0 + g), dim=0)
    return {
        # headline numbers first: strict JSON lists the first 50 overflowed paths, these must be among them
        "derivative": req.derivative,
        "depth": req.depth,
        "plain_final": plain[-1].item(),
        "residual_final": residual[-1].item(),
        "layers": list(range(1, req.depth + 1)),
        "plain": plain.tolist(),
        "residual": residual.tolist(),
        "plain_log10": plain_log10.tolist(),
        "residual_log10": residual_log10.tolist(),
        "dtype": "float64",
        # the same product unrolled into its 2^L paths (Veit et al. 2016): how much the paths of each length carry
        "paths": chain_paths(req.derivative, req.depth),
        "worked_cases": worked_cases(),
    }


def worked_cases() -> list[dict[str, Any]]:
    """Each case's exact final value, computed the same way as any other request."""
    out = []
    for case in WORKED_CASES:
        plain, residual = chain_products(case["derivative"], case["depth"])
        value = (plain if case["product"] == "plain" else residual)[-1].item()
        out.append({**case, "value": value, "plain_final": plain[-1].item(), "residual_final": residual[-1].item()})
    return out
