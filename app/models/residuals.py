"""How a branch output f is merged back into the stream x: `RESIDUALS[name](d_model, scale)` -> combine(x, f)."""
from __future__ import annotations

import torch
from torch import nn

from app.models.linear import Linear


class IdentityShortcut(nn.Module):
    """alpha * x + f (He et al. 2016; alpha > 1 is DeepNorm's up-weighted shortcut, Wang et al. 2022)."""

    def __init__(self, d_model: int, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        return self.scale * x + f if self.scale != 1.0 else x + f


class NoShortcut(nn.Module):
    """A plain stack: the block's output is f alone."""

    def __init__(self, d_model: int, scale: float) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        return f


class ReZero(nn.Module):
    """alpha * x + a * f with a learnable scalar a initialised to 0 (Bachlechner et al. 2020, eq. 4)."""

    def __init__(self, d_model: int, scale: float) -> None:
        super().__init__()
        self.scale = scale
        self.gate = nn.Parameter(torch.empty(()))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.gate.fill_(0.0)

    def forward(self, x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        return self.scale * x + self.gate * f


class Highway(nn.Module):
    """T * f + (1 - T) * x with T = sigmoid(W x + b), b initialised to -1 to favour carrying x (Srivastava et al. 2015, eq. 3)."""

    def __init__(self, d_model: int, scale: float) -> None:
        super().__init__()
        self.scale = scale
        self.transform = Linear(d_model, d_model)  # initialised in app.models.init (bias -1)

    def forward(self, x: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        gate = torch.sigmoid(self.transform(x))
        return gate * f + (1.0 - gate) * (self.scale * x)


RESIDUALS: dict[str, type[nn.Module]] = {
    "identity": IdentityShortcut,
    "none": NoShortcut,
    "rezero": ReZero,
    "highway": Highway,
}
