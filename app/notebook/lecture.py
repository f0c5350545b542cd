"""`rx.lecture.slide("snowball")`: a slide of the lecture deck (app/experiments/lecture) computed in this process,
its claim checked on the numbers, and its chart as a plotly figure.

The slide's sources are answered as app/experiments/lecture/demos.py answers them on the server (the same functions,
without the compute pool), made strict as the browser receives them (inf/NaN as None); the claim is evaluated with
the deck's own claims.evaluate and claims.failures, so a slide that stopped being true says so.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any, cast

import plotly.graph_objects as go
from pydantic import BaseModel

from ..config import TraceConfig
from ..experiments.lecture import DECK
from ..experiments.lecture.claims import evaluate, failures
from ..experiments.lecture.demos import LESSONS, recording_from_events
from ..experiments.lessons.precision import PrecisionRequest, precision_lesson, snowball_config
from ..experiments.trace import run_trace
from ..experiments.train import TrainRequest, train_events
from ..i18n import t
from ..jsonsafe import to_strict
from ..pages import lecture as _lecture_strings  # noqa: F401  (registers the deck's strings)
from . import figures
from . import strings as _strings  # noqa: F401  (registers the API's words)

SLIDES = {slide["id"]: slide for slide in DECK}
PLACEHOLDER = re.compile(r"\{(\w+)(?:\|(\d+))?\}")
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
DRAWN = ("layers",)  # chart kinds drawn here; the others are drawn by the deck itself (/lecture)


@dataclass
class Slide:
    data: dict[str, Any]
    answers: list[Any]
    measured: dict[str, Any]
    failed: list[str]
    lang: str = "en"

    @property
    def holds(self) -> bool:
        """Every check of the slide's claim holds on these numbers."""
        return not self.failed

    @property
    def title(self) -> str:
        return self.data["title"][self.lang]

    def statement(self, lang: str | None = None) -> str:
        """The claim, its {name} placeholders filled with the measured values (as the deck's caption)."""
        lang = lang or self.lang
        return PLACEHOLDER.sub(
            lambda m: format_number(self.measured[m[1]], int(m[2] or 3), lang) if m[1] in self.measured else m[0],
            self.data["claim"]["statement"][lang],
        )

    def figure(self, lang: str | None = None) -> go.Figure:
        chart = self.data["chart"]
        if not chart or chart["kind"] not in DRAWN:
            kind = chart["kind"] if chart else "none"
            raise NotImplementedError(f"slide {self.data['id']!r} has a {kind!r} chart: open it in the deck (/lecture)")
        return layers_figure(chart, self.answers, lang or self.lang)

    def _repr_html_(self) -> str:
        verdict = t("nb.claim_holds" if self.holds else "nb.claim_fails", self.lang, why="; ".join(self.failed))
        return f"<h3>{html.escape(self.title)}</h3><p>{html.escape(self.statement())}</p><p><i>{html.escape(verdict)}</i></p>"


def ids() -> list[str]:
    """Every slide's id, in the deck's order."""
    return list(SLIDES)


def slide(slide_id: str, lang: str = "en") -> Slide:
    """Compute slide `slide_id`'s sources and check its claim (training slides train for a minute or so)."""
    if slide_id not in SLIDES:
        raise ValueError(f"slide: one of {', '.join(SLIDES)}; got {slide_id!r}")
    data = SLIDES[slide_id]
    answers = [answer(source) for source in data["chart"]["sources"]] if data["chart"] else []
    measured = evaluate(data["claim"], answers)
    return Slide(data, answers, measured, failures(data["claim"], measured), lang)


def answer(source: dict[str, Any]) -> Any:
    """What the API answers for one source, strict as the browser gets it (a training run: its recording)."""
    api = source["api"]
    if api == "trace":
        result: Any = run_trace(TraceConfig(**source["body"]))
    elif api in LESSONS:
        model, lesson = LESSONS[api]
        result = lesson(cast(type[BaseModel], model).model_validate(source.get("body", source.get("query"))))
    elif api == "precision":
        query = source["query"]
        numbers = {k: v for k, v in query.items() if k in PrecisionRequest.model_fields}
        cfg16 = snowball_config({k: str(v) for k, v in query.items() if k not in PrecisionRequest.model_fields})
        trace16, trace32 = run_trace(cfg16), run_trace(cfg16.model_copy(update={"dtype": "float32"}))
        result = precision_lesson(PrecisionRequest(**numbers), trace16, trace32)
    elif api == "train":
        result = recording_from_events(to_strict(list(train_events(TrainRequest(**source["body"]))))[0])
    else:
        raise ValueError(f"unknown source api {api!r}")
    return to_strict(result)[0]


def format_number(value: Any, digits: int, lang: str) -> str:
    """claims.js's formatNumber: `digits` significant digits, ×10ⁿ for the very small and large, overflow named."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return t("lecture.overflow", lang)
    if isinstance(value, bool):
        return str(value).lower()
    if digits == 0 or value == 0:
        return str(round(value))
    if abs(value) < 1e-3 or abs(value) >= 1e5:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa.replace('-', '−')}×10{str(int(exponent)).translate(SUPERSCRIPT)}"
    return f"{value:#.{digits}g}".rstrip(".").replace("-", "−")


def layers_figure(chart: dict[str, Any], answers: list[Any], lang: str) -> go.Figure:
    """static/js/lecture/figures.js's layersFigure: one line per series over the layers, overlays on top."""
    first = chart["panels"][0]
    fig = figures.base_figure(chart["title"][lang], t("axis.layer", lang), first["y"][lang], ylog=first["log"])
    if "range" in first:
        fig.update_yaxes(range=first["range"])
    if len(chart["panels"]) > 1:
        second = chart["panels"][1]
        fig.update_layout(
            xaxis={"domain": [0, 0.42]},
            xaxis2={"domain": [0.6, 1], "anchor": "y2", "title": {"text": t("axis.layer", lang)}},
            yaxis2={"anchor": "x2", "title": {"text": second["y"][lang]}, "type": "log" if second["log"] else "linear"},
        )
        if "range" in second:
            fig.update_layout(yaxis2={"range": second["range"]})
    for series in chart["series"]:
        x, y = per_layer(answers[series["source"]], series["field"])
        color = figures.PALETTE[series["color"]]
        name = series["label"][lang]
        figures.add_line(fig, name, x, y, color, dash=series["dash"], markers=len(x) <= 30)
        if series["panel"]:
            fig.data[-1].update(xaxis="x2", yaxis="y2")
        elif any(v is None for v in y):
            figures.mark_overflow(fig, x, y, lang)
    for overlay in chart.get("overlays", []):
        _overlay(fig, chart, answers, overlay, lang)
    return fig


def per_layer(answer: dict[str, Any], field: str) -> tuple[list[int], list[float | None]]:
    """A trace's values per layer (layer 0, the embedding, first), or a chain lesson's (layers 1..L)."""
    if answer["layers"] and isinstance(answer["layers"][0], dict):
        return figures.stream(answer, field)
    return list(answer["layers"]), list(answer[field])


def _overlay(fig: go.Figure, chart: dict[str, Any], answers: list[Any], overlay: dict[str, Any], lang: str) -> None:
    if overlay["type"] == "hline":
        spec = overlay["label"]
        text = t(spec["key"], lang, value=spec.get("value")) if "key" in spec else spec[lang]
        color = figures.PALETTE[overlay.get("color", "black")]
        figures.add_hline(fig, overlay["value"], text, color, below=overlay.get("below", False))
        return
    series = chart["series"][overlay["series"]]  # "sqrt_fit": √(‖x₀‖² + c·l), c by least squares, as on /norms
    x, y = per_layer(answers[series["source"]], series["field"])
    c, curve = figures.fit_sqrt_growth(figures.finite(y))
    name = t("series.theory_pre", lang, c=format_number(c, 3, lang))
    figures.add_line(fig, name, x, curve, figures.PALETTE["black"], dash="dash", markers=False, width=0.6)
