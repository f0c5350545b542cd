"""One builder per chart: answer -> Chart (figure, caption, claim, rows, view patches). The only place that turns
numbers into words or pictures; pages, exports and the notebook show what these return.

`charts()` is the registry: it lists every chart kind, and nothing registers itself by being imported.
"""

from __future__ import annotations

from functools import cache

from .chart import Chart, ChartKind, apply_patch

__all__ = ["Chart", "ChartKind", "apply_patch", "build", "charts", "strings"]


@cache
def charts() -> dict[str, ChartKind]:
    """Every chart built in Python, by key (the /embed/{key} and POST /api/figure/{key} name)."""
    from . import (
        batchnorm,
        chain,
        compare,
        gradients,
        heatmap,
        layernorm,
        norms,
        precision,
        softmax,
        tour,
        train,
        train_profile,
    )

    kinds = (norms.CHART, gradients.CHART, heatmap.CHART, compare.CHART, tour.CHART, chain.CHART, softmax.PROBS, softmax.SWEEP,
             precision.CHART, batchnorm.DEPENDENCE, batchnorm.PADDING, layernorm.NORMS, layernorm.SPEED, train.CHART,
             train_profile.CHART, *real_charts())  # fmt: skip
    return {kind.key: kind for kind in kinds}


def real_charts() -> tuple[ChartKind, ...]:
    """/models' charts, in the page's order (real pretrained models: app/config/real_charts.py's requests)."""
    from . import real_dims, real_gradient, real_parts, real_patch, real_set, real_sink, real_stream

    return (real_stream.STREAM, real_set.SET, real_stream.TOKENS, real_parts.COSINE, real_parts.BRANCHES,
            real_gradient.GRADIENT, real_gradient.GRAD_TOKENS, real_sink.SINK, real_sink.HEADS, real_dims.DIMS,
            real_patch.PATCH)  # fmt: skip


def strings() -> dict[str, tuple[str, str]]:
    """Every chart's own words (English, 中文), for the translation table the pages hand the browser."""
    from . import slides

    return {**{key: pair for kind in charts().values() for key, pair in kind.strings.items()}, **slides.STRINGS}


def build(key: str, answer: object, lang: str = "en") -> Chart:
    """The chart `key` of one answer of its request kind, in lang."""
    return charts()[key].build(answer, lang)
