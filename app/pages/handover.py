"""Answers handed over with a page: the charts its first view asks for, when this worker holds them already.

A warm page's first chart used to wait for the page, then its script, then one or two requests (/gradients: the
sweep's stream, then the heatmap built from it; /train: the idle chart). When every computation a chart is built
from sits in this worker's memory cache, the page carries the chart's answer instead, under the key its script
computes for the request (app/pages/static_views.py, static/js/viewkeys.js `requestKey`: the static site's keys), and
the script's fetch layer takes it from there (static/js/api.js `handedAnswer`) instead of asking. Nothing is computed
for a page: a chart that would need a computation, a disk read or a pretrained model is not handed over, and the page
asks for it as before. A key the script does not compute (any difference in the request) is simply never taken.
"""

from __future__ import annotations

from typing import Any, cast

from jinja2.utils import htmlsafe_json_dumps
from pydantic import BaseModel, ValidationError

from ..config import TraceConfig
from ..config.real_charts import REAL_REQUESTS
from ..figures import charts
from ..jsonsafe import strict_dumps
from ..services.compute import ComputePool
from ..services.figures import chart_json, request_model
from .registry import pages
from .static_train import TRAIN_KEYS, train_views
from .static_views import DATA_KEYS, PRESET_PAGES, Call, home_view, page_state, view_calls


class NotHanded(Exception):
    """A chart's answer needs more than this worker's memory holds."""


class MemoryOnly:
    """The compute pool's face for a page: answers what the pool's memory holds (as `run_sourced` would, without
    waiting), refuses everything else."""

    def __init__(self, pool: ComputePool) -> None:
        self._pool = pool

    def _hit(self, key: str) -> tuple[Any, str]:
        hit = self._pool.cached(key)
        if hit is None:
            raise NotHanded(key)
        return hit, "memory"

    async def trace(self, cfg: TraceConfig) -> tuple[Any, str]:
        return self._hit(cfg.cache_key())

    async def run_sourced(self, key: str, *args: Any, **kwargs: Any) -> tuple[Any, str]:
        return self._hit(key)

    def __getattr__(self, name: str) -> Any:  # run, run_model, run_real...: a computation, never for a page
        raise NotHanded(name)


def first_calls(page: str, query: dict[str, str], lang: str) -> list[Call]:
    """The chart requests a page's script makes first for the URL state `query` (none where that state is not one
    this module can follow: the script then asks as usual)."""
    calls: tuple[Call, ...] = ()
    if page == "home" and not query.keys() & {"depth", "position"}:
        calls = home_view((lang,)).calls
    elif page == "train" and not query.keys() & set(TRAIN_KEYS):
        calls = train_views((lang,))[0].calls
    elif page in PRESET_PAGES:
        if page == "compare" and query.keys() & set(DATA_KEYS[page]):
            return []  # chosen variants: the script's own list
        try:
            config = TraceConfig.model_validate(
                {**page_state(page), **{k: v for k, v in query.items() if k in TraceConfig.model_fields}}
            )
            sweep_to = int(query.get("sweep_to", pages()[page].defaults.get("sweep_to", 0)))
        except (ValidationError, ValueError):
            return []
        calls = view_calls(page, config.model_dump(), (lang,), sweep_to=sweep_to)
        if page == "gradients":
            relative = query.get("heat", "relative") != "absolute"
            calls = tuple(c for c in calls if "relative" not in (c.body or {}) or c.body["relative"] == relative)
    return [
        c
        for c in calls
        if c.path.startswith("/api/figure/") and c.query.get("lang") == lang and not (c.body or {}).get("csv")
    ]


async def handed_answers(pool: ComputePool, page: str, query: dict[str, str], lang: str) -> dict[str, Any]:
    """{request key: answer} for each first chart of the page whose answer this worker's memory holds."""
    known = charts()
    handed: dict[str, Any] = {}
    for call in first_calls(page, query, lang):
        key = call.path.removeprefix("/api/figure/")
        if key not in known or known[key].request in REAL_REQUESTS:
            continue
        try:
            req: BaseModel = request_model(known[key].request).model_validate(call.body)
            answer, _ = await chart_json(cast(ComputePool, MemoryOnly(pool)), key, req, lang)
        except (NotHanded, ValidationError):
            continue
        handed[call.key] = answer
    return handed


def handover_script(handed: dict[str, Any]) -> bytes:
    """The answers as a JSON block for the page (inert: type application/json), escaped as Jinja's `tojson` does."""
    text = htmlsafe_json_dumps(handed, dumps=lambda value, **_: strict_dumps(value))
    return f'<script type="application/json" id="page-handed">{text}</script>'.encode()


def with_handover(body: bytes, handed: dict[str, Any]) -> bytes:
    """The rendered page (cached without answers: they change with the cache) with the answers before </body>."""
    if not handed:
        return body
    head, sep, tail = body.rpartition(b"</body>")
    return head + handover_script(handed) + sep + tail if sep else body
