"""The gradient through a pre-norm stream, scaled by the stream's own size.

A pre-norm block reads its stream through a norm, N(x) = γ ⊙ x / rms(x), whose Jacobian scales as 1/‖x‖: the
larger the stream, the less a step in it changes what the block reads (Xiong et al. 2020, section 3.3, make the same
argument for Pre-LN's gradient). So the gradient per token ‖∂L/∂x_l‖ shrinks as ‖x_l‖ grows, and the product
‖∂L/∂x_l‖·‖x_l‖ varies much less over the layers than the gradient alone. Both are taken per token and averaged
over tokens 2…T (the first token's stream is the massive activation's: 100× the others').
"""

from __future__ import annotations

from typing import Any

import torch


def scaled(gradient: dict[str, Any] | None, norms: torch.Tensor) -> dict[str, Any] | None:
    """The gradient answer with, per layer, the mean over tokens 2…T of ‖∂L/∂x_l‖ (`per_token_mean`) and of
    ‖∂L/∂x_l‖·‖x_l‖ (`times_norm`); norms: (L+1, T), ‖x_l‖ per layer and token."""
    if gradient is None:
        return None
    per_token = torch.tensor(gradient["per_token"], dtype=torch.float64)  # (L+1, T)
    rest = slice(1, None) if per_token.shape[1] > 1 else slice(None)
    product = per_token * norms.to(torch.float64)
    return {
        **gradient,
        "per_token_mean": per_token[:, rest].mean(dim=1).tolist(),
        "times_norm": product[:, rest].mean(dim=1).tolist(),
    }
