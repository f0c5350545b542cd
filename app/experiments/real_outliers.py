"""The massive activation and the attention sink of a real model, measured where they are, not as token norms.

- Massive activations (Sun et al. 2024, "Massive Activations in Large Language Models", section 2): single
  coordinates of the residual stream with |a| > 100 and about 1000x the median |activation| of their layer's
  hidden state. Reported per layer and token as the top coordinates (index, signed value), the median |a| of the
  layer, every activation meeting the criterion, and for the largest dimensions each block's attention and MLP
  contribution to that coordinate (where it is written and removed).
- The attention sink (Xiao et al. 2024, StreamingLLM): the attention mass on the first token, per block and
  head, beside the mass a uniform attention would give it.
"""

from __future__ import annotations

from typing import Any

import torch

from ..probes.real import StreamRecord

# Per layer and token, the top 2 coordinates, the top 1 beyond 64 tokens: SmolLM2's answer at the 256-token cap
# stays ~0.7 MB (docs/models.md)
TOP_K, TOP_K_LONG, LONG = 2, 1, 64
DIMENSIONS = 4  # the dimensions followed block by block
MASSIVE_ABS = 100.0  # Sun et al. 2024: |a| > 100 ...
MASSIVE_RATIO = 1000.0  # ... and about 1000x the median |a|
MAX_FOUND = 64


def massive_activations(record: StreamRecord, streams: torch.Tensor, gains: list[torch.Tensor] | None) -> dict:
    """streams (L+1, T, d): the top coordinates per layer and token, the criterion, and the largest dimensions
    followed through the blocks. `gains`: a Post-LN model's γ of each block's last LayerNorm (the norm's output is
    the stream, so γ[d] bounds what coordinate d can hold)."""
    magnitude = streams.abs()
    top = magnitude.topk(min(TOP_K if streams.shape[1] <= LONG else TOP_K_LONG, streams.shape[-1]), dim=-1)
    median = magnitude.flatten(1).median(dim=1).values  # (L+1,): over the layer's tokens and coordinates
    ratio = magnitude / median.clamp_min(1e-30)[:, None, None]
    hits = ((magnitude > MASSIVE_ABS) & (ratio >= MASSIVE_RATIO)).nonzero().tolist()
    found = sorted(
        (
            {"layer": l, "token": t, "index": d, "value": float(streams[l, t, d]), "ratio": float(ratio[l, t, d])}
            for l, t, d in hits
        ),
        key=lambda hit: -abs(hit["value"]),
    )
    return {
        "top_k": top.indices.shape[-1],
        "top_index": top.indices.tolist(),  # (L+1, T, k)
        "top_value": streams.gather(-1, top.indices).tolist(),  # signed
        "median_abs": median.tolist(),
        "median_abs_per_token": magnitude.median(dim=-1).values.tolist(),  # (L+1, T)
        "criterion": {"min_abs": MASSIVE_ABS, "min_ratio_to_median": MASSIVE_RATIO, "paper": "Sun et al. 2024"},
        "found": found[:MAX_FOUND],
        "found_total": len(found),
        "dimensions": _dimensions(record, streams, gains),
    }


def _dimensions(record: StreamRecord, streams: torch.Tensor, gains: list[torch.Tensor] | None) -> list[dict]:
    """The DIMENSIONS coordinates with the largest |x_l[t, d]| after any block, each at the token where it peaks:
    the stream there per layer and what each block's attention and MLP add to it."""
    peak = streams[1:].abs().amax(dim=(0, 1))  # (d,)
    rows = []
    for index in peak.topk(min(DIMENSIONS, peak.shape[0])).indices.tolist():
        token = int(streams[1:, :, index].abs().amax(dim=0).argmax())
        rows.append(
            {
                "index": index,
                "token": token,
                "stream": streams[:, token, index].tolist(),
                "stream_max_abs": streams[:, :, index].abs().amax(dim=1).tolist(),
                "first_token": streams[:, 0, index].tolist(),
                "attention": [float(a[0, token, index]) for a in record.attention],
                "mlp": [float(m[0, token, index]) for m in record.mlp],
                "gain": [float(g[index]) for g in gains] if gains is not None else None,
            }
        )
    return rows


def attention_sink(attentions: tuple[torch.Tensor, ...] | None, causal: bool) -> dict[str, Any] | None:
    """Per block: the attention mass on token 0, mean over heads and queries, and per head; and the mass a uniform
    attention would give it. In a causal model query 0 can only look at itself (mass 1): it is left out, and the
    uniform mass of query i is 1/(i+1); an encoder's query sees all T tokens (1/T)."""
    if not attentions:
        return None
    weights = torch.stack([a[0].detach() for a in attentions])  # (L, H, T, T): block, head, query, key
    T = weights.shape[-1]
    first = 1 if causal and T > 1 else 0
    on_first = weights[:, :, first:, 0]  # (L, H, queries)
    keys = torch.arange(first + 1, T + 1, dtype=torch.float64) if causal else torch.full((T,), float(T))
    return {
        "queries_from": first,
        "mass": on_first.mean(dim=(1, 2)).tolist(),
        "mass_per_head": on_first.mean(dim=2).tolist(),  # (L, H)
        "uniform": float((1 / keys).mean()) if first < T else None,
    }
