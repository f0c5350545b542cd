"""The lecture deck's JSON and its offline file: GET /api/lecture and GET /lecture.html. The page itself (/lecture and
/embed/lecture-<slide id>) is registered in app/pages/lecture.py; the slides live in app/experiments/lecture."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..experiments.lecture import deck_payload
from ..jsonsafe import StrictJSONResponse
from ..pages.lecture_offline import offline_html
from ..pages.registry import request_lang

router = APIRouter(tags=["lecture"])


@router.get("/api/lecture", response_class=StrictJSONResponse)
async def lecture_data() -> StrictJSONResponse:
    """Every slide in English and Chinese: title, text, notes, chart request (API sources + how to draw) and claim."""
    return StrictJSONResponse(deck_payload())


@router.get("/lecture.html", response_class=HTMLResponse)
async def lecture_file(request: Request) -> HTMLResponse:
    """The deck as one self-contained HTML file (?lang=en|zh): Plotly.js, every chart's data and the recorded training
    runs inlined. The first export of a server process records the training runs (about a minute)."""
    lang = request_lang(request)
    html = await offline_html(lang, origin=str(request.base_url).rstrip("/"))
    return HTMLResponse(html, headers={"Content-Disposition": f'attachment; filename="resnorm-lecture-{lang}.html"'})
