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
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go
from typing_extensions import Unpack

from ..config import TraceConfig
from ..config.machine import Budget
from ..experiments.isolation import SERVER_THREADS, as_server
from ..experiments.lecture.slides_norm import POST_SERIES, PRE_SERIES
from ..experiments.trace import run_trace
from ..i18n import t
from ..jsonsafe import strict_dumps
from . import figures
from . import strings as _strings  # noqa: F401  (registers the API's words)
from .export import Saves
from .fields import CompareFields, Language, TraceFields, check_lang, keyword_signature, trace_config

if TYPE_CHECKING:
    from torch import Tensor

    from ..models.stack import Stack

# Post-LN and Pre-LN as the deck draws them (label, palette colour), so rx.compare's chart looks like the slide's
POSITION_SERIES = {"post": (POST_SERIES, "vermillion"), "pre": (PRE_SERIES, "blue")}
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

    def figure(self, kind: str = "norms", lang: str | None = None, log: bool | None = None) -> go.Figure:
        """kind "norms": the /norms chart (the stream's size per layer); "gradients": the gradient per layer."""
        lang = lang or self.lang
        if kind == "gradients":
            return figures.gradients_figure([(label(self.config), self.result)], lang, log=True if log is None else log)
        if kind != "norms":
            raise ValueError(f"kind: one of norms, gradients; got {kind!r}")
        return figures.norms_figure(self.result, lang, log=log)

    def _repr_html_(self) -> str:
        return summary_table(label(self.config), self.result, self.lang)

    def __repr__(self) -> str:
        return f"Trace({label(self.config)}: {short_summary(self.result)})"


@dataclass(repr=False)
class Comparison(Saves):
    """Several traces that differ in the fields given as lists."""

    traces: list[Trace]
    names: list[str]
    lang: str = "en"
    colors: list[str | None] | None = None  # a palette colour per trace where the deck has one (Post-LN, Pre-LN)

    def figure(self, kind: str = "norms", lang: str | None = None, log: bool | None = None) -> go.Figure:
        lang = lang or self.lang
        named = [(name, tr.result) for name, tr in zip(self.names, self.traces, strict=True)]
        if kind == "gradients":
            fig = figures.gradients_figure(named, lang, log=True if log is None else log)
        elif kind == "norms":
            fig = figures.compare_figure(named, lang, log=bool(log))
        else:
            raise ValueError(f"kind: one of norms, gradients; got {kind!r}")
        for series, color in zip(fig.data, self.colors or [], strict=False):  # one line per trace, in order
            if color:
                series.line.color = series.marker.color = figures.PALETTE[color]
        return fig

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
    names = [variant_name(cfg, list(varied), lang) for cfg in configs]
    by_position = list(varied) == ["norm_position"]
    colors = [
        POSITION_SERIES[c.norm_position][1] if by_position and c.norm_position in POSITION_SERIES else None
        for c in configs
    ]
    with as_server(threads):
        return Comparison([Trace(run_trace(cfg), lang) for cfg in configs], names, lang, colors)


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


def variant_name(cfg: TraceConfig, varied: list[str], lang: str) -> str:
    """The deck's series name where there is one (Post-LN: LN(x + f(x))), else the varied fields' values."""
    if varied == ["norm_position"] and cfg.norm_position in POSITION_SERIES:
        return POSITION_SERIES[cfg.norm_position][0][lang == "zh"]
    return ", ".join(f"{name}={getattr(cfg, name)}" for name in varied) or label(cfg)


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
    return figures.fmt(value) if isinstance(value, float) else str(value)


def _frame(rows: list[dict[str, Any]], lang: str) -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(t("nb.no_pandas", lang)) from None
    return pandas.DataFrame(rows)
