"""`rx.trace(...)` and `rx.compare(...)`: the HTTP API's traces, computed in this process, as objects a notebook shows.

The fields are TraceConfig's, keyword-only, validated as POST /api/trace validates its body (app/notebook/fields.py):
a bad value raises the pydantic ValidationError the HTTP API answers as a 422 (naming the field and what it allows),
and a model too large for this machine says why before anything is built. The numbers are run_trace's, the very
function the server runs, under the server's torch settings (app/experiments/isolation.py): bit for bit the
server's answer, whatever the notebook set.
"""

from __future__ import annotations

import html
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import plotly.graph_objects as go
from typing_extensions import Unpack

from ..config import TraceConfig
from ..config.machine import Budget
from ..experiments.compare import CompareRequest, CompareVariant
from ..experiments.compare import combine as compared
from ..experiments.grad_profile import BAND, GradProfile
from ..experiments.grad_profile import combine as grad_profile
from ..experiments.grad_profile import parts as profile_parts
from ..experiments.isolation import SERVER_THREADS, as_server
from ..experiments.trace import run_trace
from ..figures import build as build_chart
from ..figures.compare import name_of
from ..jsonsafe import strict_dumps
from ..numbers import fmt
from .charts import chart_figure
from .export import Saves
from .fields import CompareFields, Language, TraceFields, check_lang, keyword_signature, trace_config
from .strings import t

if TYPE_CHECKING:
    from torch import Tensor

    from ..models.stack import Stack

SUMMARY_ROWS = ("grad_survival", "norm_growth", "loss", "first_nonfinite_layer", "parameters")


@dataclass(repr=False)
class Trace(Saves):
    """One traced forward+backward pass: `result` is exactly what POST /api/trace answers (less its timing)."""

    result: dict[str, Any]
    lang: str = "en"

    @property
    def config(self) -> TraceConfig:
        return TraceConfig.model_validate(self.result["config"], context={"budget": False})  # validated when traced

    @property
    def summary(self) -> dict[str, Any]:
        return self.result["summary"]

    @property
    def layers(self) -> list[dict[str, Any]]:
        return self.result["layers"]

    @property
    def loss(self) -> float:
        return self.result["loss"]

    def to_json(self) -> str:
        """Strict JSON (inf/NaN as null, listed in nonfinite_fields), as the HTTP API writes it."""
        return strict_dumps(self.result)

    def to_pandas(self) -> Any:
        """One row per block (layer 0, the embedding, first)."""
        return _frame([{"layer": 0, **self.result["embedding"]}, *self.layers], self.lang)

    def figure(
        self,
        kind: str = "norms",
        lang: str | None = None,
        log: bool | None = None,
        theme: str = "normal",
        seeds: int = BAND,
    ) -> go.Figure:
        """The page's chart of this trace, its figure to the key: kind "norms" is /norms' (the stream's size per layer),
        "gradients" /gradients' profile (this model and its counterpart with the other residual choice, on `seeds`
        seeds from this one: 4, the band a verdict must hold on, or 1). log: the y scale (None: the chart's own);
        theme="slide": the projector's sizes."""
        lang = lang or self.lang
        views = [] if log is None else ["log" if log else "linear"]
        if kind == "gradients":
            return chart_figure(build_chart("gradients", self.gradient_profile(seeds), lang), theme, *views)
        if kind != "norms":
            raise ValueError(f"kind: one of norms, gradients; got {kind!r}")
        return chart_figure(build_chart("norms", self.result, lang), theme, *views)

    def gradient_profile(self, seeds: int = BAND) -> dict[str, Any]:
        """/gradients' answer for this model (app/experiments/grad_profile.py): this trace and the others it needs,
        computed here as the server computes them."""
        request = GradProfile(config=self.config, seeds=seeds)
        mine = self.config.cache_key()
        with as_server():
            configs = [cast(TraceConfig, cfg) for _, cfg in profile_parts(request)]
            traces = [self.result if cfg.cache_key() == mine else run_trace(cfg) for cfg in configs]
        return grad_profile(request, *traces)

    def _repr_html_(self) -> str:
        return summary_table(label(self.config), self.result, self.lang)

    def __repr__(self) -> str:
        return f"Trace({label(self.config)}: {short_summary(self.result)})"


@dataclass(repr=False)
class Comparison(Saves):
    """Several traces that differ in the fields given as lists."""

    traces: list[Trace]
    changes: list[str]  # each trace's varied fields, as /compare writes a variant's changes ("norm_position:post")
    lang: str = "en"

    @property
    def names(self) -> list[str]:
        """Each trace's column title on the chart ("Custom + norm_position:post")."""
        return [name_of(variant, self.lang) for variant in self.answer()["variants"]]

    def figure(self, lang: str | None = None, log: bool | None = None, theme: str = "normal") -> go.Figure:
        """/compare's chart of these traces, its figure to the key: one column per trace, the stream's norm above and
        the gradient below on shared axes. log: the norms row's scale (None: the chart's own choice, logarithmic
        where the values span more than three decades); theme="slide": the projector's sizes."""
        views = [] if log is None else ["norm_log" if log else "norm_linear"]
        return chart_figure(build_chart("compare", self.answer(), lang or self.lang), theme, *views)

    def answer(self) -> dict[str, Any]:
        """/compare's answer: each trace as a variant of the page's custom settings, its varied fields as the page's
        changes ("norm_position:post")."""
        variants = [CompareVariant.model_construct(key="custom", changes=c, config=t.config)
                    for c, t in zip(self.changes, self.traces, strict=True)]  # fmt: skip
        return compared(CompareRequest.model_construct(variants=variants), *(t.result for t in self.traces))

    def to_pandas(self) -> Any:
        rows = [{"variant": n, "layer": row.pop("layer"), **row} for n, tr in zip(self.names, self.traces, strict=True)
                for row in [{"layer": 0, **tr.result["embedding"]}, *(dict(l) for l in tr.layers)]]  # fmt: skip
        return _frame(rows, self.lang)

    def _repr_html_(self) -> str:
        return "".join(summary_table(n, tr.result, self.lang) for n, tr in zip(self.names, self.traces, strict=True))

    def __repr__(self) -> str:
        return f"Comparison({len(self.traces)} traces: {'; '.join(self.names)})"[:MAX_REPR]


MAX_REPR = 300


@keyword_signature()
def trace(
    *, lang: Language = "en", threads: int = SERVER_THREADS, budget: Budget = "machine", **fields: Unpack[TraceFields]
) -> Trace:
    """Trace one forward and backward pass of the model TraceConfig's fields describe (each optional), e.g.
    rx.trace(depth=48, norm_position="post"). `threads`: torch threads (1, the server's, gives its answer bit for
    bit; more agree within 1e-6 relative in float32); `budget`: "machine" refuses a model needing over half of
    this machine's memory, "server" applies the server's budget, None neither."""
    check_lang(lang)
    cfg = trace_config(fields, budget)
    with as_server(threads):
        return Trace(run_trace(cfg), lang)


@keyword_signature(lists=True)
def compare(
    *,
    lang: Language = "en",
    threads: int = SERVER_THREADS,
    budget: Budget = "machine",
    **fields: Unpack[CompareFields],
) -> Comparison:
    """Trace every combination of the fields given as lists, e.g. compare(depth=24, norm_position=["post", "pre"])."""
    check_lang(lang)
    varied = {name: value for name, value in fields.items() if isinstance(value, (list, tuple))}
    fixed = {name: value for name, value in fields.items() if name not in varied}
    configs = [
        trace_config({**fixed, **dict(zip(varied, combo, strict=True))}, budget, "compare")
        for combo in itertools.product(*varied.values())
    ]
    changes = [", ".join(f"{name}:{getattr(cfg, name)}" for name in varied) for cfg in configs]
    with as_server(threads):
        return Comparison([Trace(run_trace(cfg), lang) for cfg in configs], changes, lang)


@keyword_signature()
def build(*, budget: Budget = "machine", **fields: Unpack[TraceFields]) -> Stack:
    """The torch module rx.trace traces for these fields (the same weights for the same seed), built under the
    server's settings: model.loss(*rx.batch(...)) is the trace's loss. Usable with torchinfo, nnsight, hooks."""
    from ..models.init import build_model

    cfg = trace_config(fields, budget, "build")
    with as_server():
        return build_model(cfg)


@keyword_signature()
def batch(**fields: Unpack[TraceFields]) -> tuple[Tensor, Tensor]:
    """The synthetic batch rx.trace feeds the model (inputs, targets), seeded by the fields' seed."""
    from ..models.stack import make_batch

    cfg = trace_config(fields, None, "batch")
    with as_server():
        return make_batch(cfg)


def label(cfg: TraceConfig) -> str:
    return f"{cfg.arch} L={cfg.depth} {cfg.norm_position}-{cfg.norm} residual={cfg.residual} {cfg.dtype}"


def short_summary(result: dict[str, Any]) -> str:
    summary = result["summary"]
    return ", ".join(
        f"{key}={_cell(value, 'en')}"
        for key, value in (
            ("grad_survival", summary["grad_survival"]),
            ("norm_growth", summary["norm_growth"]),
            ("loss", result["loss"]),
            ("nonfinite", summary["nonfinite"]),
        )
    )


def summary_table(title: str, result: dict[str, Any], lang: str) -> str:
    summary = {**result["summary"], "loss": result["loss"]}
    rows = "".join(
        f"<tr><th style='text-align:left'>{html.escape(t('nb.' + _key(key), lang))}</th>"
        f"<td>{html.escape(_cell(summary.get(key), lang))}</td></tr>"
        for key in SUMMARY_ROWS
    )
    caption = html.escape(t("nb.summary", lang, model=title))
    return f"<table><caption style='text-align:left'><b>{caption}</b></caption>{rows}</table>"


def _key(name: str) -> str:
    return "nonfinite" if name == "first_nonfinite_layer" else name


def _cell(value: Any, lang: str) -> str:
    if value is None:
        return t("nb.none", lang)
    return fmt(value) if isinstance(value, float) else str(value)


def _frame(rows: list[dict[str, Any]], lang: str) -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(t("nb.no_pandas", lang)) from None
    return pandas.DataFrame(rows)
