"""The massive activation as a bias: set it to its mean, or to 0, and watch the next-token loss.

Sun et al. 2024 ("Massive Activations in Large Language Models", section 3.1) patch the massive activations of
LLaMA2-7B at the layer where they appear and evaluate the perplexity: set to their mean over many sentences, the
model is unchanged; set to 0, it breaks. Here the same on a causal model and a set of sentences: at the block that
writes the massive coordinate d (the first block after which it meets their criterion), its value at the tokens
where it does is replaced, for the rest of the forward pass, by

- `mean`: its mean at those tokens over the sentence set (Sun et al.'s intervention);
- `zero`: 0;
- `others`: the coordinate's mean over the set's other tokens (token 0 excluded), what an ordinary token holds;

and the mean next-token cross-entropy of each sentence (the trace's loss) is compared with the unpatched one.

The sentences go through the model as one right-padded batch: in a causal model a token attends only to earlier
ones, so the padding after a sentence changes none of its logits (tests/test_real_intervention.py checks it against
a forward pass written out by hand, one sentence at a time).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F

from ..models.real.loading import LoadedModel
from .real_outliers import MASSIVE_ABS, MASSIVE_RATIO

PATCHES = ("mean", "zero", "others")
Site = tuple[int, int]  # (block, 1-based; dimension)


def massive_site(summaries: Sequence[dict[str, Any]]) -> Site | None:
    """(block, dimension) of the set's massive coordinate: the dimension most sentences hold their largest
    coordinate in, and the first block after which it meets the criterion in most of them (None: in none)."""
    found = [s["massive"] for s in summaries if s["massive"] and s["massive"]["first_block"] is not None]
    if not found:
        return None
    dimension = Counter(m["index"] for m in found).most_common(1)[0][0]
    block = Counter(m["first_block"] for m in found if m["index"] == dimension).most_common(1)[0][0]
    return block, dimension


def batch_of(encodings: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The sentences' ids right-padded into one batch (B, T), with the attention mask and each one's length."""
    lengths = [int(e["input_ids"].shape[1]) for e in encodings]
    ids = torch.zeros(len(encodings), max(lengths), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, (encoded, length) in enumerate(zip(encodings, lengths, strict=True)):
        ids[row, :length] = encoded["input_ids"][0]
        mask[row, :length] = 1
    return {"input_ids": ids, "attention_mask": mask, "lengths": torch.tensor(lengths)}


def losses(loaded: LoadedModel, batch: dict[str, torch.Tensor]) -> list[float | None]:
    """Each sentence's mean cross-entropy of its next tokens (nats), as the trace's gradient is taken of."""
    ids = batch["input_ids"]
    with torch.no_grad():
        logits = loaded.model(input_ids=ids, attention_mask=batch["attention_mask"]).logits
    out: list[float | None] = []
    for row, length in enumerate(batch["lengths"].tolist()):
        out.append(float(F.cross_entropy(logits[row, : length - 1], ids[row, 1:length])) if length > 1 else None)
    return out


def unpatched(loaded: LoadedModel, batch: dict[str, torch.Tensor], block: int) -> tuple[torch.Tensor, list]:
    """One unpatched pass: the stream after block `block` (1-based), (B, T, d), and each sentence's loss."""
    kept: list[torch.Tensor] = []

    def keep(module: Any, inputs: Any, output: Any) -> None:
        kept.append((output[0] if isinstance(output, tuple) else output).detach().clone())

    handle = loaded.layout.blocks[block - 1].block.register_forward_hook(keep)
    try:
        found = losses(loaded, batch)
    finally:
        handle.remove()
    return kept[0], found


def massive_tokens(stream: torch.Tensor, dimension: int) -> list[int]:
    """The tokens whose coordinate `dimension` meets Sun et al.'s criterion in one sentence's stream (T, d)."""
    median = stream.abs().median()
    column = stream[:, dimension].abs()
    hits = (column > MASSIVE_ABS) & (column >= MASSIVE_RATIO * median)
    return hits.nonzero().flatten().tolist()


@contextmanager
def patched(loaded: LoadedModel, site: Site, tokens: Sequence[Sequence[int]], value: float) -> Iterator[None]:
    """Within the block: block `site[0]`'s output holds `value` at coordinate `site[1]` of each sentence's tokens."""
    block, dimension = site

    def patch(module: Any, inputs: Any, output: Any) -> Any:
        stream = (output[0] if isinstance(output, tuple) else output).clone()
        for row, these in enumerate(tokens):
            stream[row, list(these), dimension] = value
        return (stream, *output[1:]) if isinstance(output, tuple) else stream

    handle = loaded.layout.blocks[block - 1].block.register_forward_hook(patch)
    try:
        yield
    finally:
        handle.remove()


def patch_values(streams: torch.Tensor, lengths: Sequence[int], dimension: int) -> dict[str, Any]:
    """The `mean` and `others` values over the set's streams after the block, (B, T, d): the coordinate's mean at
    the tokens where it is massive, and its mean over every other token but token 0 (padding left out)."""
    massive: list[float] = []
    others: list[float] = []
    for stream, length in zip(streams, lengths, strict=True):
        hit = set(massive_tokens(stream[:length], dimension))
        massive += [float(stream[t, dimension]) for t in hit]
        others += [float(stream[t, dimension]) for t in range(1, length) if t not in hit]
    return {
        "mean": statistics.fmean(massive) if massive else None,
        "zero": 0.0,
        "others": statistics.fmean(others) if others else None,
        "massive_count": len(massive),
    }


def intervene(
    loaded: LoadedModel,
    encodings: Sequence[dict[str, torch.Tensor]],
    site: Site,
    values: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the values set, per sentence its loss, its massive tokens and the change of its loss under each patch; None
    where it has no massive token or no next token). values: the set's own when None (its mean, its ordinary
    tokens' mean)."""
    batch = batch_of(encodings)
    lengths = batch["lengths"].tolist()
    streams, base = unpatched(loaded, batch, site[0])
    values = values or patch_values(streams, lengths, site[1])
    tokens = [massive_tokens(stream[:length], site[1]) for stream, length in zip(streams, lengths, strict=True)]
    after: dict[str, list[float | None]] = {}
    for name in PATCHES:
        if values[name] is None:
            after[name] = [None] * len(lengths)
            continue
        with patched(loaded, site, tokens, values[name]):
            after[name] = losses(loaded, batch)
    rows = []
    for i, loss in enumerate(base):
        change = {
            name: after[name][i] - loss if tokens[i] and loss is not None and after[name][i] is not None else None
            for name in PATCHES
        }
        rows.append({"loss": loss, "tokens": tokens[i], "change": change})
    return values, rows


def medians(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Per patch: the median change of the loss over the sentences that have one."""
    out: dict[str, float | None] = {}
    for name in PATCHES:
        kept = [r["change"][name] for r in rows if r["change"][name] is not None]
        out[name] = statistics.median(kept) if kept else None
    return out
