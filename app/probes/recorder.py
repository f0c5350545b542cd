"""Watches a Stack through hooks and turns what it saw into per-layer statistics.

Hooks only keep references (no arithmetic while the model runs); all statistics are computed
afterwards in a few vectorised ops, which keeps tracing nearly free. Every handle is removed on exit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from app.models.stack import Stack

CHUNK = 64  # stream snapshots reduced at once: bounds the memory of the float32 copies


@dataclass
class StreamRecorder:
    """Context manager: `with StreamRecorder(model) as rec: loss.backward()`; then `rec.statistics(model)`."""

    model: Stack
    names: list[str] = field(default_factory=list)        # "embed", "1.attn", "1.ffn", ...
    acts: dict[str, torch.Tensor] = field(default_factory=dict)
    branches: dict[str, torch.Tensor] = field(default_factory=dict)
    grads: dict[str, torch.Tensor] = field(default_factory=dict)
    _handles: list = field(default_factory=list)

    def __enter__(self) -> "StreamRecorder":
        self._watch("embed", self.model.embed)
        for layer, block in enumerate(self.model.blocks, start=1):
            for unit_name, unit in block.units.items():
                name = f"{layer}.{unit_name}"
                self._watch(name, unit)
                self._handles.append(unit.combine.register_forward_pre_hook(self._branch_hook(name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _watch(self, name: str, module: nn.Module) -> None:
        self.names.append(name)
        self._handles.append(module.register_forward_hook(self._output_hook(name)))

    def _output_hook(self, name: str):
        def hook(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
            self.acts[name] = output.detach()
            if output.requires_grad:
                output.register_hook(lambda grad: self.grads.__setitem__(name, grad))
        return hook

    def _branch_hook(self, name: str):
        def hook(module: nn.Module, args: tuple) -> None:
            self.branches[name] = args[1].detach()
        return hook


def stream_statistics(tensors: list[torch.Tensor], with_cosine: bool = True) -> dict[str, list[float]]:
    """Per snapshot: mean token L2 norm, global RMS, max |x|, mean pairwise token cosine (float64 maths)."""
    out: dict[str, list[float]] = {"norm": [], "rms": [], "max_abs": [], "cosine": []}
    for start in range(0, len(tensors), CHUNK):
        x = torch.stack([t.double() for t in tensors[start:start + CHUNK]])  # (N, B, T, C); float64: a bfloat16 or
        # float32 stream holds finite entries whose float32 sum of squares would overflow
        token_norm = torch.linalg.vector_norm(x, dim=-1)                     # (N, B, T)
        out["norm"] += token_norm.mean(dim=(1, 2)).tolist()
        out["rms"] += (token_norm.pow(2).mean(dim=(1, 2)) / x.shape[-1]).sqrt().tolist()
        out["max_abs"] += x.abs().amax(dim=(1, 2, 3)).tolist()
        if with_cosine:
            out["cosine"] += _mean_pairwise_cosine(x, token_norm).tolist()
    return out


def _mean_pairwise_cosine(x: torch.Tensor, token_norm: torch.Tensor) -> torch.Tensor:
    """Mean cosine similarity over pairs of distinct positions of one sequence, averaged over the batch.

    With unit vectors u_t, the sum over pairs s != t of u_s.u_t is ||sum_t u_t||^2 - sum_t ||u_t||^2,
    so no T x T matrix is needed.
    """
    tokens = x.shape[-2]
    if tokens < 2:
        return torch.full(x.shape[:1], float("nan"))
    unit = x / token_norm.clamp_min(1e-30).unsqueeze(-1)                     # (N, B, T, C)
    pairs = unit.sum(dim=-2).pow(2).sum(dim=-1) - unit.pow(2).sum(dim=(-1, -2))  # (N, B)
    return (pairs / (tokens * (tokens - 1))).mean(dim=1)


def token_norm_means(tensors: list[torch.Tensor | None]) -> list[float]:
    """Mean token L2 norm of each tensor; a missing gradient (no path to the loss) counts as 0."""
    present = [t for t in tensors if t is not None]
    values = iter(stream_statistics(present, with_cosine=False)["norm"]) if present else iter(())
    return [next(values) if t is not None else 0.0 for t in tensors]


def parameter_grad_norms(model: nn.Module, prefixes: list[str]) -> list[float]:
    """L2 norm of the gradient of all parameters under each name prefix (e.g. "blocks.0.units.attn."),
    from one pass over the parameters and one fused norm."""
    index = {prefix: i for i, prefix in enumerate(prefixes)}
    grads, owner = [], []
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        unit = index.get(".".join(name.split(".")[:4]) + ".")
        if unit is not None:
            grads.append(p.grad if p.grad.dtype == torch.float32 else p.grad.float())
            owner.append(unit)
    squares = torch.zeros(len(prefixes), dtype=torch.float64)
    if grads:
        norms = torch.stack(torch._foreach_norm(grads)).double()
        squares.index_add_(0, torch.tensor(owner), norms.pow(2))
    return squares.sqrt().tolist()
