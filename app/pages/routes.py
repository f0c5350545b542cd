"""A GET route for every page of the registry: the page as rendered (registry.render_page, cached), with the answers
its first charts need when this worker holds them (handover.py). Apart from the registry, which handover.py reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ..api.deps import PoolDep
from ..services.compute import ComputePool
from .handover import handed_answers, with_handover
from .registry import pages, render_page, request_lang


def page_router() -> APIRouter:
    router = APIRouter(include_in_schema=False)
    for page in pages().values():
        router.add_api_route(
            page.path, _shows(page.key), methods=["GET"], response_class=HTMLResponse, name=f"page_{page.key}"
        )
    return router


def _shows(key: str) -> Callable[[Request, ComputePool], Awaitable[HTMLResponse]]:
    async def show(request: Request, pool: PoolDep) -> HTMLResponse:
        handed = await handed_answers(pool, key, dict(request.query_params), request_lang(request))
        page = render_page(request, key, plotly_first=bool(handed))
        if not handed:
            return page
        return HTMLResponse(with_handover(bytes(page.body), handed), headers={"Vary": "Accept-Language"})

    return show
