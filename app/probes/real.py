"""Forward hooks that watch a pretrained Hugging Face Transformer; the model never knows it is watched.

`hidden_states[-1]` of GPT-2 and Llama models already has the final norm applied, so the residual stream is read
here from each block's own output instead. Every hook handle is removed when the `with` block ends.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ..models.real.layout import Layout


def _tensor(value: Any) -> torch.Tensor:
    """A block's output: a tensor, or the first element of the tuple some families return."""
    return value[0] if isinstance(value, (tuple, list)) else value


@dataclass
class StreamRecord:
    """What one forward pass left behind, each of shape (B, T, d): the very tensors the model used, so that
    gradients can be taken with respect to them."""

    streams: list[torch.Tensor] = field(default_factory=list)  # stream before block 1, then after each block
    attention: list[torch.Tensor] = field(default_factory=list)  # each block's attention contribution
    mlp: list[torch.Tensor] = field(default_factory=list)  # each block's MLP contribution
    norm_inputs: list[torch.Tensor] = field(default_factory=list)  # Post-LN: the sums x + F(x) before each LN
    norm_outputs: list[torch.Tensor] = field(default_factory=list)  # Post-LN: what each LN made of them


@contextmanager
def watch_stream(layout: Layout) -> Iterator[StreamRecord]:
    """Record the residual stream (kept in the autograd graph, so gradients can be taken w.r.t. it).

    Only this thread's forward pass is recorded: a loaded model is shared, and another request may run it at the
    same time in another thread, with hooks of its own on the same modules."""
    record = StreamRecord()
    owner = threading.get_ident()
    handles: list[torch.utils.hooks.RemovableHandle] = []

    def keep(into: list[torch.Tensor]):
        def hook(module: nn.Module, inputs: Any, output: Any) -> None:
            if threading.get_ident() == owner:
                into.append(_tensor(output))

        return hook

    def keep_input(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if threading.get_ident() == owner:
            record.streams.append(args[0] if args else kwargs["hidden_states"])

    def keep_norm(module: nn.Module, inputs: tuple[Any, ...], output: Any) -> None:
        if threading.get_ident() == owner:
            record.norm_inputs.append(inputs[0])
            record.norm_outputs.append(_tensor(output))

    try:
        if layout.embeddings is not None:
            handles.append(layout.embeddings.register_forward_hook(keep(record.streams)))
        else:
            handles.append(layout.blocks[0].block.register_forward_pre_hook(keep_input, with_kwargs=True))
        for branches in layout.blocks:
            handles.append(branches.attention.register_forward_hook(keep(record.attention)))
            handles.append(branches.mlp.register_forward_hook(keep(record.mlp)))
            handles.extend(norm.register_forward_hook(keep_norm) for norm in branches.norms)
            handles.append(branches.block.register_forward_hook(keep(record.streams)))
        yield record
    finally:
        for handle in handles:
            handle.remove()
