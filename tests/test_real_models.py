"""Pretrained models: the probes and the trace on tiny random models built from configs (offline, under a second),
the packaged MiniLM and SmolLM2 figures where installed, and POST /api/real_trace's answers and errors."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch
import torch.nn.functional as F

transformers = pytest.importorskip("transformers")

from app.api.responses import RealTraceAnswer  # noqa: E402
from app.experiments.real_trace import next_token_gradients, run_watched, trace_real  # noqa: E402
from app.models.real.loading import LoadedModel, wrap_model  # noqa: E402
from app.models.real.sources import ModelSource, available_sources, local_source, packaged_source  # noqa: E402
from app.numbers import fmt  # noqa: E402
from tests.conftest import packaged_model  # noqa: E402

SENTENCE = "The quick brown fox jumps over the lazy dog."
VOCAB = 96


class CharTokenizer:
    """One token per character: enough to drive a random model without any tokenizer file."""

    unk_token_id, unk_token = None, None
    all_special_ids: ClassVar[list[int]] = []

    def __call__(self, text: str, return_tensors: str = "pt", return_offsets_mapping: bool = False, **_: Any) -> dict:
        ids = torch.tensor([[ord(c) % VOCAB for c in text]])
        return {"input_ids": ids, "offset_mapping": torch.tensor([[[i, i + 1] for i in range(len(text))]])}

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [chr(i) for i in ids]


def tiny(kind: str) -> LoadedModel:
    torch.manual_seed(0)
    source = ModelSource(kind, "local", "", "", kind)
    if kind == "bert":
        config = transformers.BertConfig(
            vocab_size=VOCAB,
            hidden_size=32,
            num_hidden_layers=4,
            num_attention_heads=2,
            intermediate_size=64,
            initializer_range=0.5,  # branches as large as the stream, so the sums before the norms are far from √d
        )
        return wrap_model(transformers.BertModel(config), CharTokenizer(), source, causal=False)
    if kind == "gpt2":
        config = transformers.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=4, n_head=2, n_positions=64)
        return wrap_model(transformers.GPT2LMHeadModel(config).double(), CharTokenizer(), source, causal=True)
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    return wrap_model(transformers.LlamaForCausalLM(config).double(), CharTokenizer(), source, causal=True)


def test_random_bert_pins_every_layer_at_sqrt_d():
    """A fresh LayerNorm (gain 1, bias 0) sets every token's norm to √d: every Post-LN block's output is pinned."""
    loaded = tiny("bert")
    result = trace_real(loaded, SENTENCE)
    norms = torch.tensor(result["stream"]["per_token"])  # (L+1, T)
    assert loaded.family == "post_ln" and norms.shape == (5, len(SENTENCE))
    assert torch.allclose(norms, torch.full_like(norms, math.sqrt(32)), atol=1e-3)
    assert result["theory"]["pinned_level"] == pytest.approx([math.sqrt(32)] * 4, abs=1e-5)
    # what was pinned: the sums before the norms are not at √d
    assert max(abs(v - math.sqrt(32)) for v in result["post_ln"]["sum_before_mlp_norm"]) > 0.1
    assert result["gradient"] is None


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hooked_stream_is_before_the_final_norm(kind: str):
    """hidden_states[-1] already has the final norm applied in GPT-2 and Llama: the hooks read the stream itself."""
    loaded = tiny(kind)
    encoded = loaded.tokenizer(SENTENCE)
    record, _ = run_watched(loaded, encoded, gradients=False)
    hidden = loaded.model(input_ids=encoded["input_ids"], output_hidden_states=True).hidden_states
    assert len(record.streams) == len(hidden) == 5
    for mine, theirs in zip(record.streams[:-1], hidden[:-1], strict=True):
        assert torch.allclose(mine, theirs)
    last, final_norm = record.streams[-1], loaded.layout.final_norm
    assert final_norm is not None and not torch.allclose(last, hidden[-1], atol=1e-3)
    assert torch.allclose(final_norm(last), hidden[-1], atol=1e-10)


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_gradient_per_block_matches_autograd_by_hand(kind: str):
    """The last block's gradient against a hand-written head (final norm, then the output layer, then the
    cross-entropy of each next token); a middle block's against a central finite difference along it."""
    loaded = tiny(kind)
    encoded = loaded.tokenizer(SENTENCE)
    ids = encoded["input_ids"]
    record, output = run_watched(loaded, encoded, gradients=True)
    gradient = next_token_gradients(record, output, ids)

    x, final_norm = record.streams[-1].detach().requires_grad_(True), loaded.layout.final_norm
    assert final_norm is not None
    logits = loaded.model.get_output_embeddings()(final_norm(x))[0]
    (by_hand,) = torch.autograd.grad(F.cross_entropy(logits[:-1], ids[0, 1:]), x)
    assert gradient["per_token"][-1] == pytest.approx(by_hand[0].norm(dim=-1).tolist(), rel=1e-8)

    block, eps = 2, 1e-3  # Llama computes its rotary angles in float32 even in a float64 model
    record, output = run_watched(loaded, encoded, gradients=True)  # a fresh graph (the first one was used up)
    loss = F.cross_entropy(output.logits[0][:-1], ids[0, 1:])
    (g,) = torch.autograd.grad(loss, record.streams[block + 1])
    direction = g / g.norm()

    def loss_shifted(step: float) -> float:
        def shift(module: Any, inputs: Any, out: Any) -> Any:
            return (out[0] + step * direction, *out[1:]) if isinstance(out, tuple) else out + step * direction

        handle = loaded.layout.blocks[block].block.register_forward_hook(shift)
        try:
            with torch.no_grad():
                logits = loaded.model(input_ids=ids).logits[0]
        finally:
            handle.remove()
        return float(F.cross_entropy(logits[:-1], ids[0, 1:]))

    slope = (loss_shifted(eps) - loss_shifted(-eps)) / (2 * eps)
    assert slope == pytest.approx(gradient["per_block"][block + 1], rel=1e-4)


def test_growth_fit_recovers_a_geometric_stream():
    from app.experiments.real_trace import growth_fit

    fit = growth_fit([1.0] + [3.0 * 1.1**l for l in range(1, 31)])
    assert fit is not None
    assert fit["per_block"] == pytest.approx(1.1, rel=1e-9)
    assert fit["r2_geometric"] == pytest.approx(1.0) and fit["r2_power"] < fit["r2_geometric"]


def test_sources_refuse_pickled_weights_and_unlisted_downloads(tmp_path: Path):
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text("{}")
    (pickled / "pytorch_model.bin").write_bytes(b"x")
    assert local_source(pickled) is None
    found = available_sources(f"{pickled},gpt2", allow_downloads=False)
    assert "pickled" not in found and "gpt2" not in found
    assert available_sources("gpt2", allow_downloads=True)["gpt2"].kind == "hub"


# --- the packaged models (CI installs both through make) --------------------------------------------------------


def packaged(name: str) -> LoadedModel:
    return packaged_model(name)  # loaded once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def minilm_trace() -> dict[str, Any]:
    return trace_real(packaged("minilm"), SENTENCE)


@pytest.fixture(scope="module")
def smollm2_trace() -> dict[str, Any]:
    return trace_real(packaged("smollm2"), SENTENCE)


def test_minilm_is_pinned_post_ln(minilm_trace: dict[str, Any]):
    """all-MiniLM-L6-v2 (BERT family): every block's output is a LayerNorm output; the level is the learned
    gain's, below √384 = 19.6, and tokens that were up to 17x apart before the norm are within 2x after it."""
    result = minilm_trace
    assert result["model"]["family"] == "post_ln" and result["model"]["layers"] == 6
    assert result["tokens"][0] == "[CLS]" and result["tokens"][-1] == "[SEP]"
    expected = [9.65, 11.42, 11.20, 11.28, 12.46, 10.93, 8.84]
    assert result["stream"]["mean"] == pytest.approx(expected, abs=0.01)
    assert result["post_ln"]["mlp_norm_output"] == pytest.approx(result["stream"]["mean"][1:], rel=1e-6)
    assert all(v < math.sqrt(384) for v in result["stream"]["mean"])
    assert max(result["post_ln"]["token_spread_after_norm"]) < 2.0
    assert max(result["post_ln"]["token_spread_before_norm"]) > 10


def test_smollm2_snowballs_and_sinks(smollm2_trace: dict[str, Any]):
    """SmolLM2-135M (pre-RMSNorm, 4-bit weights): without the first token the stream grows 2.60 -> 54.8 -> 586,
    x10.7 over 29 blocks, closer to geometric than to a power law; the first token reaches ~22,700 from block 12
    on, ~148x the others."""
    result = smollm2_trace
    assert result["model"]["family"] == "pre_norm" and result["model"]["causal"] and result["model"]["layers"] == 30
    rest, first = result["stream"]["mean_without_first"], result["stream"]["first"]
    assert rest[0] == pytest.approx(2.60, rel=0.01)
    assert rest[1] == pytest.approx(54.8, rel=0.01)
    assert rest[-1] == pytest.approx(586, rel=0.01)
    growth = result["theory"]["growth"]
    assert growth["over_blocks"] == pytest.approx(10.7, rel=0.02)
    assert growth["per_block_endpoints"] == pytest.approx(1.085, abs=0.002)
    assert growth["r2_geometric"] > growth["r2_power"]
    assert first[12] == pytest.approx(22700, rel=0.02)
    assert result["summary"]["first_token_ratio"][12] == pytest.approx(148, rel=0.03)
    assert min(result["summary"]["first_token_ratio"][12:29]) > 40
    gradient = result["gradient"]["per_block"]
    assert gradient[1] > 10 * gradient[29]  # the gradient reaching early blocks is larger, not vanishing


def test_a_gguf_file_is_converted_once(tmp_path: Path, monkeypatch):
    """The float32 copy is made by the first caller only; a half-written copy (no marker) is made again. Until it
    is made, GET /api/real_models announces the conversion with its expected time."""
    from app.models.real import gguf_cache
    from app.models.real.weights import DIGESTS
    from app.services import real_models

    gguf = tmp_path / "weights" / "tiny.Q4_1.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    calls: list[Path] = []

    def convert(path: Path, folder: Path, causal: bool) -> None:
        calls.append(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / gguf_cache.DONE).write_text("ok")

    monkeypatch.setattr(gguf_cache, "_convert", convert)
    models_dir = tmp_path / "models"
    source = local_source(gguf.parent)
    assert source == ModelSource("weights", "local", str(gguf.parent), gguf.name, str(gguf.parent))
    digest = DIGESTS.current(source)[1]
    monkeypatch.setattr(real_models, "get_shelf", lambda: real_models.ModelShelf(1000, models_dir, False))
    assert real_models._conversion(source) == {"conversion_pending": True, "conversion_s": [20, 60]}  # announced
    gguf_cache.converted_folder(models_dir, gguf, digest).mkdir(parents=True)  # interrupted: no marker
    assert real_models._conversion(source)["conversion_pending"]
    first = gguf_cache.ensure_converted(models_dir, gguf, digest)
    second = gguf_cache.ensure_converted(models_dir, gguf, digest)
    assert first == second and len(calls) == 1 and gguf_cache.is_converted(first)
    assert real_models._conversion(source)["conversion_pending"] is False  # a later first trace waits for nothing


# --- weights on disk: the digest, a swap under a running app, a truncated file -----------------------------------

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "."]


def tiny_folder(folder: Path, kind: str, seed: int) -> Path:
    """A tiny random model saved as a Hugging Face folder (config, safetensors, a word-piece tokenizer)."""
    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(vocab))
    if kind == "bert":
        config = transformers.BertConfig(
            vocab_size=32, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32
        )
        model: Any = transformers.BertModel(config)
    else:
        config = transformers.LlamaConfig(
            vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2
        )
        model = transformers.LlamaForCausalLM(config)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def in_process_models(monkeypatch: pytest.MonkeyPatch, queue: Any = None) -> Any:
    """The models in this process (where a test's stand-ins are), behind a sentence queue of their own."""
    from app.services import real_client
    from app.services.sentence_queue import SentenceQueue

    models = real_client.InProcessModels(queue or SentenceQueue(16, 1024, 1))
    monkeypatch.setattr(real_client, "get_models", lambda: models)
    return models


class App:
    """The API of a running server whose only real model is a local folder; `restart()` keeps the disk cache and
    forgets everything held in memory (loaded models, digests, the memory cache), as a new process would."""

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch, folder: Path, cache_dir: Path) -> None:
        from app.api.deps import compute_pool
        from app.services import compute, real_models
        from app.services.cache import ResultCache

        self.client, self.folder, self.cache_dir = client, folder, cache_dir
        self.real_models, self.compute, self.ResultCache = real_models, compute, ResultCache
        self.compute_pool = compute_pool  # the dependency every route gets its pool from: overridden per restart
        source = local_source(folder)
        assert source is not None
        monkeypatch.setattr(real_models, "sources", lambda: {source.name: source})
        self.monkeypatch, self.name = monkeypatch, source.name
        self.restart()

    def restart(self) -> None:
        from app.models.real.weights import DIGESTS

        DIGESTS.forget()
        self.shelf = self.real_models.ModelShelf(1000, self.cache_dir / "models", False)
        self.monkeypatch.setattr(self.real_models, "get_shelf", lambda: self.shelf)
        cache = self.ResultCache(self.cache_dir / "answers", 50 * 2**20, namespace="test")
        pool = self.compute.ComputePool(1, 16, 30.0, 1, cache=cache)
        self.monkeypatch.setitem(self.client.app.dependency_overrides, self.compute_pool, lambda: pool)
        self.models = in_process_models(self.monkeypatch)

    def trace(self, text: str = "the quick brown fox") -> tuple[dict[str, Any], str]:
        response = self.client.post("/api/real_trace", json={"model": self.name, "text": text})
        assert response.status_code == 200, response.text
        RealTraceAnswer.model_validate_json(response.text, strict=True)  # what /openapi.json says it answers
        return response.json(), response.headers["X-Resnorm-Cache"]


def by_hand(folder: Path, text: str = "the quick brown fox") -> torch.Tensor:
    """The per-token stream norms before the last block (hidden_states[-1] has the final norm applied) of the
    folder's weights, loaded afresh with plain transformers."""
    model = transformers.AutoModel.from_pretrained(str(folder)).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    with torch.no_grad():
        hidden = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states
    return torch.stack([h[0].norm(dim=-1) for h in hidden[:-1]])


def same_numbers(answer: dict[str, Any], expected: torch.Tensor) -> bool:
    return torch.allclose(torch.tensor(answer["stream"]["per_token"][:-1]), expected, rtol=1e-5)


@pytest.mark.parametrize("swap", ["cp -p", "mv"])
def test_swapped_weights_are_answered_with_the_new_numbers(client, monkeypatch, tmp_path: Path, swap: str):
    """New weights of the same size under the same modification time (`cp -p` rewrites the file in place, only its
    ctime changes; `mv` replaces the inode): the live answer and, after a restart, the disk-cached answer are those
    of the new weights; the old weights' answers come back only with the old weights."""
    import os
    import shutil

    old, new = tiny_folder(tmp_path / "model", "llama", 0), tiny_folder(tmp_path / "other", "llama", 1)
    weights, replacement = old / "model.safetensors", new / "model.safetensors"
    old_numbers, new_numbers = by_hand(old), by_hand(new)
    assert weights.stat().st_size == replacement.stat().st_size and not torch.allclose(old_numbers, new_numbers)
    app = App(client, monkeypatch, old, tmp_path / "cache")
    first, where = app.trace()
    assert where == "computed" and same_numbers(first, old_numbers)

    before = weights.stat()
    if swap == "cp -p":
        shutil.copy2(replacement, weights)  # cp -p: in place (same inode), then the old modification time back
        os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = weights.stat()
        assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
        assert after.st_ctime_ns != before.st_ctime_ns  # what gives the swap away
    else:
        shutil.copy2(replacement, tmp_path / "staged")
        os.utime(tmp_path / "staged", ns=(before.st_atime_ns, before.st_mtime_ns))
        os.replace(tmp_path / "staged", weights)
    live, where = app.trace()
    assert where == "computed" and same_numbers(live, new_numbers)
    assert live["model"]["revision"] != first["model"]["revision"]

    app.restart()
    cached, where = app.trace()
    assert where == "disk" and cached["stream"] == live["stream"]
    shutil.copy2(tiny_folder(tmp_path / "again", "llama", 0) / "model.safetensors", weights)  # the old weights back
    back, where = app.trace()
    assert where == "disk" and back["stream"] == first["stream"]


def test_a_touched_file_is_rehashed_not_reloaded(client, monkeypatch, tmp_path: Path):
    """A new modification time over the same bytes: one rehash, the same digest, the same loaded model."""
    import os

    from app.models.real.weights import DIGESTS

    folder = tiny_folder(tmp_path / "model", "llama", 0)
    app = App(client, monkeypatch, folder, tmp_path / "cache")
    first, _ = app.trace()
    loaded, hashed = app.shelf.loaded()[app.name], DIGESTS.hashed
    os.utime(folder / "model.safetensors")
    again, where = app.trace()
    assert where == "memory" and again["stream"] == first["stream"]
    assert app.shelf.loaded()[app.name] is loaded and DIGESTS.hashed == hashed + 1


def test_a_truncated_weight_file_takes_no_page_down(client, monkeypatch, tmp_path: Path):
    """The loaded weights live in the process's own memory, not in a mapping of the file: truncating the file in
    place (`cp new old`, `rsync --inplace`) leaves the loaded model computing, every page answering, and the
    model's next request one clear error naming it."""
    import os

    from app.pages import pages

    folder = tiny_folder(tmp_path / "model", "llama", 0)
    weights = folder / "model.safetensors"
    app = App(client, monkeypatch, folder, tmp_path / "cache")
    first, _ = app.trace()
    loaded = app.shelf.loaded()[app.name]
    with open("/proc/self/maps") as maps:
        assert str(weights) not in maps.read()
    os.truncate(weights, weights.stat().st_size // 2)
    assert trace_real(loaded, "the quick brown fox")["stream"] == first["stream"]  # a mapping would SIGBUS
    response = client.post("/api/real_trace", json={"model": app.name, "text": "the lazy dog"})
    assert response.status_code == 503
    error = response.json()["errors"][0]
    assert error["field"] == "model" and app.name in error["message"] and "could not be loaded" in error["message"]
    assert "Retry-After" not in response.headers  # not "busy": retrying will not help
    for page in pages().values():
        if "{" not in page.path:
            assert client.get(page.path).status_code == 200, page.path
    assert client.post("/api/trace", json={"depth": 2}).status_code == 200


# --- the massive activation and the attention sink, against a hand computation ----------------------------------


def eager(kind: str) -> LoadedModel:
    loaded = tiny(kind)
    loaded.model.set_attn_implementation("eager")
    return loaded


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_a_planted_massive_coordinate_is_found_with_sun_et_al_criterion(kind: str):
    """Coordinate 5 of token "Q"'s embedding set to 5000: at layer 0 that token's top coordinate is 5 with value
    5000, far above 100 and 1000x the layer's median |activation| (computed here with torch by hand)."""
    loaded = eager(kind)
    embedding = loaded.model.get_input_embeddings().weight
    with torch.no_grad():
        embedding[ord("Q") % VOCAB, 5] = 5000.0
    text = "aQbc"
    result = trace_real(loaded, text)
    massive = result["massive"]
    record, _ = run_watched(loaded, loaded.tokenizer(text), gradients=False)
    streams = torch.stack([s[0].detach() for s in record.streams]).float()
    assert massive["median_abs"] == pytest.approx(streams.abs().flatten(1).median(dim=1).values.tolist(), rel=1e-5)
    top = streams.abs().topk(2, dim=-1).indices
    assert massive["top_index"] == top.tolist()
    if kind == "llama":  # a Post-LN model normalises the embedding before block 1 reads it
        assert massive["top_index"][0][1][0] == 5 and massive["top_value"][0][1][0] == pytest.approx(5000.0)
        hit = {"layer": 0, "token": 1, "index": 5}
        assert any({k: h[k] for k in hit} == hit for h in massive["found"])
    for hit in massive["found"]:
        assert abs(hit["value"]) > 100 and hit["ratio"] >= 1000
    row = massive["dimensions"][0]
    # what each block adds to the coordinate, read from the branches' outputs
    assert row["attention"] == pytest.approx([float(a[0, row["token"], row["index"]]) for a in record.attention])


def test_attention_mass_on_the_first_token_by_hand():
    """A BERT's attention probabilities written out, softmax(q·k/√d_head), from each block's input: the mass on
    token 0 per head and its mean over every query (an encoder's query sees all T tokens: uniform mass 1/T)."""
    loaded = eager("bert")
    text = "one two"
    result = trace_real(loaded, text)
    record, _ = run_watched(loaded, loaded.tokenizer(text), gradients=False)
    T = len(text)
    heads, width = 2, 16
    for block, x in enumerate(record.streams[:-1]):
        bert_layer: Any = loaded.layout.blocks[block].block
        attention = bert_layer.attention.self
        q = attention.query(x[0]).view(T, heads, width).transpose(0, 1)
        k = attention.key(x[0]).view(T, heads, width).transpose(0, 1)
        probabilities = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(width), dim=-1)  # (H, T, T)
        expected = probabilities[:, :, 0].mean(dim=1)
        assert result["attention"]["mass_per_head"][block] == pytest.approx(expected.tolist(), rel=1e-5)
        assert result["attention"]["mass"][block] == pytest.approx(float(expected.mean()), rel=1e-5)
    assert result["attention"]["uniform"] == pytest.approx(1 / T)


def test_causal_attention_mass_matches_output_attentions():
    """Llama (causal): query 0 can only see itself and is left out; query i's uniform mass is 1/(i+1)."""
    loaded = eager("llama")
    text = "abcdef"
    result = trace_real(loaded, text)
    ids = loaded.tokenizer(text)["input_ids"]
    with torch.no_grad():
        attentions = loaded.model(input_ids=ids, output_attentions=True).attentions
    for block, weights in enumerate(attentions):
        expected = weights[0, :, 1:, 0].mean(dim=1)
        assert result["attention"]["mass_per_head"][block] == pytest.approx(expected.tolist(), rel=1e-6)
    assert result["attention"]["queries_from"] == 1
    assert result["attention"]["uniform"] == pytest.approx(sum(1 / (i + 1) for i in range(1, 6)) / 5)


def test_without_eager_attention_the_answer_says_so():
    loaded = tiny("llama")  # sdpa: no attention weights
    result = trace_real(loaded, "abc")
    assert result["attention"] is None and result["attention_absent"] == "not_eager"


def test_one_token_is_not_called_an_encoder():
    loaded = tiny("llama")
    assert trace_real(loaded, "a")["gradient_absent"] == "one_token"
    assert trace_real(tiny("bert"), "ab")["gradient_absent"] == "encoder"


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_special_token_text_is_text_unless_asked(name: str):
    """ "[MASK]" and "<|im_start|>" typed in a sentence are read as characters by default; the switch reads them as
    the model's special tokens. SmolLM2's byte pieces of one Chinese character are labelled as pieces."""
    from app.experiments.real_trace import TraceOptions

    loaded = packaged(name)
    typed = "[MASK]" if name == "minilm" else "<|im_start|>"
    plain = trace_real(loaded, f"a {typed} b", TraceOptions(gradients=False))
    real = trace_real(loaded, f"a {typed} b", TraceOptions(gradients=False, special_tokens=True))
    assert typed not in plain["tokens"] and typed in real["tokens"]
    assert "special" not in plain["token_kinds"][1:-1] and plain["unknown_tokens"] == 0
    if name == "smollm2":
        pieces = trace_real(loaded, "残差", TraceOptions(gradients=False))["tokens"]
        assert pieces == ["残 1/3", "残 2/3", "残 3/3", "差 1/2", "差 2/2"]
    lines = trace_real(loaded, "one\n\ttwo", TraceOptions(gradients=False))
    assert len(lines["tokens"]) >= 4


# --- rx.real_trace ---------------------------------------------------------------------------------------------


def test_real_trace_of_a_model_in_memory_gives_it_back_as_it_was():
    """The numbers of the server's function; the model keeps its train mode, its requires_grad flags, no hooks."""
    import copy

    import app as rx

    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2
    )
    model = transformers.LlamaForCausalLM(config).train()
    model.model.layers[0].requires_grad_(False)
    flags = [p.requires_grad for p in model.parameters()]
    reference = wrap_model(copy.deepcopy(model), CharTokenizer(), ModelSource("m", "local", ""), causal=True)
    ids = [ord(c) % VOCAB for c in SENTENCE]
    result = rx.real_trace(model, ids)
    expected = trace_real(reference, SENTENCE)
    mine, theirs = torch.tensor(result["stream"]["per_token"]), torch.tensor(expected["stream"]["per_token"])
    assert torch.allclose(mine, theirs, rtol=1e-6)
    assert result["gradient"]["per_block"] == pytest.approx(expected["gradient"]["per_block"], rel=1e-5)
    assert result["tokens"] == [str(i) for i in ids]
    assert all(m.training for m in model.modules()) and [p.requires_grad for p in model.parameters()] == flags
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_real_trace_is_one_line_and_its_charts_leave_the_notebook(tmp_path):
    """repr is one line (the dict holds thousands of numbers); every figure carries its offline HTML for an
    exported notebook, takes the slide theme, and saves as the page's buttons do, with the chart's caption."""
    import app as rx
    from app.notebook.export import NotebookFigure

    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=VOCAB, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(config)
    result = rx.real_trace(model, list(range(10)))
    stream, gradient = result["stream"]["mean"], result["gradient"]["per_block"]
    assert repr(result) == (
        f"RealTrace(GPT2LMHeadModel (in memory): pre_norm, 2 blocks, 10 tokens; layer 0 -> 2: stream "
        f"{fmt(stream[0])} -> {fmt(stream[-1])}, gradient {fmt(gradient[0])} -> {fmt(gradient[-1])})"
    )
    assert "Residual stream norm per layer" in result._repr_html_()
    normal, projected = result.figure(), result.figure("models-sink", theme="slide")
    assert isinstance(normal, NotebookFigure) and isinstance(projected, NotebookFigure)
    assert projected.layout.font.size > result.figure("models-sink").layout.font.size
    page = result.save(tmp_path / "stream.html").read_text(encoding="utf-8")
    assert "plotly.js v" in page and html.escape(result.caption()) in page


def test_real_trace_refuses_in_one_clear_line():
    import app as rx

    model = tiny("llama").model
    with pytest.raises(ValueError, match=r"on cpu in torch.float16: real_trace runs on the CPU in float32"):
        rx.real_trace(model.half(), [1, 2, 3])
    odd = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2
        )
    )
    odd.model.blocks_renamed = odd.model.layers
    del odd.model.layers
    from app.models.real.layout import UnsupportedModel

    with pytest.raises(UnsupportedModel, match=r"looked for a non-empty nn\.ModuleList named layers, h or blocks"):
        rx.real_trace(odd, [1, 2, 3])


def test_real_trace_by_name_is_the_api_answer_and_leaves_the_environment_alone(client):
    import os

    import app as rx

    if packaged_source("minilm") is None:
        pytest.skip("minilm is not installed")
    before = {name: os.environ.get(name) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    mine = rx.real_trace("minilm", "Residual connections let gradients flow.")
    after = {name: os.environ.get(name) for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    served = client.post(
        "/api/real_trace", json={"model": "minilm", "text": "Residual connections let gradients flow."}
    )
    assert (
        served.json()["stream"] == mine["stream"]
        and served.json()["massive"]["top_index"] == mine["massive"]["top_index"]
    )
    assert after == before


@pytest.mark.parametrize("mine", [False, True])
def test_a_load_switches_huggingface_hub_offline_and_gives_the_callers_switch_back(mine, monkeypatch):
    """huggingface_hub keeps HF_HUB_OFFLINE in a constant read once at import: the environment alone would switch
    nothing in a process that imported it already, and a constant read during a load would stay switched."""
    import os

    import huggingface_hub.constants as hub

    from app.models.real.loading import offline

    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", mine)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with offline(allow_downloads=False):
        assert hub.is_offline_mode() and transformers.utils.hub.is_offline_mode()
        assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert hub.HF_HUB_OFFLINE is mine and "HF_HUB_OFFLINE" not in os.environ
    with pytest.raises(OSError), offline(allow_downloads=False):  # a failed load gives them back too
        raise OSError("no such model")
    assert hub.HF_HUB_OFFLINE is mine
    with offline(allow_downloads=True):  # the operator allowed downloads: the caller's switch, untouched
        assert hub.is_offline_mode() is mine


def test_a_real_model_leaves_a_fresh_processs_huggingface_hub_online():
    """In a process that had not imported huggingface_hub, the first load imports it: the constant it keeps must be
    the process's own (online), so the researcher's later from_pretrained can still download."""
    import json
    import os
    import subprocess
    import sys

    if packaged_source("minilm") is None:
        pytest.skip("minilm is not installed")
    script = (
        "import json, os, sys\n"
        "import app as rx\n"
        "assert 'huggingface_hub' not in sys.modules\n"
        "rx.real_trace('minilm', 'Residual connections let gradients flow.')\n"
        "import huggingface_hub.constants as hub, transformers.utils.hub as th\n"
        "print(json.dumps([hub.HF_HUB_OFFLINE, th.is_offline_mode(), os.environ.get('HF_HUB_OFFLINE')]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, False, None]
