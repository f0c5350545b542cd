"""The lecture deck's JSON and its offline file: GET /api/lecture and GET /lecture.html. The page itself (/lecture and
/embed/lecture-<slide id>) is a page of app/pages/lecture.py; the slides live in app/experiments/lecture."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from ..errors import FieldError
from ..experiments.lecture import DECK, deck_payload, shown
from ..jsonsafe import NDJSONResponse, StrictJSONResponse
from ..pages.lecture_offline import offline_html
from ..pages.registry import request_lang
from ..services.deck import slide_training, slide_view, training_sources
from ..services.training import TooManyRuns, ndjson
from .deps import PoolDep
from .responses import (
    BUSY,
    NOT_FOUND,
    QUERY_ERRORS,
    TOO_MANY,
    DeckAnswer,
    SlideTrainingMessage,
    SlideView,
    json_route,
    stream,
)
from .train import slots_taken

router = APIRouter(tags=["lecture"])


@router.get("/api/lecture", **json_route(DeckAnswer))
async def lecture_data() -> StrictJSONResponse:
    """Every slide in English and Chinese: title, text, notes, chart request (API sources + how to draw) and claim."""
    return StrictJSONResponse(deck_payload())


@router.get("/lecture.html", response_class=HTMLResponse)
async def lecture_file(request: Request, pool: PoolDep) -> HTMLResponse:
    """The deck as one self-contained HTML file (?lang=en|zh): Plotly.js, every chart's data and the recorded training
    runs inlined. The first export of a server process records the training runs (about 40 s on two idle cores)."""
    lang = request_lang(request)
    html = await offline_html(pool, lang, origin=str(request.base_url).rstrip("/"))
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="resnorm-lecture-{lang}.html"'})


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
    "/api/lecture/slide/{slide_id}/train",
    response_class=NDJSONResponse,
    responses={
        **QUERY_ERRORS,
        **NOT_FOUND,
        **TOO_MANY,
        **stream(SlideTrainingMessage, "NDJSON lines: progress and views while the runs train, a final view"),
    },
)
async def lecture_slide_train(slide_id: str, request: Request, pool: PoolDep, option: str | None = None) -> Response:
    """Train a training slide's runs (T in the deck; a finished run is replayed at once) and stream what the deck
    shows while they train, built on the server from the runs so far: `progress` lines, a `view` at most every
    0.3 s and a last `view` with `"final": true`. A slide that trains nothing is a 404 naming the ones that do."""
    _slide(slide_id, option)
    if not training_sources(shown(slide_id, option)):
        allowed = ", ".join(s["id"] for s in DECK if training_sources(s))
        raise FieldError("slide_id", f"slide {slide_id!r} trains nothing", allowed, 404)
    try:
        lines = await slide_training(pool, slide_id, option, request_lang(request))
    except TooManyRuns as exc:
        return slots_taken(exc)
    return NDJSONResponse(ndjson(lines))
