"""The lesson pages: /chain, /layernorm, /softmax, /precision, /batchnorm. Their controls are derived from each
lesson's request model; their charts call the lesson endpoints in app/api/lessons.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from pydantic import BaseModel

from ..config import group_counts
from ..experiments.lessons.batch import BATCH_SWEEP, PAD_FRACTIONS, BatchDependenceRequest, BatchNormName
from ..experiments.lessons.chain import PAGE_START as CHAIN_PAGE_START
from ..experiments.lessons.chain import WORKED_CASES, ChainRequest
from ..experiments.lessons.layernorm import LayerNormRequest
from ..experiments.lessons.norm_speed import NormSpeedRequest
from ..experiments.lessons.precision import precision_view, stack_schema
from ..experiments.lessons.softmax import SWEEP_SCALES, SoftmaxRequest
from ..experiments.lessons.text import lesson_models, lesson_strings
from ..experiments.requests import Part
from .page import Page

MODELS: dict[str, type[BaseModel]] = lesson_models()

# Where a page opens somewhere else than its request model's default (its default requests below use them).
PAGE_DEFAULTS = {"chain": CHAIN_PAGE_START}

# The first requests of each lesson page opened without URL state (its script sends the request model's defaults).
# /layernorm's speed measurement is listed but never warmed: a timing taken during start-up lies.
DEFAULT_REQUESTS: dict[str, Callable[[], list[Part]]] = {
    "chain": lambda: [("chain", ChainRequest(**CHAIN_PAGE_START))],
    "layernorm": lambda: (
        [("layernorm", LayerNormRequest(kind=kind)) for kind in ("layernorm", "rmsnorm")]
        + [("norm_speed", NormSpeedRequest())]
    ),
    "softmax": lambda: [("softmax", SoftmaxRequest(scales=list(SWEEP_SCALES)))],
    "precision": lambda: [("precision", precision_view({}))],
    "batchnorm": lambda: [("batch_dependence", BatchDependenceRequest(norm=n)) for n in get_args(BatchNormName)],
}
URL_KEYS = {"chain": ("y_scale",)}  # view settings beyond each request model's fields

# Where each lesson's numbers come from (the footer): none of them is a model's forward and backward pass but
# /precision's stack, so each says what it really computes.
FOOTERS = {
    "chain.footer": (
        "Every number on this page is computed by PyTorch in float64 {where}: the per-layer factors multiplied up, "
        "and their logarithms summed where a product leaves float64's range.",
        "本页每个数字都由 PyTorch {where}以 float64 计算：逐层因子连乘；乘积超出 float64 范围时改为累加对数。",
    ),
    "layernorm.footer": (
        "Every number on this page is computed by PyTorch {where}, step by step, and checked against "
        "torch.nn.functional; the timings are measured there too.",
        "本页每个数字都由 PyTorch {where}逐步计算，并与 torch.nn.functional 对照；计时也在同一台机器上测得。",
    ),
    "softmax.footer": (
        "Every number on this page is computed by PyTorch in float64 {where}: the softmax, and its Jacobian by "
        "autograd, checked against the closed form diag(p) − p pᵀ.",
        "本页每个数字都由 PyTorch {where}以 float64 计算：softmax 及其由自动求导得到的雅可比矩阵，并与闭式解 "
        "diag(p) − p pᵀ 对照。",
    ),
    "precision.footer": (
        "Every number on this page is computed by PyTorch {where}: the arithmetic in each number format, and a "
        "real forward and backward pass of the stack in float16 and float32.",
        "本页每个数字都由 PyTorch {where}计算：各数值格式下的算术，以及该网络在 float16 和 float32 下真实的前向和反向计算。",
    ),
    "batchnorm.footer": (
        "Every number on this page is computed by PyTorch {where} with the explorer's own norm layers "
        "(forward passes in float64), checked against torch.nn.functional.",
        "本页每个数字都由 PyTorch {where}用本站自己的归一化层计算（float64 前向计算），并与 torch.nn.functional 对照。",
    ),
}


def _widths(model: type[BaseModel]) -> range:
    width = model.model_json_schema()["properties"]["d_model"]
    return range(width["minimum"], width["maximum"] + 1)


def strings() -> dict[str, tuple[str, str]]:
    return {**lesson_strings(), **FOOTERS}


def pages() -> list[Page]:
    """The lesson pages (see docs/adding-a-page.md): controls are derived from each request model's schema."""
    extras: dict[str, dict[str, Any]] = {
        "chain": {"cases": [{k: c[k] for k in ("key", "derivative", "depth", "product")} for c in WORKED_CASES]},
        "layernorm": {},
        "softmax": {"sweep_scales": list(SWEEP_SCALES)},
        "precision": {"stack": stack_schema()},
        "batchnorm": {
            "batch_sweep": list(BATCH_SWEEP),
            "pad_fractions": list(PAD_FRACTIONS),
            "norms": list(BatchDependenceRequest.model_json_schema()["properties"]["norm"]["enum"]),
            # GroupNorm's groups per width, so a width change moves the groups before a request is refused
            "group_counts": {d: group_counts(d) for d in _widths(BatchDependenceRequest)},
        },
    }
    charts = {
        "chain": ("chain",),
        "layernorm": ("layernorm", "layernorm-geometry", "norm-speed"),
        "softmax": ("softmax-probs", "softmax-sweep"),
        "precision": ("precision-overflow",),
        "batchnorm": ("batch-dependence", "batch-padding"),
    }
    return [
        Page(
            key=key,
            path=f"/{key}",
            title_key=f"{key}.title",
            charts=charts[key],
            nav_key=f"nav.{key}",
            nav_order=60 + order,
            model_controls=False,
            extra={"schema": model.model_json_schema()["properties"], **extras[key]},
            url_keys=URL_KEYS.get(key, ()),
            default_requests=DEFAULT_REQUESTS[key],
            defaults=PAGE_DEFAULTS.get(key, {}),
            footer_key=f"{key}.footer",
        )
        for order, (key, model) in enumerate(MODELS.items())
    ]
