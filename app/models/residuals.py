"""How a branch output f is merged back into the stream x: `RESIDUALS[name](d_model, scale)` -> combine(x, f);
and how blocks are chained: `CONNECTIONS[name](depth)` -> connect(x_0, blocks) -> the stream after the last block."""

from __future__ import annotations

import torch
from torch import nn

from .linear import Linear

BRANCH_ARG = 1  # every combine is called combine(x, f): the stream first, the branch output second


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


class DenseShortcut(IdentityShortcut):
    """DenseFormer keeps each block's own shortcut alpha * x + f; what it adds lives between the blocks
    (DenseConnection)."""


RESIDUALS: dict[str, type[nn.Module]] = {
    "identity": IdentityShortcut,
    "none": NoShortcut,
    "rezero": ReZero,
    "highway": Highway,
    "dense": DenseShortcut,
}


class Chain(nn.Module):
    """x_l = block_l(x_{l-1}): each block reads the one before it."""

    def __init__(self, depth: int) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor, blocks: nn.ModuleList) -> torch.Tensor:
        for block in blocks:
            x = block(x)
        return x


class DepthWeightedAverage(nn.Module):
    """y = sum_j w_j X_j over X_0 (the embedding) .. X_l (block l's output), w learned; w starts one-hot on X_l,
    so y = X_l and the stack starts as the plain residual stack (Pagliardini et al. 2024, DenseFormer, eq. 2)."""

    def __init__(self, inputs: int) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.empty(inputs))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.weights.zero_()
            self.weights[-1] = 1.0

    def forward(self, history: list[torch.Tensor]) -> torch.Tensor:
        weights = self.weights.to(history[0].dtype)
        return sum(w * x for w, x in zip(weights, history, strict=True))


class DenseConnection(nn.Module):
    """DenseNet-style connectivity for a Transformer (Huang et al. 2017; Pagliardini et al. 2024, DenseFormer):
    X_l = block_l(y_{l-1}), y_l = DWA_l(X_0, ..., X_l), so every block reads every earlier output.
    Extra cost: (l + 1) weights and (l + 1) multiply-adds per coordinate after block l."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.averages = nn.ModuleList(DepthWeightedAverage(layer + 1) for layer in range(1, depth + 1))

    def forward(self, x: torch.Tensor, blocks: nn.ModuleList) -> torch.Tensor:
        history = [x]  # X_0 = the embedding
        for block, average in zip(blocks, self.averages, strict=True):
            history.append(block(x))  # X_l = block_l(y_{l-1})
            x = average(history)  # y_l = sum_j w_lj X_j
        return x


# Residuals that also connect blocks to each other; every other residual chains its blocks.
CONNECTIONS: dict[str, type[nn.Module]] = {
    "dense": DenseConnection,
}
