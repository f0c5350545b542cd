"""A room of sentences traced as one padded batch: every sentence's answer equals its own single pass within float32
rounding, gradients included (each sentence's loss is its own), for an encoder and two decoder families."""

from __future__ import annotations

import math
from typing import Any

import pytest

pytest.importorskip("transformers")

from app.experiments.real_batch import pad_batch, trace_batch
from app.experiments.real_trace import TraceOptions, tokenize, trace_real
from tests.test_real_models import eager

# Different lengths (1 to 31 characters: one token each), so every sentence but the longest is padded
TEXTS = ["The quick brown fox jumps over.", "A lazy dog.", "x", "Residual streams grow", "Norms pin it."]


def close(single: Any, batched: Any, where: str = "") -> None:
    """Equal structure, equal text and integers, numbers within float32 rounding (NaN where NaN)."""
    if isinstance(single, dict):
        assert single.keys() == batched.keys(), where
        for key in single:
            if key != "compute_s":
                close(single[key], batched[key], f"{where}.{key}")
    elif isinstance(single, list):
        assert len(single) == len(batched), where
        for i, (a, b) in enumerate(zip(single, batched, strict=True)):
            close(a, b, f"{where}[{i}]")
    elif isinstance(single, float) and not isinstance(batched, bool):
        assert math.isnan(single) == math.isnan(batched), where
        if not math.isnan(single):
            assert batched == pytest.approx(single, rel=2e-4, abs=1e-5), where
    else:
        assert single == batched, where


@pytest.mark.parametrize("kind", ["bert", "gpt2", "llama"])
def test_a_batch_answers_each_sentence_as_its_own_pass(kind: str):
    loaded = eager(kind)
    loaded.model.float()  # the server's precision: float32
    options = TraceOptions()
    batched = trace_batch(loaded, TEXTS, options)
    for text, answer in zip(TEXTS, batched, strict=True):
        single = trace_real(loaded, text, options)
        close(single, answer, text)
        assert len(answer["tokens"]) == len(text)
    gradients = [a["gradient"] for a in batched]
    if kind == "bert":
        assert all(g is None for g in gradients) and {a["gradient_absent"] for a in batched} == {"encoder"}
    else:  # per sentence, not the batch's: the one-token sentence has none, the others their own loss
        assert gradients[2] is None and batched[2]["gradient_absent"] == "one_token"
        losses = [g["loss"] for g in gradients if g is not None]
        assert len(set(losses)) == len(losses) == 4


def test_options_off_are_off_for_every_sentence_of_the_batch():
    loaded = eager("llama")
    loaded.model.float()
    options = TraceOptions(gradients=False, attention=False)
    for text, answer in zip(TEXTS, trace_batch(loaded, TEXTS, options), strict=True):
        close(trace_real(loaded, text, options), answer, text)
        assert answer["gradient_absent"] == "off" and answer["attention"] is None


def test_padding_goes_right_with_a_mask_over_the_real_tokens():
    loaded = eager("bert")
    encoded = [tokenize(loaded, text, TraceOptions()) for text in ("abc", "a")]
    batch = pad_batch(encoded)
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["input_ids"][1, 0] == encoded[1]["input_ids"][0, 0] and batch["input_ids"][1, 1:].tolist() == [0, 0]
