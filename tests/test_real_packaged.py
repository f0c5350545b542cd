"""The packaged models' massive activations and attention sink against plain transformers: one forward pass with
`output_hidden_states` and `output_attentions` and no project code (a torch hook on the last block only, since
`hidden_states[-1]` of a Llama has the final norm applied), the top coordinates, the layer medians, Sun et al.
2024's criterion and the attention mass on the first token computed from it by hand."""

from __future__ import annotations

from typing import Any

import pytest
import torch

pytest.importorskip("transformers")

from app.experiments.real_trace import trace_real
from app.models.real.loading import LoadedModel
from tests.conftest import packaged_model
from tests.test_real_models import SENTENCE


def plain_pass(loaded: LoadedModel, text: str) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """The stream (L+1, T, d) before the final norm and each block's attention weights (H, T, T)."""
    model = loaded.model
    encoded = loaded.tokenizer(text, return_tensors="pt")
    blocks = model.model.layers if loaded.causal else model.encoder.layer
    last: list[torch.Tensor] = []
    handle = blocks[-1].register_forward_hook(
        lambda _m, _i, out: last.append(out[0] if isinstance(out, tuple) else out)
    )
    try:
        with torch.no_grad():
            output = model(**encoded, output_hidden_states=True, output_attentions=True)
    finally:
        handle.remove()
    hidden = list(output.hidden_states)
    if loaded.causal:
        hidden[-1] = last[0]  # Llama: the last hidden state is the final norm's output; the stream is before it
    return torch.stack([h[0] for h in hidden]).float(), tuple(a[0] for a in output.attentions)


def sun_et_al(streams: torch.Tensor) -> list[tuple[int, int, int]]:
    """Every (layer, token, coordinate) with |a| > 100 and |a| >= 1000x its layer's median |a|, largest first."""
    hits = []
    for layer, x in enumerate(streams.abs()):
        median = float(x.flatten().median())
        for token, index in (x > max(100.0, 1000.0 * median)).nonzero().tolist():
            hits.append((float(x[token, index]), (layer, token, index)))
    return [where for _, where in sorted(hits, key=lambda hit: -hit[0])]


@pytest.mark.parametrize("name", ["smollm2", "minilm"])
def test_top_coordinates_criterion_and_sink_are_a_plain_forward_pass_by_hand(name: str):
    loaded = packaged_model(name)
    answer = trace_real(loaded, SENTENCE)
    streams, attentions = plain_pass(loaded, SENTENCE)
    assert len(answer["tokens"]) == streams.shape[1]
    massive: dict[str, Any] = answer["massive"]

    magnitude = streams.abs()
    top = magnitude.topk(massive["top_k"], dim=-1)
    assert massive["top_index"] == top.indices.tolist()
    assert torch.allclose(torch.tensor(massive["top_value"]).abs(), top.values, rtol=1e-5)
    medians = [float(x.flatten().median()) for x in magnitude]
    assert massive["median_abs"] == pytest.approx(medians, rel=1e-5)
    hits = sun_et_al(streams)
    assert massive["found_total"] == len(hits)
    assert [(h["layer"], h["token"], h["index"]) for h in massive["found"]] == hits[: len(massive["found"])]
    for dimension in massive["dimensions"]:  # what each block adds to a followed coordinate is the stream's step
        token, index = dimension["token"], dimension["index"]
        steps = (streams[1:, token, index] - streams[:-1, token, index]).tolist()
        added = [a + m for a, m in zip(dimension["attention"], dimension["mlp"], strict=True)]
        if name == "smollm2":  # pre-norm: x_{l+1} = x_l + attention + MLP; a Post-LN block normalises the sum
            assert added == pytest.approx(steps, rel=1e-3, abs=1e-2)

    first = 1 if loaded.causal else 0
    mass_per_head = [a[:, first:, 0].mean(dim=1).tolist() for a in attentions]
    for block, expected in enumerate(mass_per_head):
        assert answer["attention"]["mass_per_head"][block] == pytest.approx(expected, rel=1e-5, abs=1e-7)
        assert answer["attention"]["mass"][block] == pytest.approx(sum(expected) / len(expected), rel=1e-5)
    T = streams.shape[1]
    uniform = sum(1 / (i + 1) for i in range(1, T)) / (T - 1) if loaded.causal else 1 / T
    assert answer["attention"]["uniform"] == pytest.approx(uniform)
    if name == "smollm2":  # the figures docs/models.md quotes: dimension 507 of the first token, from block 12 on
        assert (12, 0, 507) in hits and not any(layer < 12 and index == 507 for layer, _, index in hits)
