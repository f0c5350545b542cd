"""The lesson pages: /chain, /layernorm, /softmax, /precision, /batchnorm. Their controls are derived from each
lesson's request model; their charts call the lesson endpoints in app/api/lessons.py.
"""

from __future__ import annotations

from .. import i18n
from ..experiments.lessons.batch import BATCH_SWEEP, PAD_FRACTIONS, BatchDependenceRequest
from ..experiments.lessons.chain import PAGE_START as CHAIN_PAGE_START
from ..experiments.lessons.chain import WORKED_CASES, ChainRequest
from ..experiments.lessons.layernorm import LayerNormRequest
from ..experiments.lessons.precision import PrecisionRequest, stack_schema
from ..experiments.lessons.softmax import SWEEP_SCALES, SoftmaxRequest
from ..experiments.lessons.text import all_strings
from .registry import Page, register_page

MODELS = {
    "chain": ChainRequest,
    "layernorm": LayerNormRequest,
    "softmax": SoftmaxRequest,
    "precision": PrecisionRequest,
    "batchnorm": BatchDependenceRequest,
}

# Where a page opens somewhere else than its request model's default (app/services/warm_views.py warms these).
PAGE_DEFAULTS = {"chain": CHAIN_PAGE_START}


def _register_pages() -> None:
    """The four lesson pages (see docs/adding-a-page.md): controls are derived from each request model's schema."""
    i18n.register(all_strings(MODELS))
    extras = {
        "chain": {"cases": [{k: c[k] for k in ("key", "derivative", "depth", "product")} for c in WORKED_CASES]},
        "layernorm": {},
        "softmax": {"sweep_scales": list(SWEEP_SCALES)},
        "precision": {"stack": stack_schema()},
        "batchnorm": {
            "batch_sweep": list(BATCH_SWEEP),
            "pad_fractions": list(PAD_FRACTIONS),
            "norms": list(BatchDependenceRequest.model_json_schema()["properties"]["norm"]["enum"]),
        },
    }
    charts = {
        "chain": ("chain",),
        "layernorm": ("layernorm", "norm-speed"),
        "softmax": ("softmax-probs", "softmax-sweep"),
        "precision": ("precision-overflow",),
        "batchnorm": ("batch-dependence", "batch-padding"),
    }
    for order, (key, model) in enumerate(MODELS.items()):
        extra = {"schema": model.model_json_schema()["properties"], **extras[key]}
        register_page(
            Page(
                key=key,
                path=f"/{key}",
                title_key=f"{key}.title",
                charts=charts[key],
                nav_key=f"nav.{key}",
                nav_order=60 + order,
                model_controls=False,
                extra=extra,
                defaults=PAGE_DEFAULTS.get(key, {}),
            )
        )


_register_pages()
