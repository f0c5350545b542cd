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

CHUNK = 16  # stream snapshots reduced at once: bounds the memory of the T x T cosine matrices


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
    """Per snapshot: mean token L2 norm, global RMS, max |x|, mean pairwise token cosine (float32 maths)."""
    out: dict[str, list[float]] = {"norm": [], "rms": [], "max_abs": [], "cosine": []}
    for start in range(0, len(tensors), CHUNK):
        x = torch.stack([t.float() for t in tensors[start:start + CHUNK]])  # (N, B, T, C)
        token_norm = torch.linalg.vector_norm(x, dim=-1)                     # (N, B, T)
        out["norm"] += token_norm.mean(dim=(1, 2)).tolist()
        out["rms"] += x.pow(2).mean(dim=(1, 2, 3)).sqrt().tolist()
        out["max_abs"] += x.abs().amax(dim=(1, 2, 3)).tolist()
        if with_cosine:
            out["cosine"] += _mean_pairwise_cosine(x, token_norm).tolist()
    return out


def _mean_pairwise_cosine(x: torch.Tensor, token_norm: torch.Tensor) -> torch.Tensor:
    """Mean cosine similarity over pairs of distinct positions of one sequence, averaged over the batch."""
    tokens = x.shape[-2]
    if tokens < 2:
        return torch.full(x.shape[:1], float("nan"))
    unit = x / token_norm.clamp_min(1e-30).unsqueeze(-1)
    gram = unit @ unit.transpose(-1, -2)                                      # (N, B, T, T)
    off_diagonal = gram.sum(dim=(-1, -2)) - gram.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    return (off_diagonal / (tokens * (tokens - 1))).mean(dim=1)


def token_norm_means(tensors: list[torch.Tensor | None]) -> list[float]:
    """Mean token L2 norm of each tensor; a missing gradient (no path to the loss) counts as 0."""
    present = [t for t in tensors if t is not None]
    values = iter(stream_statistics(present, with_cosine=False)["norm"]) if present else iter(())
    return [next(values) if t is not None else 0.0 for t in tensors]


def parameter_grad_norms(modules: list[nn.Module]) -> list[float]:
    """L2 norm of the gradient of all parameters of each module (float32 accumulation)."""
    squares = []
    for module in modules:
        grads = [p.grad.float() for p in module.parameters() if p.grad is not None]
        squares.append(torch.stack(torch._foreach_norm(grads)).pow(2).sum() if grads else torch.zeros(()))
    return torch.stack(squares).sqrt().tolist() if squares else []
