"""Real-model answers, and the charts drawn from them, say where they come from (the weights' digest, the transformers
and torch versions) and stay small: at the token cap, on a model with SmolLM2's 30 blocks and 9 heads, the answer is
under MAX_ANSWER_BYTES, and the attention is summarised per block and head, never a token x token map."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

transformers = pytest.importorskip("transformers")

from app.config.real import MAX_ANSWER_BYTES, MAX_TOKENS  # noqa: E402
from app.experiments.real_trace import TraceOptions, trace_real  # noqa: E402
from app.jsonsafe import dumps  # noqa: E402
from app.models.real.loading import library_versions, wrap_model  # noqa: E402
from app.models.real.sources import ModelSource  # noqa: E402
from app.models.real.weights import DIGESTS  # noqa: E402
from tests.conftest import strict  # noqa: E402
from tests.test_real_models import VOCAB, App, CharTokenizer, tiny_folder  # noqa: E402


def test_every_answer_names_the_weights_and_the_libraries(client, monkeypatch, tmp_path: Path):
    app = App(client, monkeypatch, tiny_folder(tmp_path / "model", "llama", 0), tmp_path / "cache")
    source = app.real_models.sources()[app.name]
    digest = DIGESTS.current(source)[1]
    versions = {"transformers": version("transformers"), "torch": version("torch")}
    answer, _ = app.trace()
    assert answer["model"]["weights_sha256"] == digest and answer["model"]["revision"] == digest[:12]
    assert {k: answer["model"][k] for k in versions} == versions
    counted = strict(client.post("/api/real_tokens", json={"model": app.name, "text": "the lazy dog"}))
    assert counted["revision"] == digest[:12] and {k: counted[k] for k in versions} == versions
    loaded = strict(client.get("/api/real_models"))
    assert [m["info"]["weights_sha256"] for m in loaded["models"] if m["name"] == app.name] == [digest]
    expected = [{"name": app.name, "revision": digest[:12], "weights_sha256": digest, **versions}]
    for key, body in [("models-sink", {}), ("models-stream", {"compare": "none"}), ("models-set", {})]:
        chart = strict(client.post(f"/api/figure/{key}", json={"model": app.name, "text": "the lazy dog", **body}))
        assert chart["weights"] == expected, key  # what the page's JSON export saves


def test_another_library_version_is_another_cache_entry(client, monkeypatch, tmp_path: Path):
    """An answer computed under other library versions is not served as this one's."""
    from app.models.real import loading

    app = App(client, monkeypatch, tiny_folder(tmp_path / "model", "llama", 0), tmp_path / "cache")
    assert app.trace()[1] == "computed" and app.trace()[1] == "memory"
    monkeypatch.setattr(loading, "library_versions", lambda: {**library_versions(), "transformers": "0.0"})
    assert app.trace()[1] == "computed"


def test_the_intervention_is_cached_per_library_version_too(monkeypatch):
    """The massive-coordinate intervention (one job over the sentence set) is cached under the weights' digest and,
    as a trace is, the library versions: after an upgrade the old job's numbers are not served again."""
    from app.models.real import loading
    from app.services import real_charts

    before = real_charts._key("digest", (3, 507), real_charts.SET_VERSION)
    assert real_charts._key("digest", (3, 507), real_charts.SET_VERSION) == before
    monkeypatch.setattr(loading, "library_versions", lambda: {**library_versions(), "torch": "0.0"})
    assert real_charts._key("digest", (3, 507), real_charts.SET_VERSION) != before


def test_an_answer_at_the_token_cap_stays_small_and_summarises_attention():
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=36,
        intermediate_size=64,
        num_hidden_layers=30,  # SmolLM2's blocks and heads: the answer's size grows with blocks x tokens, not with d
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=MAX_TOKENS,
    )
    model = transformers.LlamaForCausalLM(config)
    model.set_attn_implementation("eager")
    loaded = wrap_model(model, CharTokenizer(), ModelSource("tiny", "local", "", "", "tiny"), causal=True)
    text = ("The quick brown fox jumps over the lazy dog. " * 6)[:MAX_TOKENS]  # one token a character
    answer = trace_real(loaded, text, TraceOptions())
    assert answer["summary"]["tokens"] == MAX_TOKENS
    assert len(dumps(answer, allow_nan=True)) < MAX_ANSWER_BYTES
    attention = answer["attention"]
    assert len(attention["mass"]) == 30 and [len(row) for row in attention["mass_per_head"]] == [9] * 30
    assert len(dumps(attention, allow_nan=True)) < 16_000  # per block and head, whatever the sentence's length
