"""Several sentences of one pretrained model in one forward and backward pass: a padded batch with its attention mask.

A room of students sends different sentences to one model at once. One padded pass over all of them reads the
weights once and multiplies larger matrices, where one pass per sentence would read them again for each. The
answers are those of one pass per sentence (within float32 rounding: the products are summed in another order):

- sentences never interact: each row of the batch is computed from that row alone, and attention looks only at
  the row's own tokens (the attention mask hides the padding);
- the loss is the sum of each sentence's own next-token loss, so ∂(Σ_b L_b)/∂x_l[b] = ∂L_b/∂x_l[b]: each
  sentence's gradient is the one it would get alone (L_c does not depend on row b for c ≠ b);
- padding goes on the right for both families read here. The real tokens then sit at positions 0..n-1, as they do
  alone, with no position ids to correct; a causal model never looks right, and an encoder's attention mask hides
  the pads. (Left padding, which generation uses to line up the last tokens of every row, would need position ids
  counted from each row's first real token.)
"""

from __future__ import annotations

from dataclasses import fields
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F

from ..models.real.loading import LoadedModel
from ..probes.real import StreamRecord
from .real_trace import (
    TraceOptions,
    _no_gradient_because,
    gradient_norms,
    run_watched,
    tokenize,
    trace_encoded,
    trace_recorded,
)

PADDING_SIDE = "right"  # see the module's docstring


def trace_batch(loaded: LoadedModel, texts: list[str], options: TraceOptions) -> list[dict[str, Any]]:
    """The answer of trace_real for each text, from one padded pass (one sentence: its own pass)."""
    encoded = [tokenize(loaded, text, options) for text in texts]
    if len(texts) == 1:
        return [trace_encoded(loaded, texts[0], encoded[0], options)]
    lengths = [int(e["input_ids"].shape[1]) for e in encoded]
    batch = pad_batch(encoded)
    graded = [_no_gradient_because(loaded, e["input_ids"], options) is None for e in encoded]
    record, output = run_watched(loaded, batch, any(graded), options.attention)
    gradients = _gradients(record, output, batch["input_ids"], lengths, graded)
    return [
        trace_recorded(loaded, text, one, options, rows_of(record, b, n), _output_rows(output, b, n), gradients[b])
        for b, (text, one, n) in enumerate(zip(texts, encoded, lengths, strict=True))
    ]


def pad_batch(encoded: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """input_ids (B, T) padded on the right with id 0 (any id: masked, and its rows are cut off), the attention
    mask (1 on real tokens), and token_type_ids where the tokenizer gives them (BERT)."""
    lengths = [int(e["input_ids"].shape[1]) for e in encoded]
    shape = (len(encoded), max(lengths))
    batch = {"input_ids": torch.zeros(shape, dtype=torch.long), "attention_mask": torch.zeros(shape, dtype=torch.long)}
    if all("token_type_ids" in e for e in encoded):
        batch["token_type_ids"] = torch.zeros(shape, dtype=torch.long)
    for b, (one, n) in enumerate(zip(encoded, lengths, strict=True)):
        batch["input_ids"][b, :n] = one["input_ids"][0]
        batch["attention_mask"][b, :n] = 1
        if "token_type_ids" in batch:
            batch["token_type_ids"][b, :n] = one["token_type_ids"][0]
    return batch


def rows_of(record: StreamRecord, b: int, n: int) -> StreamRecord:
    """Sentence b's part of a batch's record: every tensor's row b, its first n tokens, shaped (1, n, ...)."""
    return StreamRecord(**{f.name: [t[b : b + 1, :n] for t in getattr(record, f.name)] for f in fields(record)})


def _output_rows(output: Any, b: int, n: int) -> SimpleNamespace:
    attentions = getattr(output, "attentions", None)
    logits = getattr(output, "logits", None)
    return SimpleNamespace(
        attentions=tuple(a[b : b + 1, :, :n, :n] for a in attentions) if attentions else None,
        logits=logits[b : b + 1, :n] if logits is not None else None,
    )


def _gradients(
    record: StreamRecord, output: Any, ids: torch.Tensor, lengths: list[int], graded: list[bool]
) -> list[dict[str, Any] | None]:
    """Each graded sentence's ∂L_b/∂x_l, from one backward pass of Σ_b L_b (L_b: the mean cross-entropy of each
    next token of sentence b, over its own tokens only)."""
    losses = {b: F.cross_entropy(output.logits[b, : n - 1], ids[b, 1:n]) for b, n in enumerate(lengths) if graded[b]}
    if not losses:
        return [None] * len(lengths)
    total = torch.stack(list(losses.values())).sum()
    grads = torch.autograd.grad(total, record.streams)
    return [
        gradient_norms(losses[b].item(), [g[b : b + 1, :n] for g in grads]) if b in losses else None
        for b, n in enumerate(lengths)
    ]
