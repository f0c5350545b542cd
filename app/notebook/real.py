"""rx.real_trace: the residual stream of a real pretrained Transformer, in this process.

    rx.real_trace("smollm2", "The quick brown fox jumps over the lazy dog.")   # packaged: as POST /api/real_trace
    rx.real_trace("/path/to/a/hf/folder", "…")                                # a local safetensors or GGUF folder
    rx.real_trace(model, "…", tokenizer)        # a transformers model already in memory, given back as it was
    rx.real_trace(model, [1, 2, 3])             # token ids, without a tokenizer

A packaged or local model goes through the server's own shelf and function, so the answer has the same schema
and numbers as POST /api/real_trace. A model object is traced in evaluation mode and given back unchanged: each
module's train/eval mode is put back, no parameter's requires_grad is touched, and every hook is removed. Either
way the call computes under the server's torch settings and gives the caller's back (app/experiments/isolation.py):
it runs under `torch.no_grad()` or `torch.inference_mode()`, on one thread unless `threads=` says otherwise.

The answer is a dict (the API's answer) that also draws /models' charts, built by the page's own builders:

    t = rx.real_trace("smollm2", "…")
    t.figure("models-sink")                 # equal to what POST /api/figure/models-sink sends the page
    t.caption("models-dims", lang="zh")
    t.figure("models-set", theme="slide")   # the built-in sentence set beside this sentence (computed once)
    t.save("stream.html")                   # as the page's download buttons write it
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import plotly.graph_objects as go

from .. import figures
from ..config.real import RealTraceRequest
from ..experiments.isolation import SERVER_THREADS, as_server
from ..experiments.real_sentences import summarise
from ..experiments.real_set import own_intervention, set_answer
from ..experiments.real_trace import TraceOptions, encode, trace_encoded
from ..models.real.loading import LoadedModel, _is_causal, describe_model
from ..models.real.sources import ModelSource, local_source
from ..numbers import fmt
from .charts import chart_figure
from .export import Saves, save_figure

__all__ = ["RealTrace", "real_trace"]


class RealTrace(dict[str, Any], Saves):
    """The answer of POST /api/real_trace, which also draws /models' charts with the page's builders."""

    lang = "en"  # the language save() writes a chart in when not told (figure(lang=...) passes through)

    def __init__(self, answer: dict[str, Any], model_set: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__(answer)
        self._model_set = model_set  # the model's sentence set, computed on first use
        self._set: dict[str, Any] | None = None

    def answer_of(self, request: str) -> Any:
        """The answer a chart of this request kind draws: this trace, this trace alone as the stream chart's pair,
        or the model's sentence set beside this sentence."""
        if request == "real_trace":
            return dict(self)
        if request == "real_pair":
            return {"traces": [dict(self)]}
        if self._model_set is None:
            raise ValueError("the sentence set needs the model: trace a model's name or a model object with a text")
        if self._set is None:
            self._set = self._model_set()
        return self._set

    def chart(self, key: str = "models-stream", lang: str = "en") -> figures.Chart:
        kinds = {kind.key: kind for kind in figures.real_charts()}
        if key not in kinds:
            raise ValueError(f"chart: one of {', '.join(kinds)}; got {key!r}")
        return kinds[key].build(self.answer_of(kinds[key].request), lang)

    def figure(self, key: str = "models-stream", lang: str = "en", theme: str = "normal") -> go.Figure:
        """The page's figure of chart `key`, in the normal theme or (theme="slide") with the projector's sizes."""
        return chart_figure(self.chart(key, lang), theme)

    def caption(self, key: str = "models-stream", lang: str = "en") -> str:
        return self.chart(key, lang).caption

    def __repr__(self) -> str:
        """One line (the dict itself is the whole answer, thousands of numbers: `dict(t)` shows it)."""
        model, stream = self["model"], self["stream"]["mean"]  # layer 0 (before block 1) .. layer L
        gradient = (self.get("gradient") or {}).get("per_block")
        grad = f", gradient {fmt(gradient[0])} -> {fmt(gradient[-1])}" if gradient else ""
        return (
            f"RealTrace({model['label']}: {model['family']}, {model['layers']} blocks, {len(self['tokens'])} tokens; "
            f"layer 0 -> {len(stream) - 1}: stream {fmt(stream[0])} -> {fmt(stream[-1])}{grad})"
        )

    def save(self, path: str | Path, **figure_options: Any) -> Path:
        """Chart `key` (figure()'s options, e.g. key="models-sink") as .html (offline, with its caption), .png
        (1920 x 1080), .svg or .pdf (1280 x 720); images need kaleido and a Chromium browser (pip install kaleido)."""
        lang = figure_options.get("lang") or self.lang
        caption = self.caption(figure_options.get("key", "models-stream"), lang)
        return save_figure(self.figure(**figure_options), path, lang, caption)

    def _repr_html_(self) -> str:
        chart = self.chart()
        title = html.escape(chart.figure["layout"]["title"]["text"])
        return f"<p><b>{title}</b> · {html.escape(self['model']['label'])}</p><p>{html.escape(chart.caption)}</p>"


def real_trace(
    model: Any,
    text_or_ids: str | list[int] | Any,
    tokenizer: Any = None,
    *,
    gradients: bool = True,
    attention: bool = True,
    special_tokens: bool = False,
    threads: int = SERVER_THREADS,
) -> RealTrace:
    """The trace of `text_or_ids` (a text, or token ids) through `model`: a packaged model's name ("minilm",
    "smollm2"), a local Hugging Face folder, or a transformers model in memory (with its `tokenizer` for a text).
    The answer is POST /api/real_trace's (a dict) and draws /models' charts: .figure(key), .caption(key), .save().
    Computed under the server's torch settings with `threads` torch threads; the caller's are given back."""
    options = TraceOptions(gradients=gradients, attention=attention, special_tokens=special_tokens)
    with as_server(threads):
        if isinstance(model, (str, Path)):
            if not isinstance(text_or_ids, str):
                raise TypeError("a model given by name traces a text (a str): pass a model object to trace token ids")
            return _by_name(str(model), text_or_ids, options)
        return _in_memory(model, text_or_ids, tokenizer, options)


def _by_name(name: str, text: str, options: TraceOptions) -> RealTrace:
    from ..services import real_models

    found = real_models.sources()
    if name in found:
        source, digest = real_models.resolve(name)
    else:
        folder = Path(name).expanduser()
        local = local_source(folder) if folder.is_dir() else None
        if local is None:
            raise ValueError(f"unknown model {name!r}: one of {', '.join(found) or 'none'}, or a Hugging Face folder")
        source, digest = local, real_models.DIGESTS.current(local)[1]
    request = RealTraceRequest(
        model=source.name,
        text=text,
        gradients=options.gradients,
        attention=options.attention,
        special_tokens=options.special_tokens,
    )
    answer = real_models.compute_real_trace(source, digest, request)

    def model_set() -> dict[str, Any]:
        from ..services.real_charts import compute_own

        with as_server():
            the_set = set_answer(real_models.get_shelf().get(source, digest))
            own = compute_own(source, digest, text, the_set["intervention"]) if the_set["intervention"] else None
        return {**the_set, "own": summarise(answer), "own_intervention": own}

    return RealTrace(answer, model_set)


class _IdsOnly:
    """A tokenizer stand-in for token ids given without one: each token is labelled by its id."""

    unk_token_id, unk_token = None, None
    all_special_ids: ClassVar[list[int]] = []

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [str(i) for i in ids]


def _checked(model: Any) -> None:
    """One clear line for a model this function cannot run as it is."""
    import torch

    if not hasattr(model, "config") or not callable(getattr(model, "get_input_embeddings", None)):
        raise TypeError(f"expected a transformers PreTrainedModel or a model's name, got {type(model).__name__}")
    tensors = [*model.parameters(), *model.buffers()]
    devices = {str(t.device) for t in tensors}
    dtypes = {t.dtype for t in tensors if t.is_floating_point()}
    if devices - {"cpu"} or dtypes - {torch.float32, torch.float64}:
        raise ValueError(
            f"the model is on {', '.join(sorted(devices))} in {', '.join(sorted(map(str, dtypes)))}: real_trace "
            "runs on the CPU in float32 or float64; pass a copy, e.g. copy.deepcopy(model).to('cpu', torch.float32)"
        )


def _in_memory(model: Any, text_or_ids: Any, tokenizer: Any, options: TraceOptions) -> RealTrace:
    import torch

    _checked(model)
    source = ModelSource(type(model).__name__, "local", "", "", f"{type(model).__name__} (in memory)")
    if isinstance(text_or_ids, str):
        if tokenizer is None:
            raise TypeError("a text needs its tokenizer: real_trace(model, text, tokenizer), or pass token ids")
        text, encoded = text_or_ids, encode(tokenizer, text_or_ids, options.special_tokens)
    else:
        ids = torch.as_tensor(text_or_ids, dtype=torch.long).reshape(1, -1)
        text = ""
        encoded = {"input_ids": ids, "offset_mapping": torch.zeros(1, ids.shape[1], 2, dtype=torch.long)}
    loaded = describe_model(model, tokenizer or _IdsOnly(), source, _is_causal(model.config))
    with _evaluated(model):
        answer = trace_encoded(loaded, text, encoded, options)
    if not isinstance(text_or_ids, str):
        return RealTrace(answer)

    def model_set() -> dict[str, Any]:
        with as_server(), _evaluated(model):
            return _with_own(set_answer(loaded), loaded, answer)

    return RealTrace(answer, model_set)


def _with_own(the_set: dict[str, Any], loaded: LoadedModel, answer: dict[str, Any]) -> dict[str, Any]:
    own = own_intervention(loaded, answer["text"], the_set["intervention"])
    return {**the_set, "own": summarise(answer), "own_intervention": own}


@contextmanager
def _evaluated(model: Any) -> Iterator[None]:
    """The model in evaluation mode (dropout off: the model as it is used), each module's mode put back after."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training
