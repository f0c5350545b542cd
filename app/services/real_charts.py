"""The answers /models' charts are built from: one model's trace (POST /api/real_trace's, the same cache), two models
side by side, and one model's sentence set beside the reader's sentence.

The set (app/experiments/real_set.py) is a function of the weights alone: each of its sentences is a trace request of
its own, cached like any other, and its intervention one job cached under the digest of the weights; the reader's
sentence adds its own trace and, for a causal model, its own intervention. Charts are cached per chart, language, request and the digest
of the weights that computed them, so swapped weights never show an old chart.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel

from ..config.real import RealTraceRequest
from ..config.real_charts import RealPairRequest, RealSetRequest
from ..errors import FieldError
from ..experiments.real_sentences import every_sentence, summarise
from ..experiments.real_set import intervention_site, own_intervention, set_intervention, set_of, with_intervention
from ..figures import ChartKind
from ..figures.real_common import models_of
from ..models.real import loading
from ..models.real.sources import ModelSource
from .compute import ComputePool
from .real_answers import as_field_error, real_trace_answer
from .real_models import get_shelf, resolve

SET_VERSION = 1  # part of the set's cache key: bumped when the set or what is measured of it changes
MAX_CHARTS = 256
_charts: OrderedDict[str, dict[str, Any]] = OrderedDict()


def compute_intervention(source: ModelSource, digest: str, site: tuple[int, int]) -> dict[str, Any]:
    """In the models process: the set's sentences with the massive coordinate at `site` set three ways."""
    return set_intervention(get_shelf().get(source, digest), site)


def compute_own(source: ModelSource, digest: str, text: str, found: dict[str, Any]) -> dict[str, Any] | None:
    """In the models process: the reader's sentence under the set's intervention."""
    return own_intervention(get_shelf().get(source, digest), text, found)


async def _resolved(model: str) -> tuple[ModelSource, str]:
    import anyio

    try:
        return await anyio.to_thread.run_sync(resolve, model)
    except Exception as exc:
        raise as_field_error(exc) or exc from None


async def _sourced(pool: ComputePool, key: str, fn: Any, *args: Any) -> tuple[Any, str]:
    try:
        return await pool.run_sourced(key, fn, *args, runner=pool.run_real)
    except Exception as exc:
        error = as_field_error(exc)
        if error is None:
            raise
        raise error from None


def _key(*parts: object) -> str:
    """A cache key of the weights' digest and the request, with the libraries that compute it (as a trace's key
    has them, real_answers.py): after a transformers or torch upgrade an old intervention is not served again."""
    versions = sorted(loading.library_versions().items())
    return hashlib.sha256("\n".join(map(str, (*parts, versions))).encode()).hexdigest()


async def the_set(pool: ComputePool, model: str) -> tuple[dict[str, Any], str]:
    """(the model's sentence-set answer, where it came from). Each sentence's trace is a request of its own, asked
    one after the other so that other requests get a compute slot between them; the intervention is one job."""
    traces, sources = [], []
    for lang, text in every_sentence():
        trace, source = await real_trace_answer(pool, RealTraceRequest(model=model, text=text, gradients=False))
        traces.append((lang, trace))
        sources.append(source)
    the_set = set_of(traces[0][1]["model"], traces)
    site, absent = intervention_site(the_set)
    found = None
    if site is not None:
        model_source, digest = await _resolved(model)
        key = f"real_intervention:{_key(digest, site, SET_VERSION)}"
        found, source = await _sourced(pool, key, compute_intervention, model_source, digest, site)
        sources.append(source)
    return with_intervention(the_set, found, absent), "computed" if "computed" in sources else sources[0]


async def pair_answer(pool: ComputePool, req: RealPairRequest) -> tuple[dict[str, Any], str]:
    """Both models' traces. A model that cannot be loaded or read this text is named with its error and the other
    is still drawn; an unknown name is refused for its own field (model or compare), and a request whose every
    model fails gets the first one's error."""
    requests = req.traces()
    results = await asyncio.gather(*(real_trace_answer(pool, r) for r in requests), return_exceptions=True)
    traces: list[dict[str, Any]] = []
    for i, result in enumerate(results):
        if isinstance(result, FieldError) and result.field == "model" and result.status == 422:
            raise FieldError("compare" if i else "model", result.message, result.allowed)
        if isinstance(result, FieldError):
            traces.append({"failed": requests[i].model, "message": result.message})
        elif isinstance(result, BaseException):
            raise result
        else:
            traces.append(result[0])
    if all("failed" in t for t in traces):
        raise next(r for r in results if isinstance(r, BaseException))
    sources = [r[1] for r in results if not isinstance(r, BaseException)]
    return {"traces": traces}, "computed" if "computed" in sources else sources[0]


async def set_with_own(pool: ComputePool, req: RealSetRequest) -> tuple[dict[str, Any], str]:
    """The model's set, the reader's sentence summarised from its trace and, for a causal model, its intervention."""
    the_answer, source = await the_set(pool, req.model)
    own_trace, own_source = await real_trace_answer(pool, req.own())
    own = None
    if the_answer["intervention"] is not None:
        model_source, digest = await _resolved(req.model)
        key = f"real_own:{_key(digest, req.text, SET_VERSION)}"
        own, _ = await _sourced(pool, key, compute_own, model_source, digest, req.text, the_answer["intervention"])
    answer = {**the_answer, "own": summarise(own_trace), "own_intervention": own}
    return answer, "computed" if "computed" in (source, own_source) else source


async def real_answer(pool: ComputePool, kind: str, req: BaseModel) -> tuple[Any, str]:
    if kind == "real_trace":
        assert isinstance(req, RealTraceRequest)
        return await real_trace_answer(pool, req)
    if kind == "real_pair":
        assert isinstance(req, RealPairRequest)
        return await pair_answer(pool, req)
    assert isinstance(req, RealSetRequest)
    return await set_with_own(pool, req)


PROVENANCE = ("name", "revision", "weights_sha256", "transformers", "torch")


def weights_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Each model an answer draws, with the digest of the weights and the library versions that computed it: a chart
    says where its numbers come from, as a trace does."""
    return [{key: model[key] for key in PROVENANCE} for model in models_of(answer)]


def _revisions(answer: Any) -> str:
    """The digests (as revisions) of the weights an answer was computed with."""
    return ",".join(model["revision"] for model in weights_of(answer))


async def real_chart_json(pool: ComputePool, kind: ChartKind, req: BaseModel, lang: str) -> tuple[dict[str, Any], str]:
    """(the chart's JSON, where its answer came from, or `chart` when the chart itself was cached)."""
    answer, source = await real_answer(pool, kind.request, req)
    cache_key = f"{kind.key}|{lang}|{_revisions(answer)}|{req.model_dump_json()}"
    hit = _charts.get(cache_key)
    if hit is not None:
        _charts.move_to_end(cache_key)
        return hit, "chart"
    built = {**kind.build(answer, lang).to_json(), "weights": weights_of(answer)}
    _charts[cache_key] = built
    if len(_charts) > MAX_CHARTS:
        _charts.popitem(last=False)
    return built, source
