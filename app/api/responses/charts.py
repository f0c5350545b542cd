"""The charts built in Python (POST /api/figure/<chart>), a lecture slide as the deck shows it
(GET /api/lecture/slide/<id>) and the deck as data (GET /api/lecture).

A chart's `claim` and `rows` are the chart's own (app/figures/<chart>.py says which names it states): they are
typed here as objects by name, and the chart envelope around them is fixed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from .common import Answer, Bilingual, Figure, Flagged, Json
from .service import Provenance


class Cell(Answer):
    text: str
    header: bool | None = None
    lost: bool | None = Field(None, description="the value lost something (an overflow, a swallowed update)")


class Table(Answer):
    caption: str
    rows: list[list[Cell]]


class ChartWeights(Provenance):
    """A pretrained model a chart draws, and the weights and libraries that computed its numbers."""

    name: str
    weights_sha256: str = Field(description="sha256 of the weight, config and tokenizer files' content")


class ChartAnswer(Flagged):
    """One chart built from one answer: the figure, its caption, the values the caption states, its CSV rows."""

    chart: str = Field(description="the chart's key (/embed/<key>, POST /api/figure/<key>)")
    figure: Figure = Field(description="in the normal theme, on the y scale the chart chose")
    caption: str = Field(description="the sentence under the chart, in the language asked for")
    claim: Json = Field(description="the values the caption states, by name (docs/api.md lists them per chart)")
    rows: list[Json] = Field(description="the chart's data, one object a CSV row")
    patches: dict[str, Json] = Field(description="view name (slide, log, linear, ...) -> patch merged into figure")
    tables: dict[str, Table] | None = Field(None, description="a lesson's page elements built from the same answer")
    weights: list[ChartWeights] | None = Field(
        None, description="a pretrained model's chart (/models): each model drawn, with the weights that computed it"
    )


class SlideClaim(Answer):
    values: Json = Field(description="the measured values the caption states, by name")
    failed: list[str] = Field(description="the values whose checks do not hold")
    checked: bool = Field(description="whether the caption states numbers it checked")
    pending: bool = Field(description="a training slide not trained yet: no numbers yet")
    verdict: str = Field(description="✓ or ✗ with the names, in the language asked for; empty without checks")


class NoFigure(Answer):
    """A slide without a chart: `{}`."""


class SlideView(Flagged):
    """What the deck shows of a slide, or of one of its "try it" options."""

    id: str
    option: str | None
    chart: str = Field(description="lecture-<id>")
    figure: Figure | NoFigure
    caption: str
    claim: SlideClaim
    rows: list[Json]
    patches: dict[str, Json] = Field(description="`slide`: the projector's sizes")
    tables: dict[str, Table] | None = None


class SlideTrainingProgress(Flagged):
    type: Literal["progress"]
    fraction: float = Field(description="of all the slide's training steps (every run of every source)")
    step: int = Field(description="the current run's step")
    steps: int = Field(description="the current run's steps")


class SlideTrainingBusy(Flagged):
    type: Literal["busy"]
    retry_after: int = Field(description="seconds until the server asks for a training slot again")
    fraction: float


class SlideTrainingView(Flagged):
    type: Literal["view"]
    final: bool = Field(description="the last line: the view GET answers once the runs are recorded")
    view: SlideView


class SlideTrainingError(Flagged):
    type: Literal["error"]
    error: str


class SlideTrainingMessage(
    RootModel[
        Annotated[
            SlideTrainingProgress | SlideTrainingBusy | SlideTrainingView | SlideTrainingError,
            Field(discriminator="type"),
        ]
    ]
):
    """One line of POST /api/lecture/slide/{id}/train: `progress` and `view` while the slide's runs train, the last
    line a `final` view (or an `error`)."""


class SlideChart(Answer):
    """A slide's chart request: the API calls it makes and how app/figures/slides.py draws them. Each kind adds
    its own drawing keys (panels, series, overlays, bars, rows, columns, cells, ...)."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description="layers, chain, precision, softmax, layernorm, train, batch, bars, table, ...")
    title: Bilingual
    sources: list[Json] = Field(description="{api: request kind, body or query: its request} in order")
    explorer: str = Field(description="the page (with its query) that shows the same model live")
    settings: Bilingual = Field(description="the model's settings in words")


class SlideOption(Answer):
    key: str
    label: Bilingual
    chart: SlideChart
    claim: Json


class TypedVector(Answer):
    """Numbers the live deck lets the lecturer type; the server builds their option (lecture.TYPED_OPTIONS)."""

    length: int = Field(description="how many numbers")
    min: float
    max: float
    explorer: str = Field(description="the page link the numbers are appended to, comma-separated")


class TryIt(Answer):
    label: Bilingual
    options: list[SlideOption]
    default: str
    vector: TypedVector | None = Field(None, description="typed numbers make an option too (?option=a,b,c)")


class Slide(Answer):
    """One slide in English and Chinese. The optional keys are a slide's extras (app/experiments/lecture/build.py)."""

    model_config = ConfigDict(extra="allow")

    id: str
    title: Bilingual
    text: Bilingual
    notes: Bilingual = Field(description="the speaker's notes")
    chart: SlideChart | None
    claim: Json = Field(description="the caption (statement) with the named values it states and their checks")
    section: str
    optional: bool
    defines: list[str] = Field(description="glossary terms this slide teaches")
    uses: list[str] = Field(description="glossary terms it uses, taught earlier")
    cites: list[Any] | None = Field(None, description="the papers of its footer")
    try_it: TryIt | None = Field(None, description="a control inside the slide switching among computed options")
    equation: str | None = None
    code: str | None = None
    qa: Json | None = None
    aside: Bilingual | None = None
    departs: Bilingual | None = Field(None, description="how the slide's model departs from the reference model")
    offline_text: Bilingual | None = None
    predict: Bilingual | None = Field(None, description="a question shown before the chart")


class DeckAnswer(Flagged):
    """Every slide of the lecture deck in English and Chinese, in the teaching order."""

    slides: list[Slide]
