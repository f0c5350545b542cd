"""The default view of every explorer and lesson page, as warm-up requests (see app/services/warmup.py).

Each entry mirrors what the page's script asks for when opened without URL state: a change to a page's
defaults belongs here too (tests/test_cache.py checks that opening each page then costs no computation).
"""

from __future__ import annotations

from typing import get_args

from ..config import PRESETS, REFERENCE_MODEL, TraceConfig, preset_config
from ..experiments.trace import run_trace
from .warmup import WarmRequest, register_warm_requests

HOME_DEPTH, HOME_POSITIONS = 24, ("post", "pre")  # static/js/pages/home.js: the tour's thumbnail


def trace_request(cfg: TraceConfig, label: str) -> WarmRequest:
    return WarmRequest(cfg.cache_key(), run_trace, (cfg,), label)


@register_warm_requests
def explorer_views() -> list[WarmRequest]:
    """Home's tour, /norms at the defaults, /gradients on the lecture's reference model (its page default) with its
    sweep up to that depth, every preset (presets, /compare)."""
    base, reference = TraceConfig(), TraceConfig(**REFERENCE_MODEL)
    items = [trace_request(TraceConfig(depth=HOME_DEPTH, norm_position=p), f"home {p}") for p in HOME_POSITIONS]
    items.append(trace_request(base, "default trace"))
    items.append(trace_request(reference, "reference trace"))
    # /gradients draws its model next to its counterpart without the residual (gradients.js, counterpart()).
    items.append(trace_request(reference.model_copy(update={"residual": "none", "residual_scale": 1.0}), "no residual"))
    items += [trace_request(preset_config(key), f"preset {key}") for key in PRESETS]
    # the heatmap sweeps depths 1..the model's depth (gradients.js, sweepMax)
    items += [trace_request(reference.with_depth(d), f"sweep depth {d}") for d in range(1, reference.depth + 1)]
    return items


@register_warm_requests
def lesson_views() -> list[WarmRequest]:
    """The lesson pages' first requests: /chain, both kinds on /layernorm, every norm on /batchnorm, /softmax with
    its sweep, /precision. (/layernorm's speed measurement is not warmed: a timing taken during start-up lies.)"""
    from ..api.lessons import lesson_key
    from ..experiments.lessons.batch import BatchDependenceRequest, BatchNormName, batch_dependence_lesson
    from ..experiments.lessons.chain import PAGE_START, ChainRequest, chain_lesson
    from ..experiments.lessons.layernorm import LayerNormRequest, layernorm_lesson
    from ..experiments.lessons.precision import snowball_config
    from ..experiments.lessons.softmax import SWEEP_SCALES, SoftmaxRequest, softmax_lesson

    chain = ChainRequest(**PAGE_START)  # what /chain asks for when opened (its page default)
    items = [WarmRequest(lesson_key("chain", chain), chain_lesson, (chain,), "lesson chain")]
    for kind in ("layernorm", "rmsnorm"):
        req = LayerNormRequest(kind=kind)
        items.append(WarmRequest(lesson_key("layernorm", req), layernorm_lesson, (req,), f"lesson {kind}"))
    for norm in get_args(BatchNormName):  # /batchnorm asks for every norm with the same default sizes
        req = BatchDependenceRequest(norm=norm)
        items.append(
            WarmRequest(lesson_key("batch_dependence", req), batch_dependence_lesson, (req,), f"lesson {norm}")
        )
    softmax = SoftmaxRequest(scales=list(SWEEP_SCALES))
    items.append(WarmRequest(lesson_key("softmax", softmax), softmax_lesson, (softmax,), "lesson softmax"))
    stack16 = snowball_config({})
    for cfg in (stack16, stack16.model_copy(update={"dtype": "float32"})):
        items.append(trace_request(cfg, f"lesson precision {cfg.dtype}"))
    return items
