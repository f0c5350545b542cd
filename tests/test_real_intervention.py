"""The intervention on the massive coordinate (app/experiments/real_intervention.py) against a forward pass written
out by hand, layer by layer, one sentence at a time: the batched, hooked version must give the same losses. Then
SmolLM2's numbers: Sun et al. 2024's result (little change at the mean, a large one at 0) on three sentences of the
set, and the deck's and /models' real-model claims on those sentences (all sixteen: `make bench`,
tools/bench_real_claims.py)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F

pytest.importorskip("transformers")

from app.experiments.lecture.slides_real import failures_on
from app.experiments.real_intervention import batch_of, intervene, losses, patched
from app.experiments.real_sentences import SENTENCES, summarise
from app.experiments.real_trace import TraceOptions, tokenize, trace_real
from app.figures.real_set_checks import caption_failures
from app.models.real.loading import LoadedModel
from tests.conftest import packaged_model
from tests.test_real_models import tiny

# Three sentences of the set in CI: the default one, the line of code, the long Chinese one
CHECKED = [SENTENCES["en"][0], SENTENCES["en"][-1], SENTENCES["zh"][0]]


def by_hand(loaded: LoadedModel, ids: torch.Tensor, patch: tuple[int, int, list[int], float] | None = None) -> float:
    """A Llama's forward pass written out: embeddings, rotary angles, a causal mask, each decoder layer in turn (the
    stream after block `patch[0]` given `patch[3]` at coordinate `patch[1]` of tokens `patch[2]`), the final norm,
    the output layer, and the mean cross-entropy of each next token."""
    base = loaded.model.model
    h = base.embed_tokens(ids)
    positions = torch.arange(ids.shape[1])[None]
    angles = base.rotary_emb(h, position_ids=positions)
    mask = torch.full((ids.shape[1], ids.shape[1]), torch.finfo(h.dtype).min, dtype=h.dtype).triu(1)[None, None]
    with torch.no_grad():
        for number, layer in enumerate(base.layers, start=1):
            out = layer(h, attention_mask=mask, position_embeddings=angles, position_ids=positions)
            h = out[0] if isinstance(out, tuple) else out
            if patch is not None and number == patch[0]:
                h = h.clone()
                h[0, patch[2], patch[1]] = patch[3]
        logits = loaded.model.lm_head(base.norm(h))[0]
    return float(F.cross_entropy(logits[:-1], ids[0, 1:]))


def encodings(loaded: LoadedModel, texts: list[str]) -> list[dict[str, Any]]:
    return [tokenize(loaded, text, TraceOptions(gradients=False)) for text in texts]


def test_the_batched_patched_losses_are_a_hand_written_forward_pass_sentence_by_sentence():
    """A random Llama (float64), three sentences of different lengths in one right-padded batch: unpatched and with
    coordinate 5 of tokens 0 and 2 set to 40 after block 2, each loss equals the hand-written pass."""
    loaded = tiny("llama")
    found = encodings(loaded, ["residual", "a norm", "the stream grows"])
    batch = batch_of(found)
    assert losses(loaded, batch) == pytest.approx([by_hand(loaded, e["input_ids"]) for e in found], rel=1e-9)
    with patched(loaded, (2, 5), [[0, 2]] * 3, 40.0):
        after = losses(loaded, batch)
    assert after == pytest.approx([by_hand(loaded, e["input_ids"], (2, 5, [0, 2], 40.0)) for e in found], rel=1e-9)
    before = losses(loaded, batch)
    assert all(a is not None and b is not None and abs(a - b) > 1e-6 for a, b in zip(after, before, strict=True))


@pytest.fixture(scope="module")
def smollm2_intervention() -> tuple[LoadedModel, dict[str, Any], list[dict[str, Any]]]:
    loaded = packaged_model("smollm2")
    values, rows = intervene(loaded, encodings(loaded, CHECKED), (12, 507))
    return loaded, values, rows


def test_smollm2_needs_its_massive_coordinate_as_a_fixed_bias(smollm2_intervention):
    """Sun et al. 2024 on SmolLM2: block 12 writes dimension 507 of the first token (about 22,000 in each sentence);
    set to its mean over the sentences the loss barely moves, set to 0 (or to an ordinary token's value) it rises
    by more than 10 nats in each sentence."""
    _, values, rows = smollm2_intervention
    assert [r["tokens"] for r in rows] == [[0], [0], [0]]
    assert 19_000 < values["mean"] < 29_000 and abs(values["others"]) < 500
    for row in rows:
        assert abs(row["change"]["mean"]) < 0.3
        assert row["change"]["zero"] > 10 and row["change"]["others"] > 10


def test_smollm2_intervention_is_the_hand_patched_forward(smollm2_intervention):
    loaded, values, rows = smollm2_intervention
    ids = encodings(loaded, CHECKED[:1])[0]["input_ids"]
    base = by_hand(loaded, ids)
    assert rows[0]["loss"] == pytest.approx(base, abs=2e-4)
    for name in ("mean", "zero"):
        assert rows[0]["change"][name] == pytest.approx(by_hand(loaded, ids, (12, 507, [0], values[name])) - base,
                                                        abs=2e-3)  # fmt: skip


def test_the_set_finds_the_coordinate_and_the_block_that_writes_it():
    loaded = packaged_model("smollm2")
    summary = summarise(trace_real(loaded, CHECKED[2], TraceOptions(gradients=False)), "zh")
    assert summary["massive"]["index"] == 507 and summary["massive"]["token"] == 0
    assert summary["massive"]["first_block"] == 12 and summary["massive"]["ratio"] > 1000


def test_the_decks_and_the_pages_real_model_claims_hold_on_three_sentences_of_the_set():
    """Each real-model slide's claim, its sources reading another sentence of the set, and what /models' captions
    say of each packaged model (app/figures/real_set_checks.py): no check fails."""
    loaded = {name: packaged_model(name) for name in ("minilm", "smollm2")}
    traces: dict[tuple[str, str], dict[str, Any]] = {}

    def trace(model: str, text: str) -> dict[str, Any]:
        if (model, text) not in traces:
            traces[model, text] = trace_real(loaded[model], text)
        return traces[model, text]

    for lang, text in zip(("en", "en", "zh"), CHECKED, strict=True):
        assert failures_on(text, trace) == {"real-pinned": [], "real-snowball": [], "real-sink": []}, text
        assert caption_failures(lang, text, trace) == {"smollm2": [], "minilm": []}, text
