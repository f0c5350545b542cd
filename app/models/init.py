"""Weight initialisation schemes, applied to a built Stack with an explicit generator (thread-safe, reproducible)."""

from __future__ import annotations

import math

import torch
from torch import nn

from .branches import CausalSelfAttention, Dense, FeedForward
from .residuals import Highway
from .stack import Stack, TokenEmbedding
from .tree import submodules


@torch.no_grad()
def initialise(model: Stack, scheme: str, depth: int, generator: torch.Generator) -> None:
    """Apply `scheme` (xavier | gpt2 | deepnorm | torch) to every weight of `model`."""
    modules = submodules(model)  # one walk, in the order of model.modules(): the seed gives the same weights
    gates = {id(m.transform) for m in modules if isinstance(m, Highway)}
    for module in modules:
        if isinstance(module, TokenEmbedding):
            _init_embedding(module, scheme, generator)
        elif isinstance(module, nn.Linear) and id(module) in gates:
            _xavier_per_square_chunk(module.weight, generator)
            module.bias.fill_(-1.0)  # favour the carry path at init (Srivastava et al. 2015, sec. 2.2)
        elif isinstance(module, nn.Linear):
            _init_linear(module, scheme, generator)
        elif not isinstance(module, nn.Embedding) and (reset := getattr(type(module), "reset_parameters", None)):
            reset(module)  # norms, gates: deterministic constants (asked of the class: a missing
            # attribute on a module raises inside nn.Module.__getattr__, ~1,000 times a model)
    if scheme in ("gpt2", "deepnorm"):
        _scale_branch_outputs(model, scheme, depth, generator)


def _init_embedding(embedding: TokenEmbedding, scheme: str, generator: torch.Generator) -> None:
    if scheme == "gpt2":
        embedding.token.weight.normal_(0.0, 0.02, generator=generator)
        embedding.position.weight.normal_(0.0, 0.01, generator=generator)
    else:  # token + position each N(0, 1/2): x_0 has unit variance per coordinate, norm ~ sqrt(d)
        embedding.token.weight.normal_(0.0, math.sqrt(0.5), generator=generator)
        embedding.position.weight.normal_(0.0, math.sqrt(0.5), generator=generator)


def _init_linear(linear: nn.Linear, scheme: str, generator: torch.Generator) -> None:
    if scheme == "gpt2":
        linear.weight.normal_(0.0, 0.02, generator=generator)
    elif scheme in ("xavier", "deepnorm"):
        _xavier_per_square_chunk(linear.weight, generator)
    else:
        nn.init.kaiming_uniform_(linear.weight, a=math.sqrt(5), generator=generator)
        bound = 1.0 / math.sqrt(linear.in_features)
        if linear.bias is not None:
            linear.bias.uniform_(-bound, bound, generator=generator)
        return
    if linear.bias is not None:
        linear.bias.zero_()


def _xavier_per_square_chunk(weight: torch.Tensor, generator: torch.Generator) -> None:
    """Xavier-uniform, U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010, eq. 16), on each of
    Q, K, V separately when they are fused into one matrix. The bound is nn.init.xavier_uniform_'s, computed the
    same way (the same weights bit for bit), without its per-call checks: ~600 calls per depth-96 model."""
    rows, cols = weight.shape
    chunks = 3 if rows == 3 * cols else 1
    bound = math.sqrt(3.0) * math.sqrt(2.0 / float(cols + rows // chunks))
    if chunks == 1:
        weight.uniform_(-bound, bound, generator=generator)
        return
    for part in weight.chunk(chunks, dim=0):
        part.uniform_(-bound, bound, generator=generator)


def _scale_branch_outputs(model: Stack, scheme: str, depth: int, generator: torch.Generator) -> None:
    """gpt2: output projections ~ N(0, 0.02/sqrt(2L)) (Radford et al. 2019, sec. 2.3).
    deepnorm: FFN, value and output projections x beta = (8L)^(-1/4) (Wang et al. 2022, DeepNet, Table 1)."""
    beta = (8 * depth) ** -0.25
    for module in submodules(model):
        if scheme == "gpt2" and isinstance(module, CausalSelfAttention):
            module.out.weight.normal_(0.0, 0.02 / math.sqrt(2 * depth), generator=generator)
        elif scheme == "gpt2" and isinstance(module, (FeedForward, Dense)):
            last = module.down if isinstance(module, FeedForward) else module.linear
            last.weight.normal_(0.0, 0.02 / math.sqrt(2 * depth), generator=generator)
        elif scheme == "deepnorm" and isinstance(module, CausalSelfAttention):
            width = module.out.in_features
            module.qkv.weight[2 * width :].mul_(beta)
            module.out.weight.mul_(beta)
        elif scheme == "deepnorm" and isinstance(module, FeedForward):
            module.up.weight.mul_(beta)
            module.down.weight.mul_(beta)
        elif scheme == "deepnorm" and isinstance(module, Dense):
            module.linear.weight.mul_(beta)


def build_model(cfg) -> Stack:
    """Build, initialise and cast the model described by `cfg` (same seed -> same weights)."""
    from .stack import DTYPES

    model = Stack(cfg)
    initialise(model, cfg.init, cfg.depth, torch.Generator().manual_seed(cfg.seed))
    return model if cfg.dtype == "float32" else model.to(DTYPES[cfg.dtype])
