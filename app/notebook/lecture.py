"""`rx.lecture.slide("snowball")`: a slide of the lecture deck (app/experiments/lecture) computed in this process,
its claim checked on the numbers, and its chart as a plotly figure: the figure app/figures/slides.py builds for the
deck, the one the page draws.

The slide's sources are answered as app/experiments/lecture/demos.py answers them on the server (the same functions,
without the compute pool), made strict as the browser receives them (inf/NaN as None); the claim is evaluated with
the deck's own claims.evaluate and claims.failures, so a slide that stopped being true says so.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from ..config.real import RealTraceRequest
from ..experiments.isolation import as_server
from ..experiments.lecture import DECK
from ..experiments.lecture.agenda import STRINGS as AGENDA
from ..experiments.lecture.claims import evaluate, failures, statement
from ..experiments.lecture.demos import recording_from_events
from ..experiments.requests import answer_in_process
from ..experiments.train import TrainRequest, train_events
from ..figures import slides
from ..i18n import lookup
from ..jsonsafe import to_strict
from ..services.deck import source_request
from ..services.real_models import compute_real_trace, resolve
from .charts import chart_figure
from .export import Saves
from .fields import Language, check_lang
from .strings import t

SLIDES = {slide["id"]: slide for slide in DECK}


@dataclass(repr=False)
class Slide(Saves):
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
        return statement(self.data["claim"], self.measured, lang or self.lang)

    def figure(self, lang: str | None = None, theme: str = "normal") -> go.Figure:
        """The slide's chart as the deck draws it: the figure app/figures/slides.py builds for the page, in the normal
        theme or (theme="slide") with the projector's sizes."""
        if not self.data["chart"]:
            raise ValueError(f"slide {self.data['id']!r} has no chart (a title or text slide)")
        return chart_figure(slides.build(self.data, self.answers, lang or self.lang), theme)

    def __repr__(self) -> str:
        """One line (the slide's text, sources and answers stay in .data and .answers)."""
        verdict = "claim holds" if self.holds else f"claim fails: {'; '.join(self.failed)}"
        return f"Slide({self.data['id']}: {self.title!r}; {verdict})"

    def _repr_html_(self) -> str:
        verdict = t("nb.claim_holds" if self.holds else "nb.claim_fails", self.lang, why="; ".join(self.failed))
        return (
            f"<h3>{html.escape(self.title)}</h3>{self._picture()}{self._agenda()}<p>{html.escape(self.statement())}</p>"
            f"<p><i>{html.escape(verdict)}</i></p>"
        )

    def _picture(self) -> str:
        """A drawn slide (the block diagram): its side-by-side SVG only (the stacked one is a phone's), so no style
        of this cell's reaches the rest of the notebook."""
        picture = self.data.get("picture", {}).get(self.lang, "")
        wide = re.search(r'<svg [^>]*class="slide-picture wide".*?</svg>', picture, re.S)
        return wide[0] if wide else ""

    def _agenda(self) -> str:
        """The agenda slide: its sections (slides, minutes) and the map of models, as two plain tables."""
        agenda = self.data.get("agenda")
        if not agenda:
            return ""
        lang = self.lang

        def table(head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
            cells = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
            return "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + f"</tr>{cells}</table>"

        sections = [(s["title"][lang], s["slides"], s["minutes"]) for s in agenda["sections"]]
        models = [(m["name"][lang], m["slides"]) for m in agenda["models"]]
        heads = [
            lookup(AGENDA, key, lang)
            for key in ("lecture.agenda.section", "lecture.agenda.slides", "lecture.agenda.min")
        ]
        return table(tuple(heads), sections) + table((lookup(AGENDA, "lecture.agenda.model", lang), heads[1]), models)


def ids() -> list[str]:
    """Every slide's id, in the deck's order."""
    return list(SLIDES)


def slide(slide_id: str, *, lang: Language = "en") -> Slide:
    """Compute slide `slide_id`'s sources and check its claim (training slides train for a minute or so), under
    the server's torch settings."""
    check_lang(lang)
    if slide_id not in SLIDES:
        raise ValueError(f"slide: one of {', '.join(SLIDES)}; got {slide_id!r}")
    data = SLIDES[slide_id]
    with as_server():
        answers = [answer(source) for source in data["chart"]["sources"]] if data["chart"] else []
    measured = evaluate(data["claim"], answers)
    return Slide(data, answers, measured, failures(data["claim"], measured), lang)


def answer(source: dict[str, Any]) -> Any:
    """What the API answers for one source, strict as the browser gets it (a training run: its recording)."""
    if source["api"] == "train":
        result: Any = recording_from_events(to_strict(list(train_events(TrainRequest(**source["body"]))))[0])
    elif source["api"] == "real_trace":  # a pretrained model (the [models] extra), loaded once per process
        request = RealTraceRequest(**source["body"])
        result = compute_real_trace(*resolve(request.model), request)
    else:
        result = answer_in_process(*source_request(source))
    return to_strict(result)[0]
