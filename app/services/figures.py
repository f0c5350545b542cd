"""Charts of cached answers, cached per answer, chart and language (a chart costs ~1 ms to build; a page's redraws,
embeds and exports ask for the same one again)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from pydantic import BaseModel

from ..config.real_charts import REAL_REQUESTS
from ..experiments.requests import REQUESTS
from ..figures import charts
from .answers import answer
from .compute import ComputePool
from .real_charts import real_chart_json
from .training import PENDING

MAX_CHARTS = 512  # ~10 kB each gzipped at depth 96: a few MB at most
_charts: OrderedDict[str, dict[str, Any]] = OrderedDict()


def request_model(kind: str) -> type[BaseModel]:
    """The validated body of a chart's request kind."""
    return REAL_REQUESTS[kind] if kind in REAL_REQUESTS else REQUESTS[kind].model


async def chart_json(pool: ComputePool, key: str, req: BaseModel, lang: str) -> tuple[dict[str, Any], str]:
    """(the chart's JSON, where its answer came from: computed, memory, ... or `chart` when the chart was cached)."""
    kind = charts()[key]
    if kind.request in REAL_REQUESTS:  # a pretrained model's: answered where the models stay loaded
        return await real_chart_json(pool, kind, req, lang)
    request = REQUESTS[kind.request]  # a composite kind's parts have the keys: its own request names the chart
    cache_key = f"{key}|{lang}|{request.cache_key(req) if request.key else req.model_dump_json()}"
    hit = _charts.get(cache_key)
    if hit is not None:
        _charts.move_to_end(cache_key)
        return hit, "chart"
    result, source = await answer(pool, kind.request, req)
    built = kind.build(result, lang).to_json()
    if source == PENDING:  # nothing recorded yet (a training request): the next ask may find the run
        return built, source
    _charts[cache_key] = built
    if len(_charts) > MAX_CHARTS:
        _charts.popitem(last=False)
    return built, source
