"""The whole model: embedding -> L blocks -> optional final norm -> head, built from one TraceConfig."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from ..config import TraceConfig
from .branches import CausalSelfAttention, Dense, FeedForward, ParallelBranches
from .linear import Embedding, Linear
from .norms import DepthScaled, norm_from_config
from .residuals import CONNECTIONS, RESIDUALS, Chain
from .units import UNITS, block_position

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class TokenEmbedding(nn.Module):
    """x_0 = token embedding + learned position embedding."""

    def __init__(self, vocab_size: int, seq_len: int, d_model: int) -> None:
        super().__init__()
        self.token = Embedding(vocab_size, d_model)
        self.position = Embedding(seq_len, d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.token(tokens) + self.position(positions)  # (B, T, C)


class InputStream(nn.Identity):
    """x_0 for the MLP: the input vectors themselves."""


class Block(nn.Module):
    """One block: its units applied in order (attention then FFN; one parallel attention+FFN unit; one dense layer)."""

    def __init__(self, units: dict[str, nn.Module]) -> None:
        super().__init__()
        self.units = nn.ModuleDict(units)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for unit in self.units.values():
            x = unit(x)
        return x


class Blocks(nn.ModuleList):
    """The stack's blocks: an nn.ModuleList whose items type-check as Block (torch types them as nn.Module)."""

    if TYPE_CHECKING:

        def __iter__(self) -> Iterator[Block]: ...

        def __getitem__(self, index: int) -> Block: ...  # type: ignore[override]  # nobody slices a stack


class Stack(nn.Module):
    """embed -> blocks (chained, or densely connected) -> final norm -> head; `loss(batch)` is cross-entropy or MSE."""

    def __init__(self, cfg: TraceConfig) -> None:
        super().__init__()
        self.arch = cfg.arch
        width = cfg.d_model
        if cfg.arch == "transformer":
            self.embed: nn.Module = TokenEmbedding(cfg.vocab_size, cfg.seq_len, width)
            self.head: nn.Module = Linear(width, cfg.vocab_size)
        else:
            self.embed, self.head = InputStream(), nn.Identity()
        self.blocks = Blocks(_build_block(cfg, layer) for layer in range(1, cfg.depth + 1))
        self.connect = CONNECTIONS.get(cfg.residual, Chain)(cfg.depth)
        uses_final_norm = cfg.final_norm and cfg.norm_position != "post"
        self.final_norm = norm_from_config(cfg, cfg.norm if uses_final_norm else "none")

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = self.embed(inputs)
        x = self.connect(x, self.blocks)
        return self.head(self.final_norm(x))

    def loss(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        out = self(inputs).float()
        if self.arch == "transformer":
            return F.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1))
        return F.mse_loss(out, targets)


def _sequential(cfg: TraceConfig) -> dict[str, nn.Module]:
    """Attention, then the FFN reads attention's result: two units (Vaswani et al. 2017)."""
    return {"attn": CausalSelfAttention(cfg.d_model, cfg.n_heads), "ffn": FeedForward(cfg.d_model, cfg.activation)}


def _parallel(cfg: TraceConfig) -> dict[str, nn.Module]:
    """Attention and FFN read the same input and are summed: one unit, so one norm and one shortcut (GPT-J, PaLM)."""
    return {"parallel": ParallelBranches(*_sequential(cfg).values())}


BLOCKS = {"sequential": _sequential, "parallel": _parallel}


def _build_block(cfg: TraceConfig, layer: int) -> Block:
    position = block_position(cfg.norm_position, layer, cfg.depth)
    # an MLP stack has one branch per block, so parallel and sequential are the same block
    branches = BLOCKS[cfg.block](cfg) if cfg.arch == "transformer" else {"mlp": Dense(cfg.d_model, cfg.activation)}
    return Block({name: _build_unit(cfg, position, layer, branch) for name, branch in branches.items()})


def _build_unit(cfg: TraceConfig, position: str, layer: int, branch: nn.Module) -> nn.Module:
    in_norm = norm_from_config(cfg)
    if cfg.depth_scaled_norm and position in ("pre", "sandwich"):
        in_norm = DepthScaled(in_norm, layer)
    out_norm = norm_from_config(cfg) if position != "pre" else None
    combine = RESIDUALS[cfg.residual](cfg.d_model, cfg.residual_scale)
    return UNITS[position](branch, in_norm if position != "post" else None, combine, out_norm)


def make_batch(cfg: TraceConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The synthetic batch: random tokens (next-token targets) or N(0,1) inputs with a random target."""
    generator = torch.Generator().manual_seed(cfg.seed + 1)
    if cfg.arch == "transformer":
        tokens = torch.randint(cfg.vocab_size, (cfg.batch, cfg.seq_len + 1), generator=generator)
        return tokens[:, :-1], tokens[:, 1:]
    shape = (cfg.batch, cfg.seq_len, cfg.d_model)
    inputs = torch.randn(shape, generator=generator).to(DTYPES[cfg.dtype])
    return inputs, torch.randn(shape, generator=generator)
