"""Where the norm sits around one branch. Each unit maps the stream x to the next stream.

The equation of each placement is its `forward`; the placement is chosen once, in the stack's builder.
Every unit has a `combine(x, f)`; `returns_combine` says whether the unit's output is that combine's output (so a
watcher, app/probes/recorder.py, reads the stream, the branch output and the result from one place).
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn


class PreNormUnit(nn.Module):
    """x + f(N(x)): the norm inside the branch, the shortcut untouched (Xiong et al. 2020, Pre-LN)."""

    returns_combine: ClassVar[bool] = True

    def __init__(self, branch: nn.Module, norm: nn.Module, combine: nn.Module, out_norm: nn.Module) -> None:
        super().__init__()
        self.norm, self.branch, self.combine = norm, branch, combine

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.combine(x, self.branch(self.norm(x)))


class PostNormUnit(nn.Module):
    """N(x + f(x)): the norm after the add, as in the 2017 Transformer (Vaswani et al. 2017, sec. 3.1)."""

    returns_combine: ClassVar[bool] = False

    def __init__(self, branch: nn.Module, norm: nn.Module, combine: nn.Module, out_norm: nn.Module) -> None:
        super().__init__()
        self.branch, self.combine, self.norm = branch, combine, out_norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.combine(x, self.branch(x)))


class SandwichUnit(nn.Module):
    """x + N_out(f(N_in(x))): norm on both sides of the branch (Ding et al. 2021 CogView; Kim et al. 2025 Peri-LN)."""

    returns_combine: ClassVar[bool] = True

    def __init__(self, branch: nn.Module, norm: nn.Module, combine: nn.Module, out_norm: nn.Module) -> None:
        super().__init__()
        self.norm, self.branch, self.out_norm, self.combine = norm, branch, out_norm, combine

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.combine(x, self.out_norm(self.branch(self.norm(x))))


UNITS: dict[str, type[nn.Module]] = {
    "pre": PreNormUnit,
    "post": PostNormUnit,
    "sandwich": SandwichUnit,
}


def block_position(norm_position: str, layer: int, depth: int) -> str:
    """Mix-LN: Post-LN in the first floor(L/4) blocks, Pre-LN after (Li et al. 2024, sec. 3)."""
    if norm_position == "mix":
        return "post" if layer <= depth // 4 else "pre"
    return norm_position
