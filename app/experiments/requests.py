"""Every API request kind once: its validated model, its cache key and the function that answers it.

The routes (app/api), the warm-up (app/services/warmup.py), the page registry's default views and the offline deck
(app/services/answers.py) all go through `REQUESTS`, so a key format or a lesson's function is written here only.
A composite kind (precision, sweep) is answered by other kinds' requests (`parts`), each cached under its own key:
a stack traced for /precision is a cache hit for /api/trace and the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..config import TraceConfig
from .compare import CompareRequest
from .compare import combine as compared
from .compare import parts as compare_parts
from .depth_scan import DepthScan, depth_scan
from .grad_profile import GradProfile
from .grad_profile import combine as grad_profile
from .grad_profile import parts as grad_profile_parts
from .laws import stream_laws
from .lessons.batch import BatchDependenceRequest, BatchNormsRequest, batch_dependence_lesson, norms_answer, norms_parts
from .lessons.chain import ChainRequest, chain_lesson
from .lessons.layernorm import LayerNormPage, LayerNormRequest, layernorm_lesson, page_answer, page_parts
from .lessons.norm_speed import NormSpeedRequest, norm_speed_key, timed_norm_speed
from .lessons.precision import PrecisionPage, PrecisionView, page_view, precision_view, precision_view_lesson
from .lessons.softmax import SoftmaxRequest, softmax_lesson
from .lr_warmup import RecordedRequest, recorded_answer, recorded_key
from .paths import PathsRequest, unrolled_paths
from .sweep import HeatmapRequest, SweepRequest, heatmap_answer, heatmap_parts
from .tour import TourRequest
from .tour import combine as toured
from .tour import parts as tour_parts
from .trace import run_trace
from .train_answer import TrainCharts


@dataclass(frozen=True)
class Computation:
    """One cached computation: the key its answer is stored under and the module-level function (picklable into a
    compute process) that makes it."""

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    label: str = ""


Part = tuple[str, BaseModel]  # (kind name, its request)


@dataclass(frozen=True)
class RequestKind:
    """One kind of API request. Either `compute(req)` answers it under `key(req)`, or it is composite: `parts(req)`
    are answered first (each cached by its own kind) and `combine(req, *answers)` makes the answer (None: the route
    streams the parts itself, as /api/sweep does)."""

    name: str
    model: type[BaseModel]
    compute: Callable[..., Any] | None = None
    key: Callable[[Any], str] | None = None
    parts: Callable[[Any], list[Part]] | None = None
    combine: Callable[..., Any] | None = None
    from_query: Callable[[Mapping[str, Any]], BaseModel] | None = None  # default: model.model_validate
    warm: bool = True  # False: never computed ahead (a timing taken during start-up lies)

    def cache_key(self, req: BaseModel) -> str:
        if self.key is None:
            raise ValueError(f"request kind {self.name} is composite: its parts have the keys")
        return self.key(req)

    def validate(self, data: Mapping[str, Any]) -> BaseModel:
        """A request of this kind from a deck source's body or query (the routes validate with their own errors)."""
        return self.from_query(data) if self.from_query else self.model.model_validate(data)


def lesson_key(name: str) -> Callable[[BaseModel], str]:
    """Lessons are cached under their name and their request's JSON (defaults included, so equal requests match)."""
    return lambda req: f"lesson:{name}:{req.model_dump_json()}"


def _trace_key(cfg: TraceConfig) -> str:
    return cfg.cache_key()


def _precision_parts(view: PrecisionView) -> list[Part]:
    return [("trace", cfg) for cfg in view.traces()]


def _precision_page_parts(page: BaseModel) -> list[Part]:
    return [("precision", page_view(page))]


def _the_part(req: BaseModel, part: Any) -> Any:
    return part


def _laws_parts(cfg: TraceConfig) -> list[Part]:
    return [("trace", cfg)]


def _laws(cfg: TraceConfig, trace: dict[str, Any]) -> dict[str, Any]:
    return stream_laws(trace)


def _depth_scan_parts(req: DepthScan) -> list[Part]:
    return [("trace", cfg) for cfg in req.configs()]


def _sweep_parts(req: SweepRequest) -> list[Part]:
    return [("trace", req.config.with_depth(depth)) for depth in req.depths]


def _lesson(name: str, model: type[BaseModel], fn: Callable[..., Any]) -> RequestKind:
    return RequestKind(name, model, compute=fn, key=lesson_key(name))


REQUESTS: dict[str, RequestKind] = {
    kind.name: kind
    for kind in (
        RequestKind("trace", TraceConfig, compute=run_trace, key=_trace_key),
        RequestKind("sweep", SweepRequest, parts=_sweep_parts),
        RequestKind("grad_heatmap", HeatmapRequest, parts=heatmap_parts, combine=heatmap_answer),
        RequestKind("laws", TraceConfig, parts=_laws_parts, combine=_laws),
        RequestKind("grad_profile", GradProfile, parts=grad_profile_parts, combine=grad_profile),
        RequestKind("compare", CompareRequest, parts=compare_parts, combine=compared),
        RequestKind("tour", TourRequest, parts=tour_parts, combine=toured),
        RequestKind("depth_scan", DepthScan, parts=_depth_scan_parts, combine=depth_scan),
        RequestKind("paths", PathsRequest, compute=unrolled_paths, key=lambda req: f"paths:{req.model_dump_json()}"),
        _lesson("chain", ChainRequest, chain_lesson),
        _lesson("layernorm", LayerNormRequest, layernorm_lesson),
        _lesson("softmax", SoftmaxRequest, softmax_lesson),
        _lesson("batch_dependence", BatchDependenceRequest, batch_dependence_lesson),
        RequestKind(
            "precision",
            PrecisionView,
            parts=_precision_parts,
            combine=precision_view_lesson,
            from_query=precision_view,
        ),
        RequestKind("layernorm_page", LayerNormPage, parts=page_parts, combine=page_answer),
        RequestKind("batch_norms", BatchNormsRequest, parts=norms_parts, combine=norms_answer),
        RequestKind("precision_page", PrecisionPage, parts=_precision_page_parts, combine=_the_part),
        RequestKind("norm_speed", NormSpeedRequest, compute=timed_norm_speed, key=norm_speed_key, warm=False),
        RequestKind("recorded", RecordedRequest, compute=recorded_answer, key=recorded_key),
        # /train's charts: the run the server recorded (app/services/training.py), never trained to answer a figure
        RequestKind("train", TrainCharts, warm=False),
    )
}


def computations(name: str, req: BaseModel, label: str = "") -> list[Computation]:
    """The cached computations behind one request, under the keys its route uses (a composite's: its parts')."""
    kind = REQUESTS[name]
    if kind.parts is not None:
        return [c for part, sub in kind.parts(req) for c in computations(part, sub, label or name)]
    if kind.compute is None or not kind.warm:
        return []
    return [Computation(kind.cache_key(req), kind.compute, (req,), label or name)]


def answer_in_process(name: str, req: BaseModel) -> Any:
    """The answer to one request computed here, uncached (the notebook API): the same functions the routes call."""
    kind = REQUESTS[name]
    if kind.compute is not None:
        return kind.compute(req)
    if kind.parts is None or kind.combine is None:
        raise ValueError(f"request kind {name} is streamed by its route; ask for its parts")
    return kind.combine(req, *(answer_in_process(part, sub) for part, sub in kind.parts(req)))
