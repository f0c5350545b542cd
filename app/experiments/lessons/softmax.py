"""Softmax saturation: as the logits grow, the distribution turns one-hot and its gradient dies.

p = softmax(s·z). Its Jacobian is J = diag(p) − p pᵀ (Bridle 1990; Goodfellow et al. 2016, sec. 6.2.2.3):
symmetric and positive semi-definite, so its spectral norm is its largest eigenvalue, the most any
upstream gradient can be amplified on its way back to the logits. When p is one-hot, J = 0.
Attention applies exactly this to q·k/√d (Vaswani et al. 2017, eq. 1): runaway activations mean
a large s, and the attention stares at one token and stops learning.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, model_validator

from . import Finite, lesson_field

MAX_LOGITS = 256  # the explorer's longest sequence; a 256×256 Jacobian per scale stays cheap
MAX_SCALES = 64
SCALE_LIMIT = 1e4
# The page's sweep: 41 scales from 10^-1.5 to 10^2.5, even steps on a log axis.
SWEEP_SCALES = tuple(round(10 ** (k / 10), 6) for k in range(-15, 26))


class SoftmaxRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    logits: list[Finite] = lesson_field(
        [2.0, 1.0, 0.5, 0.0, -1.0],
        "Logits z",
        "logits z",
        "The scores before softmax (2 to 256 numbers).",
        "softmax 之前的分数（2 到 256 个数）。",
        min_length=2,
        max_length=MAX_LOGITS,
    )
    scale: float = lesson_field(
        1.0,
        "Scale s",
        "缩放 s",
        "Multiplies every logit: p = softmax(s·z). A large s is what runaway activations do.",
        "乘到每个 logit 上：p = softmax(s·z)。激活失控时相当于 s 很大。",
        ge=0.0,
        le=SCALE_LIMIT,
        allow_inf_nan=False,
    )
    scales: list[Finite] | None = lesson_field(
        None,
        "Scales to sweep",
        "要扫描的缩放值",
        "Optional list of scales; the answer then has one row per scale.",
        "可选的缩放值列表；答案中每个缩放值一行。",
        min_length=1,
        max_length=MAX_SCALES,
    )

    @model_validator(mode="after")
    def _check_scales(self) -> SoftmaxRequest:
        bad = [s for s in self.scales or [] if not 0.0 <= s <= SCALE_LIMIT]
        if bad:
            raise ValueError(
                f"scales: {bad[0]:g} is out of range | allowed: each in [0, {SCALE_LIMIT:g}], at most {MAX_SCALES} values"
            )
        return self


def softmax_lesson(req: SoftmaxRequest) -> dict[str, Any]:
    logits = torch.tensor(req.logits, dtype=torch.float64)
    main = _at_scale(logits, req.scale)
    autograd = torch.autograd.functional.jacobian(
        lambda z: torch.softmax(req.scale * z, dim=-1), logits, vectorize=True
    )
    # d p / d z = s·(diag(p) − p pᵀ); divide the s out to compare with the closed form used everywhere below.
    closed = req.scale * _jacobian(torch.softmax(req.scale * logits, dim=-1))
    answer = {
        "logits": req.logits,
        "n": logits.numel(),
        "dtype": "float64",
        **main,
        "jacobian_norm_kind": "spectral",
        "jacobian_of": "softmax with respect to its input s·z; multiply by s for d p / d z",
        "jacobian_check": {
            "op": "torch.autograd.functional.jacobian",
            "max_abs_difference": (autograd - closed).abs().max().item(),
        },
        "uniform_entropy": torch.log(torch.tensor(float(logits.numel()), dtype=torch.float64)).item(),
        "uniform_jacobian_norm": 1.0 / logits.numel(),
    }
    if req.scales is not None:
        answer["sweep"] = [_at_scale(logits, s) for s in req.scales]
    return answer


def _at_scale(logits: torch.Tensor, scale: float) -> dict[str, Any]:
    probs = torch.softmax(scale * logits, dim=-1)
    jacobian = _jacobian(probs)
    spectral = _spectral_norm(jacobian)
    entropy = -torch.special.xlogy(probs, probs).sum()  # xlogy: 0·log 0 = 0 for saturated entries
    return {
        "scale": scale,
        "probs": probs.tolist(),
        "entropy": entropy.item(),
        "max_prob": probs.max().item(),
        "argmax": int(probs.argmax()),
        "jacobian_norm": spectral,
        "jacobian_frobenius": torch.linalg.matrix_norm(jacobian).item(),
        "jacobian_norm_wrt_logits": scale * spectral,
    }


def _spectral_norm(jacobian: torch.Tensor) -> float:
    """Symmetric PSD: the spectral norm is the largest eigenvalue. Overflowed logits give NaN, reported as null."""
    if not torch.isfinite(jacobian).all():
        return math.nan
    return torch.linalg.eigvalsh(jacobian)[-1].clamp_min(0.0).item()


def _jacobian(probs: torch.Tensor) -> torch.Tensor:
    """d softmax(z) / d z = diag(p) − p pᵀ."""
    return torch.diag(probs) - torch.outer(probs, probs)
