"""A bare, hand-written Pre-LN Transformer (nanoGPT style): the yardstick the trace endpoint is timed against.

Same architecture and Xavier init as `Stack` with the default config, but no registries, no hooks, no JSON.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class BareBlock(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def attn(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in self.qkv(x).split(c, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.down(F.gelu(self.up(self.ln_2(x))))


class BareTransformer(nn.Module):
    def __init__(self, depth: int, width: int, heads: int, vocab: int, seq_len: int) -> None:
        super().__init__()
        self.token, self.position = nn.Embedding(vocab, width), nn.Embedding(seq_len, width)
        self.blocks = nn.ModuleList(BareBlock(width, heads) for _ in range(depth))
        self.ln_f, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.token(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


@torch.no_grad()
def xavier_init(model: BareTransformer, generator: torch.Generator) -> None:
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            module.weight.normal_(0.0, math.sqrt(0.5), generator=generator)
        elif isinstance(module, nn.Linear):
            for part in module.weight.chunk(3 if module.out_features == 3 * module.in_features else 1, dim=0):
                nn.init.xavier_uniform_(part, generator=generator)
            module.bias.zero_()


def bare_step(
    depth: int = 96, width: int = 64, heads: int = 4, seq_len: int = 32, batch: int = 4, vocab: int = 128, seed: int = 0
) -> float:
    """Build, initialise, forward and backward once; returns the loss."""
    model = BareTransformer(depth, width, heads, vocab, seq_len)
    xavier_init(model, torch.Generator().manual_seed(seed))
    tokens = torch.randint(vocab, (batch, seq_len + 1), generator=torch.Generator().manual_seed(seed + 1))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
    loss.backward()
    return loss.item()
