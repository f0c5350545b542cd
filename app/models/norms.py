"""Normalization layers behind one interface: `NORMS[name](d_model)` -> nn.Module mapping (..., d) -> (..., d).

A norm with a setting of its own names it in `config_fields` (constructor argument -> TraceConfig field);
`norm_from_config` passes it, so the builder never asks which norm it is.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class LayerNorm(nn.LayerNorm):
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last dimension (Ba et al. 2016)."""

    pins_token = True  # after the add (Post-LN) every token comes out with length sqrt(d) at init

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__(d_model, eps=eps)


class RMSNorm(nn.RMSNorm):
    """x / sqrt(mean(x^2) + eps) * gamma: no centring, no bias (Zhang & Sennrich 2019)."""

    pins_token = True  # after the add (Post-LN) every token comes out with length sqrt(d) at init

    def __init__(self, d_model: int, eps: float = 1e-6) -> None:
        super().__init__(d_model, eps=eps)


class ScaleNorm(nn.Module):
    """g * x / ||x|| with one scalar g initialised to sqrt(d) (Nguyen & Salazar 2019, eq. 3)."""

    pins_token = True  # after the add (Post-LN) every token comes out with length sqrt(d) at init

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


class BatchNorm(nn.BatchNorm1d):
    """(x - mean_c) / sqrt(var_c + eps) * gamma_c + beta_c, one mean and variance per channel c over the whole batch
    and every position (Ioffe & Szegedy 2015, Algorithm 1, with the B x T tokens as the mini-batch).

    Training mode normalizes with the batch's own statistics and updates running averages (momentum 0.1);
    eval mode normalizes with those running averages, so a token's output no longer depends on its batch.
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__(d_model, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.reshape(-1, x.shape[-1])).view_as(x)  # (B, T, C) -> (B*T, C) -> (B, T, C)


class GroupNorm(nn.GroupNorm):
    """Per token: the C channels split into `groups` groups of C/groups, each centred and scaled by its own
    mean and variance, then a per-channel gamma and beta (Wu & He 2018, eq. 1-3). One group is LayerNorm."""

    config_fields = {"groups": "norm_groups"}
    pins_token = True  # after the add (Post-LN) every token comes out with length sqrt(d) at init

    def __init__(self, d_model: int, groups: int = 8, eps: float = 1e-5) -> None:
        super().__init__(groups, d_model, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.reshape(-1, x.shape[-1])).view_as(x)  # every token is its own sample


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
    "batchnorm": BatchNorm,
    "groupnorm": GroupNorm,
    "none": NoNorm,
}


def pinning_norms() -> list[str]:
    """The norms that pin every token to length sqrt(d) when they follow the add (their `pins_token`): pages draw
    the sqrt(d) line for these; tests/test_models.py checks both the ones that pin and the ones that do not."""
    return [name for name, norm in NORMS.items() if getattr(norm, "pins_token", False)]


def norm_from_config(cfg, name: str | None = None) -> nn.Module:
    """A fresh `NORMS[name or cfg.norm]` layer of width cfg.d_model, with the settings it names in `config_fields`."""
    norm = NORMS[name or cfg.norm]
    options = {argument: getattr(cfg, field) for argument, field in getattr(norm, "config_fields", {}).items()}
    return norm(cfg.d_model, **options)
