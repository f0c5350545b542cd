"""Normalization layers behind one interface: `NORMS[name](d_model)` -> nn.Module mapping (..., d) -> (..., d)."""
from __future__ import annotations

import math

import torch
from torch import nn


class LayerNorm(nn.LayerNorm):
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last dimension (Ba et al. 2016)."""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__(d_model, eps=eps)


class RMSNorm(nn.RMSNorm):
    """x / sqrt(mean(x^2) + eps) * gamma: no centring, no bias (Zhang & Sennrich 2019)."""

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__(d_model, eps=eps)


class ScaleNorm(nn.Module):
    """g * x / ||x|| with one scalar g initialised to sqrt(d) (Nguyen & Salazar 2019, eq. 3)."""

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.empty(()))
        self.eps = eps
        self.d_model = d_model
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.gain.fill_(math.sqrt(self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gain * x / x.norm(dim=-1, keepdim=True).clamp_min(self.eps)


class DynamicTanh(nn.Module):
    """gamma * tanh(alpha * x) + beta, scalar alpha initialised to 0.5 (Zhu et al. 2025, 'Transformers without Normalization', eq. 1)."""

    def __init__(self, d_model: int, alpha_init: float = 0.5) -> None:
        super().__init__()
        self.alpha_init = alpha_init
        self.alpha = nn.Parameter(torch.empty(()))
        self.weight = nn.Parameter(torch.empty(d_model))
        self.bias = nn.Parameter(torch.empty(d_model))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.alpha.fill_(self.alpha_init)
            self.weight.fill_(1.0)
            self.bias.fill_(0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * torch.tanh(self.alpha * x) + self.bias


class NoNorm(nn.Identity):
    """The identity, for stacks without normalization."""

    def __init__(self, d_model: int) -> None:
        super().__init__()


class DepthScaled(nn.Module):
    """A norm whose output is divided by sqrt(l) at block l (Sun et al. 2025, 'The Curse of Depth', LayerNorm Scaling)."""

    def __init__(self, norm: nn.Module, layer: int) -> None:
        super().__init__()
        self.norm = norm
        self.scale = 1.0 / math.sqrt(layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) * self.scale


NORMS: dict[str, type[nn.Module]] = {
    "layernorm": LayerNorm,
    "rmsnorm": RMSNorm,
    "scalenorm": ScaleNorm,
    "dyt": DynamicTanh,
    "none": NoNorm,
}
