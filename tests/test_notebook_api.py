"""The Python API as tools and careful callers see it (app/notebook/fields.py, app/config/machine.py,
app/__init__.py): keyword-only fields with TraceConfig's types and defaults, strict validation, every mistake an error
rather than another model, short reprs, `dir(rx)` the API only, the traced module itself, and this machine's memory as
the budget."""

from __future__ import annotations

import inspect
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import torch
from pydantic import ValidationError

import app as rx
from app import notebook
from app.config import TraceConfig
from app.experiments.train import TrainRequest
from app.notebook.fields import CompareFields, ModelFields, TraceFields, TrainFields
from app.numbers import fmt

ROOT = Path(__file__).resolve().parents[1]
loose: Any = rx  # called as a careless caller would, past the type checker
FIELD_APIS = {"trace": rx.trace, "compare": rx.compare, "build": rx.build, "batch": rx.batch}


@pytest.mark.parametrize("name", [*FIELD_APIS, "sweep"])
def test_every_field_is_a_typed_keyword_only_parameter_with_its_default(name):
    parameters = inspect.signature(getattr(rx, name)).parameters
    for field, info in TraceConfig.model_fields.items():
        if name == "sweep" and field == "depth":  # the sweep sets the depth itself
            assert field not in parameters
            continue
        parameter = parameters[field]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default == info.default
        # its type (rx.compare: or a list of values of it)
        annotation = parameter.annotation
        assert annotation == info.annotation or typing.get_args(annotation)[:1] == (info.annotation,), field
    assert "depth: int = 12" in str(inspect.signature(rx.trace))


def alternatives(annotation: Any) -> set[Any]:
    """The types a union allows (a Literal's values, a single type itself)."""
    return (
        set(typing.get_args(annotation))
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else {annotation}
    )


@pytest.mark.parametrize(
    "typed, model, absent, lists",
    [
        (TraceFields, TraceConfig, (), False),  # rx.trace, rx.build, rx.batch
        (ModelFields, TraceConfig, ("depth",), False),  # rx.sweep: the sweep sets the depth
        (CompareFields, TraceConfig, (), True),  # rx.compare: each field, or a list of values to vary
        (TrainFields, TrainRequest, (), False),  # rx.train (its runs: the next test)
    ],
)
def test_the_typed_dicts_type_checkers_read_are_the_request_models(typed, model, absent, lists):
    hints = typing.get_type_hints(typed)
    assert set(hints) == set(model.model_fields) - set(absent)
    for field, info in model.model_fields.items():
        if field in absent or field == "runs":
            continue
        expected = {info.annotation, list[info.annotation]} if lists else alternatives(info.annotation)  # type: ignore[name-defined]
        assert alternatives(hints[field]) == expected, field


def test_a_training_run_is_typed_as_a_trace():
    runs = typing.get_type_hints(TrainFields)["runs"]
    assert typing.get_args(runs) == (TraceFields | TraceConfig,)


def test_train_lists_the_training_fields_with_the_preset_as_their_default():
    parameters = inspect.signature(rx.train).parameters
    hints = typing.get_type_hints(TrainFields)
    for field in TrainRequest.model_fields:
        parameter = parameters[field]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.annotation == hints[field], field
        assert repr(parameter.default) == "<the preset's>"
    assert "steps: int = <the preset's>" in str(inspect.signature(rx.train))


def test_help_lists_the_fields():
    import pydoc

    text = pydoc.plain(pydoc.render_doc(rx.trace))
    assert "norm_position: Literal['pre', 'post', 'sandwich', 'mix'] = 'pre'" in text
    assert "lang: Literal['en', 'zh'] = 'en'" in text and "Trace one forward and backward pass" in text


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: loose.trace(48), TypeError, "positional argument"),
        (lambda: loose.trace(lang="fr"), ValueError, "lang: one of en, zh; got 'fr'"),
        (lambda: loose.trace(depht=4), TypeError, "unexpected keyword argument 'depht'; did you mean 'depth'?"),
        (lambda: loose.trace(depth=True), ValidationError, "Input should be a valid integer"),
        (lambda: loose.trace(depth="48"), ValidationError, "Input should be a valid integer"),
        (lambda: loose.compare(depth=[2, "3"]), ValidationError, "Input should be a valid integer"),
        (lambda: loose.sweep(depths=[]), ValidationError, "at least 1 item"),
        (lambda: loose.sweep(depth=12), TypeError, "unexpected keyword argument 'depth'"),
        (lambda: loose.sweep(depths=[True]), ValidationError, "valid integer"),
        (lambda: loose.train(stpes=3), TypeError, "did you mean 'steps'?"),
        (lambda: loose.train(steps="3"), ValidationError, "valid integer"),
        (lambda: loose.lecture.slide("snowball", lang="fr"), ValueError, "lang: one of en, zh"),
    ],
)
def test_every_mistake_is_an_error_not_another_model(call, error, words, monkeypatch):
    from app.notebook import sweeps, traces

    monkeypatch.setattr(traces, "run_trace", lambda cfg: pytest.fail("computed despite a mistake"))
    monkeypatch.setattr(sweeps, "run_trace", lambda cfg: pytest.fail("computed despite a mistake"))
    with pytest.raises(error) as caught:
        call()
    assert words in str(caught.value)


def test_the_http_api_refuses_the_same_values(client):
    for body in ({"depth": True}, {"depth": "48"}):
        assert client.post("/api/trace", json=body).status_code == 422


def test_a_model_over_the_servers_budget_runs_here(monkeypatch):
    from app.notebook import traces

    monkeypatch.setattr(traces, "run_trace", lambda cfg: {"config": cfg.model_dump()})
    deep_and_wide = rx.trace(depth=96, d_model=256, n_heads=8)
    assert deep_and_wide.config.depth == 96 and deep_and_wide.config.d_model == 256
    with pytest.raises(ValidationError, match="too large for this server"):
        rx.trace(depth=96, d_model=256, n_heads=8, budget="server")


def test_dir_and_all_list_the_api_only():
    assert set(dir(rx)) - {"__version__"} == set(rx.__all__)
    assert not {"Any", "annotations", "API", "typing"} & set(dir(rx))
    assert all(getattr(notebook, name) is getattr(rx, name) for name in rx.__all__)
    assert rx.TraceConfig is TraceConfig


def test_reprs_are_short_and_say_what_was_traced():
    trace = rx.trace(depth=4, norm_position="post")
    text = repr(trace)
    assert len(text) < 300 and "L=4" in text and "post-layernorm" in text
    assert f"grad_survival={fmt(trace.summary['grad_survival'])}" in text
    assert len(repr(rx.compare(depth=2, norm_position=["post", "pre"]))) < 300
    sweep = rx.sweep(1, 2, progress=False)
    assert repr(sweep) == "Sweep(depths 1..2: 2 of 2 traced)"
    title = rx.lecture.slide("title")  # a text slide: its words in both languages stay in .data
    assert repr(title) == f"Slide(title: {title.title!r}; claim holds)"


def test_build_is_the_module_the_trace_traces():
    """The module run by hand (its loss, the stream after the last block) gives the trace's numbers."""
    fields: dict[str, Any] = {"depth": 5, "norm_position": "post", "seed": 3}
    trace, model = rx.trace(**fields), rx.build(**fields)
    assert isinstance(model, torch.nn.Module)
    assert sum(p.numel() for p in model.parameters()) == trace.summary["parameters"]
    inputs, targets = rx.batch(**fields)
    outputs: list[torch.Tensor] = []
    handle = model.blocks[-1].register_forward_hook(lambda module, args, out: outputs.append(out.detach()))
    try:
        loss = model.loss(inputs, targets)
    finally:
        handle.remove()
    assert loss.item() == pytest.approx(trace.loss, rel=1e-6)
    act_norm = outputs[0].norm(dim=-1).mean().item()  # mean over tokens of the stream's size
    assert act_norm == pytest.approx(trace.layers[-1]["act_norm"], rel=1e-5)
    again = rx.build(**fields)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True))


def test_train_without_live_shows_no_progress_bar_and_has_a_table(capsys):
    training = rx.train(None, runs=[{"depth": 2, "seq_len": 16, "vocab_size": 16}], steps=3, live=False)
    assert capsys.readouterr().err == ""
    frame = training.to_pandas()
    assert list(frame["step"]) == [1, 2, 3] and list(frame["loss"]) == training.runs[0]["loss"]
    assert {"act_norm_1", "act_norm_2", "grad_norm_2", "param_grad_norm_1"} <= set(frame.columns)
    probed = [e for e in training.events if e.get("type") == "step" and "layers" in e]
    assert frame.loc[frame["step"] == probed[0]["step"], "act_norm_2"].item() == probed[0]["layers"]["act_norm"][1]
    assert "1 runs, 3 of 3 steps" in repr(training)


def test_the_wheel_says_it_is_typed():
    assert (ROOT / "app" / "py.typed").is_file()


def test_save_writes_an_offline_html_and_says_what_images_need(tmp_path, monkeypatch):
    import builtins

    trace = rx.trace(depth=2)
    page = trace.save(tmp_path / "norms.html").read_text(encoding="utf-8")
    assert "plotly.js v" in page and '<script src="http' not in page  # plotly.js inside: opens offline
    real_import = builtins.__import__

    def no_kaleido(name, *args, **kwargs):
        if name == "kaleido":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_kaleido)
    with pytest.raises(ImportError, match=r"saving \.png needs kaleido and a Chromium browser: pip install kaleido"):
        trace.save(tmp_path / "norms.png")
    with pytest.raises(ValueError, match=r"path: ends in \.html"):
        trace.save(tmp_path / "norms.jpeg")


def test_a_training_and_a_sweep_take_the_slide_theme_from_their_builders():
    """figure(theme="slide") is the builder's figure with its own slide patch: for rx.train the /train loss chart's,
    for rx.sweep the /gradients heatmap's."""
    from app.experiments.sweep import heatmap_of
    from app.figures import build
    from app.notebook.charts import plotly_figure
    from tests.test_figures_norms import plain
    from tests.test_notebook import SMALL

    training = rx.train(None, runs=[SMALL], steps=3, live=False)
    normal, projected = plain(training.figure()), plain(training.figure(theme="slide"))
    assert normal["layout"]["font"]["size"] < projected["layout"]["font"]["size"]
    [curve] = [series for series in projected["data"] if series["y"] == training.runs[0]["loss"]]
    assert curve["name"] == training.labels[0]
    assert projected == plain(plotly_figure(build("train-loss", training.answer(), "en").view("slide")))
    sweep = rx.sweep(1, 2, progress=False)
    answer = heatmap_of({**sweep.config.model_dump(), "depth": 0}, sweep.rows, 2, True)
    assert plain(sweep.figure(theme="slide")) == build("grad-heatmap", answer, "en").view("slide")
    with pytest.raises(ValueError, match="theme: normal or slide"):
        training.figure(theme="projector")
