"""The lecture deck's JSON and its offline file: GET /api/lecture and GET /lecture.html. The page itself (/lecture and
/embed/lecture-<slide id>) is a page of app/pages/lecture.py; the slides live in app/experiments/lecture."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import FieldError
from ..experiments.lecture import deck_payload, shown
from ..jsonsafe import StrictJSONResponse
from ..pages.lecture_offline import offline_html
from ..pages.registry import request_lang
from ..services.deck import slide_view
from .body import json_body
from .deps import PoolDep
from .responses import BODY_ERRORS, BUSY, NOT_FOUND, QUERY_ERRORS, DeckAnswer, SlideView, json_route

router = APIRouter(tags=["lecture"])


@router.get("/api/lecture", **json_route(DeckAnswer))
async def lecture_data() -> StrictJSONResponse:
    """Every slide in English and Chinese: title, text, notes, chart request (API sources + how to draw) and claim."""
    return StrictJSONResponse(deck_payload())


@router.get("/lecture.html", response_class=HTMLResponse)
async def lecture_file(request: Request, pool: PoolDep) -> HTMLResponse:
    """The deck as one self-contained HTML file (?lang=en|zh): Plotly.js, every chart's data and the recorded training
    runs inlined. The first export of a server process records the training runs (about a minute)."""
    lang = request_lang(request)
    html = await offline_html(pool, lang, origin=str(request.base_url).rstrip("/"))
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="resnorm-lecture-{lang}.html"'})


class RunRecording(BaseModel):
    """One training run as the deck records it from /api/train's NDJSON lines (static/js/lecture/sources.js)."""

    model_config = ConfigDict(extra="forbid")
    run: int = Field(ge=0, le=7)
    steps: list[int] = Field(max_length=20_000)
    loss: list[float | None] = Field(max_length=20_000)
    done: dict[str, Any] | None = None


class Recording(BaseModel):
    """A training source's recording: the runs' loss curves so far (or finished, with their `done` events)."""

    model_config = ConfigDict(extra="forbid")
    steps: int = Field(ge=1, le=20_000)
    symbols: int = Field(ge=1, le=100_000)
    step: int = Field(default=0, ge=0, le=20_000)
    finished: bool = False
    runs: list[RunRecording] = Field(max_length=8)


class SlideViewRequest(BaseModel):
    """The client's recordings of the slide's training sources (one per source, null for the others): the chart
    while it trains, and after. Without them the server's own finished runs are used, or the slide is pending."""

    model_config = ConfigDict(extra="forbid")
    recordings: list[Recording | None] = Field(default_factory=list, max_length=8)


def _slide(slide_id: str, option: str | None) -> None:
    try:
        shown(slide_id, option)
    except KeyError as error:
        field, _, allowed = str(error.args[0]).partition(": one of ")
        raise FieldError(
            field, f"no such {field} {option if field == 'option' else slide_id!r}", allowed, 404
        ) from None


@router.get("/api/lecture/slide/{slide_id}", **json_route(SlideView, QUERY_ERRORS, NOT_FOUND, BUSY))
async def lecture_slide(
    slide_id: str, request: Request, pool: PoolDep, option: str | None = None
) -> StrictJSONResponse:
    """What the deck shows of slide `slide_id` (or its "try it" option ?option=) in ?lang=: the Plotly figure in the
    normal theme with the "slide" patch, the caption filled with the measured values, and the verdict of its checks.
    Built by app/figures/slides.py from the same cached answers the API gives."""
    _slide(slide_id, option)
    return StrictJSONResponse(await slide_view(pool, slide_id, option, request_lang(request)))


@router.post(
    "/api/lecture/slide/{slide_id}", **json_route(SlideView, BODY_ERRORS, NOT_FOUND, BUSY, body=SlideViewRequest)
)
async def lecture_slide_recorded(
    slide_id: str, request: Request, pool: PoolDep, option: str | None = None
) -> StrictJSONResponse:
    """The same, for a training slide drawn from the client's recordings of its runs (while they train)."""
    _slide(slide_id, option)
    body = await json_body(request, SlideViewRequest)
    recordings = [r.model_dump() if r else None for r in body.recordings]
    return StrictJSONResponse(await slide_view(pool, slide_id, option, request_lang(request), recordings))
