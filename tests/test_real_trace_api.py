"""POST /api/real_trace and GET /api/real_models: answers, the cache, and every kind of bad input."""

from __future__ import annotations

import pytest

from app.api.responses import TokenCount
from app.models.real.sources import packaged_source
from app.services import real_models
from tests.conftest import strict

pytest.importorskip("transformers")
needs_minilm = pytest.mark.skipif(packaged_source("minilm") is None, reason="no minilm: resnorm-explorer fetch-models")


def test_models_are_listed_with_install_commands(client):
    body = strict(client.get("/api/real_models"))
    assert body["missing_packages"] == []
    assert any("resnorm-explorer[models]" in line for line in body["install"])
    assert "resnorm-explorer fetch-models" in body["install"]
    names = [m["name"] for m in body["models"]]
    assert names == [n for n in ("minilm", "smollm2") if packaged_source(n) is not None]


@needs_minilm
def test_a_trace_then_the_same_from_the_cache(client):
    request = {"model": "minilm", "text": "残差连接让深层网络可以训练。"}
    first = client.post("/api/real_trace", json=request)
    assert first.status_code == 200, first.text
    body = strict(first)
    assert body["model"]["family"] == "post_ln"
    assert len(body["stream"]["per_token"]) == 7 and len(body["stream"]["per_token"][0]) == len(body["tokens"])
    assert "残" in body["tokens"]
    again = client.post("/api/real_trace", json=request)
    assert again.headers["X-Resnorm-Cache"] in ("memory", "disk")
    assert strict(again)["stream"] == body["stream"]


@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({"model": "no-such-model"}, "model", 422),
        ({"text": ""}, "text", 422),
        ({"text": "   "}, "text", 422),
        ({"text": "bell\x07"}, "text", 422),
        ({"text": "word " * 300}, "text", 422),
        ({"text": "x" * 2001}, "text", 422),
        ({"text": "a\rb"}, "text", 422),
        ({"gradients": "yes"}, "gradients", 422),
        ({"colour": "red"}, "colour", 422),
    ],
)
@needs_minilm
def test_bad_input_names_the_field(client, body, field, status):
    response = client.post("/api/real_trace", json=body)
    assert response.status_code == status, response.text
    assert strict(response)["errors"][0]["field"] == field


@needs_minilm
def test_unknown_model_lists_the_available_ones(client):
    error = strict(client.post("/api/real_trace", json={"model": "gpt-5"}))["errors"][0]
    assert "minilm" in error["allowed"]


def test_without_the_extra_the_answer_says_what_to_install(client, monkeypatch):
    monkeypatch.setattr(real_models, "missing_extra", lambda: ["transformers"])
    response = client.post("/api/real_trace", json={})
    assert response.status_code == 503
    assert "resnorm-explorer[models]" in strict(response)["errors"][0]["allowed"]
    assert strict(client.get("/api/real_models"))["ready"] is False


@needs_minilm
def test_a_model_that_fails_to_load_is_one_clear_error(client, monkeypatch):
    """A damaged file, a missing package or too little memory: a 503 naming the model; other pages keep working."""
    from tests.test_real_models import in_process_models

    shelf = real_models.ModelShelf(10_000, real_models.get_shelf().models_dir, False)
    monkeypatch.setattr(real_models, "get_shelf", lambda: shelf)
    in_process_models(monkeypatch)  # the models in this process, where the fake is

    def broken(*args, **kwargs):
        raise OSError("safetensors header is damaged")

    monkeypatch.setattr(real_models, "load_model", broken)
    response = client.post("/api/real_trace", json={"model": "minilm", "text": "a sentence never traced before"})
    assert response.status_code == 503
    error = strict(response)["errors"][0]
    assert error["field"] == "model" and "damaged" in error["message"]
    assert client.post("/api/trace", json={"depth": 2}).status_code == 200


def test_the_shelf_unloads_the_least_recently_used(monkeypatch):
    from app.models.real.sources import ModelSource

    class Fake:
        memory_mb, digest = 60.0, "d"

    loads: list[str] = []

    def load(source: ModelSource, *args: object) -> Fake:
        loads.append(source.name)
        return Fake()

    monkeypatch.setattr(real_models, "load_model", load)
    monkeypatch.setattr(real_models, "weights_mb", lambda source: 60.0)
    shelf = real_models.ModelShelf(150, real_models.get_shelf().models_dir, False)
    a, b, c = (ModelSource(n, "local", "/nowhere") for n in "abc")
    shelf.get(a, "d"), shelf.get(b, "d"), shelf.get(a, "d"), shelf.get(c, "d")  # a was used after b: b leaves
    assert set(shelf.loaded()) == {"a", "c"} and loads == ["a", "b", "c"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_models_page_renders_in_both_languages(client, lang):
    from app.pages import get_registry
    from tests.conftest import page_data

    html = client.get("/models", params={"lang": lang}).text
    assert get_registry().t("models.title", lang) in html
    data = page_data(html)
    if data["extra"]["ready"]:
        assert 'data-chart="models-stream"' in html and 'data-chart="models-tokens"' in html
        assert data["extra"]["default_model"] in data["extra"]["models"]


def test_models_page_without_the_extra_says_what_to_install(client, monkeypatch):
    from dataclasses import replace

    from app.pages import pages

    page = pages()["models"]
    bare = replace(page, charts=(), extra={**page.extra, "ready": False, "models": []})
    monkeypatch.setitem(pages(), "models", bare)
    html = client.get("/models", params={"lang": "zh"}).text
    assert 'id="models-missing"' in html and "resnorm-explorer[models]" in html and "data-chart=" not in html


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_two_traces_of_one_model_at_once_do_not_mix(name: str):
    """The hooks sit on the shared model: concurrent traces must each see only their own sentence."""
    from concurrent.futures import ThreadPoolExecutor

    from app.config.real import RealTraceRequest

    if packaged_source(name) is None:
        pytest.skip(f"{name} is not installed")
    source, digest = real_models.resolve(name)
    texts = ["Short one.", "A rather longer sentence with many more tokens in it than the first."]
    alone = [real_models.compute_real_trace(source, digest, RealTraceRequest(model=name, text=t)) for t in texts]
    with ThreadPoolExecutor(2) as pool:
        together = list(
            pool.map(
                lambda t: real_models.compute_real_trace(source, digest, RealTraceRequest(model=name, text=t)),
                texts * 3,
            )
        )
    for i, result in enumerate(together):
        assert result["stream"]["per_token"] == alone[i % 2]["stream"]["per_token"]
        assert result["gradient"] == alone[i % 2]["gradient"]


@needs_minilm
def test_the_token_counter_offers_a_prefix_that_fits(client):
    text = "Residual connections let gradients flow straight back; layer normalization rescales. " * 20
    answer = client.post("/api/real_tokens", json={"model": "minilm", "text": text})
    counted = TokenCount.model_validate_json(answer.text, strict=True).model_dump()  # as /openapi.json says
    assert counted["tokens"] > counted["limit"] == 256 and not counted["fits"]
    prefix = text[: counted["truncate_at"]]
    again = strict(client.post("/api/real_tokens", json={"model": "minilm", "text": prefix}))
    assert again["fits"] and again["tokens"] >= 250
    chinese = "残差连接让梯度可以直接流回浅层，层归一化则把每个向量拉回固定的尺度。"
    for model in [n for n in ("minilm", "smollm2") if packaged_source(n) is not None]:
        assert strict(client.post("/api/real_tokens", json={"model": model, "text": chinese}))["fits"]


def test_too_many_tokens_is_refused_before_any_weights_load(client, monkeypatch, tmp_path):
    from tests.test_real_models import App, tiny_folder

    app = App(client, monkeypatch, tiny_folder(tmp_path / "model", "llama", 0), tmp_path / "cache")
    response = client.post("/api/real_trace", json={"model": app.name, "text": "the " * 300})
    assert response.status_code == 422 and strict(response)["errors"][0]["field"] == "text"
    assert app.shelf.loaded() == {}


def test_errors_of_the_real_process_reach_the_worker_whole():
    """A trace fails in the models process and its exception is pickled back: one that did not unpickle broke the
    whole process pool instead of answering 422 or 503."""
    import pickle

    from app.experiments.real_trace import TooManyTokens

    for error in (real_models.ModelUnavailable("minilm", "is damaged"), TooManyTokens(300, 256)):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and vars(back) == vars(error)
