"""The compute budget: what one request may cost, so a 2-core laptop keeps answering everybody else.

Counts are closed-form in the request's sizes (multiply-accumulates of one forward pass, parameters, floats autograd
keeps); tests/test_variants.py checks them against built models.
"""

from __future__ import annotations

from typing import Protocol


class Sizes(Protocol):
    """What the budget reads of a request: TraceConfig has it (a Protocol, so this module needs no import of it)."""

    @property
    def arch(self) -> str: ...

    @property
    def block(self) -> str: ...

    @property
    def residual(self) -> str: ...

    @property
    def depth(self) -> int: ...

    @property
    def d_model(self) -> int: ...

    @property
    def n_heads(self) -> int: ...

    @property
    def seq_len(self) -> int: ...

    @property
    def batch(self) -> int: ...

    @property
    def vocab_size(self) -> int: ...


# Units: multiply-accumulates of one forward pass, and parameters.
MAX_FORWARD_MACS = 3.0e9
MAX_PARAMETERS = 40_000_000
MAX_ACTIVATION_FLOATS = 100_000_000
MAX_DEPTH = 128  # blocks; the sweep, the presets' depth query and the pages share it


def units_per_block(cfg: Sizes) -> int:
    """Units (norm + branch + shortcut) per block: attention and FFN, or one parallel unit, or one MLP layer."""
    return 2 if cfg.arch == "transformer" and cfg.block == "sequential" else 1


def dense_weights(cfg: Sizes) -> int:
    """DenseFormer's extra parameters: after block l, l + 1 weights (embedding and blocks 1..l); sum = L(L+3)/2."""
    return cfg.depth * (cfg.depth + 3) // 2 if cfg.residual == "dense" else 0


def forward_macs(cfg: Sizes) -> float:
    """Multiply-accumulates of one forward pass (attention scores included). A highway gate is a d x d Linear per
    unit; DenseFormer's averages cost one multiply-add per weight and coordinate of every token."""
    tokens = cfg.batch * cfg.seq_len
    gates = units_per_block(cfg) * cfg.d_model**2 if cfg.residual == "highway" else 0
    dense = dense_weights(cfg) * cfg.d_model
    if cfg.arch == "mlp":
        return float(tokens * (cfg.depth * (cfg.d_model**2 + gates) + dense))
    per_block = 12 * cfg.d_model**2 + 2 * cfg.seq_len * cfg.d_model + gates
    return float(tokens * (cfg.depth * per_block + dense + cfg.d_model * cfg.vocab_size))


def parameter_count(cfg: Sizes) -> float:
    gate = units_per_block(cfg) * (cfg.d_model**2 + cfg.d_model) if cfg.residual == "highway" else 0
    if cfg.arch == "mlp":
        return float(cfg.depth * (cfg.d_model**2 + 4 * cfg.d_model + gate) + dense_weights(cfg))
    embeddings = 2 * cfg.vocab_size * cfg.d_model + cfg.seq_len * cfg.d_model
    return float(cfg.depth * (12 * cfg.d_model**2 + gate) + dense_weights(cfg) + embeddings)


def activation_floats(cfg: Sizes) -> float:
    """Floats autograd keeps for the backward pass (a generous estimate); DenseFormer keeps one average per block."""
    tokens = cfg.batch * cfg.seq_len
    dense = cfg.depth * cfg.d_model if cfg.residual == "dense" else 0
    if cfg.arch == "mlp":
        return float(tokens * (cfg.depth * 8 * cfg.d_model + dense))
    per_block = 24 * cfg.d_model + 3 * cfg.n_heads * cfg.seq_len
    return float(tokens * (cfg.depth * per_block + dense + 3 * cfg.vocab_size))


def fits_budget(cfg: Sizes) -> bool:
    """Whether every cost of `cfg` is within this server's limits (app/config/limits.py says which size to cut)."""
    return (
        forward_macs(cfg) <= MAX_FORWARD_MACS
        and parameter_count(cfg) <= MAX_PARAMETERS
        and activation_floats(cfg) <= MAX_ACTIVATION_FLOATS
    )
