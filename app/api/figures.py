"""POST /api/figure/{chart}?lang=en|zh, one route per chart of app/figures/: the chart built in Python from its cached
answer (the Plotly figure, its caption, the values the caption states, its CSV rows and the view patches the page
applies). The body is the chart's request (for `norms`: a trace's fields, every one optional)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request

from ..figures import ChartKind, charts
from ..jsonsafe import StrictJSONResponse
from ..pages.registry import request_lang
from ..services.figures import chart_json, request_model
from .body import json_body
from .deps import PoolDep
from .responses import COMPUTING, ChartAnswer, json_route
from .trace import CACHE_HEADER

router = APIRouter(tags=["figures"])


def _route(kind: ChartKind) -> Callable[..., Awaitable[StrictJSONResponse]]:
    model = request_model(kind.request)

    async def figure(request: Request, pool: PoolDep) -> StrictJSONResponse:
        # a chart never trains: the training budget is /api/train's alone (a recorded run is drawn whatever it cost)
        req = await json_body(request, model, context={"train_budget": False})
        body, source = await chart_json(pool, kind.key, req, request_lang(request))
        return StrictJSONResponse(body, headers={CACHE_HEADER: source})

    figure.__doc__ = f"The {kind.key} chart of the {kind.request} request in the body, in ?lang= (en or zh)."
    return figure


for _kind in charts().values():
    router.add_api_route(
        f"/api/figure/{_kind.key}",
        _route(_kind),
        methods=["POST"],
        name=f"figure_{_kind.key}",
        **json_route(ChartAnswer, COMPUTING, body=request_model(_kind.request)),
    )
