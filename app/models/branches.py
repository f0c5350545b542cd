"""What a block computes before it is merged into the stream: attention, feed-forward, or one dense layer."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .linear import Linear

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "gelu": nn.GELU,
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
}


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention (Vaswani et al. 2017, eq. 1): softmax(QK^T/sqrt(d_head)) V, then W_O."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = Linear(d_model, 3 * d_model)
        self.out = Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape  # (B, T, C)
        q, k, v = self.qkv(x).split(width, dim=-1)
        q, k, v = (t.view(batch, tokens, self.n_heads, -1).transpose(1, 2) for t in (q, k, v))  # (B, H, T, C/H)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(batch, tokens, width))


class FeedForward(nn.Module):
    """W_down act(W_up x) with a 4x wider hidden layer."""

    def __init__(self, d_model: int, activation: str) -> None:
        super().__init__()
        self.up = Linear(d_model, 4 * d_model)
        self.act = ACTIVATIONS[activation]()
        self.down = Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


class ParallelBranches(nn.Module):
    """attn(h) + ffn(h): both branches read the same input and their outputs are summed, so one block is
    x + attn(N(x)) + ffn(N(x)) with one shared norm (Wang & Komatsuzaki 2021, GPT-J; Chowdhery et al. 2022, PaLM, sec. 2)."""

    def __init__(self, attn: nn.Module, ffn: nn.Module) -> None:
        super().__init__()
        self.attn, self.ffn = attn, ffn

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.attn(h) + self.ffn(h)


class Dense(nn.Module):
    """act(W x + b): one layer of a plain MLP."""

    def __init__(self, d_model: int, activation: str) -> None:
        super().__init__()
        self.linear = Linear(d_model, d_model)
        self.act = ACTIVATIONS[activation]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(x))
