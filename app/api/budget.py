"""POST /api/budget: how a model stands against this server's compute budget, and each size's limit given the others.

The pages ask before they request a trace, so their controls refuse a size over its limit and name the setting to
blame in the page's language (static/js/budget.js). Every field is optional; everything but the budget is checked.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from ..config import TraceConfig
from ..config.limits import budget_report
from ..jsonsafe import StrictJSONResponse
from .body import json_body
from .responses import BODY_ERRORS, BudgetAnswer, json_route

router = APIRouter(tags=["config"])


@router.post("/api/budget", **json_route(BudgetAnswer, BODY_ERRORS, body=TraceConfig))
async def budget(request: Request) -> StrictJSONResponse:
    """`fits`, `cause` (the size needing the smallest cut, or null), `limits` (per size: value, min, and max = the
    largest value that fits with the others as they are, null if none does) and `costs` against their limits."""
    cfg = await json_body(request, TraceConfig, context={"budget": False})
    return StrictJSONResponse(budget_report(cfg))
