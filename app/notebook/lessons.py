"""`rx.lesson(chart, **fields)`: a lesson page's chart (/chain, /softmax, /precision, /layernorm, /batchnorm) computed
in this process, as the page shows it: the same builder (app/figures/), so `.figure()` equals what
POST /api/figure/<chart> sends the page, and `.caption` is the page's sentence.

    rx.lesson("softmax-sweep", logits=[5, 5, 5]).caption
    rx.lesson("precision-overflow", depth=64, norm="layernorm").figure(theme="slide")
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from .. import figures
from ..experiments.isolation import as_server
from ..experiments.lessons.softmax import SWEEP_SCALES
from ..experiments.requests import REQUESTS, answer_in_process
from .charts import chart_figure
from .export import Saves
from .fields import Language, check_lang, refuse_unknown

# The lesson pages' charts, by key, with what a page sends beside the reader's fields (the softmax page's sweep).
LESSON_CHARTS: dict[str, dict[str, Any]] = {
    "chain": {},
    "softmax-probs": {"scales": list(SWEEP_SCALES)},
    "softmax-sweep": {"scales": list(SWEEP_SCALES)},
    "precision-overflow": {},
    "layernorm": {},
    "norm-speed": {},
    "batch-dependence": {},
    "batch-padding": {},
}


@dataclass(repr=False)
class Lesson(Saves):
    """One lesson chart: `answer` is the lesson endpoint's answer, the rest is what the page shows of it."""

    key: str
    answer: Any
    lang: str = "en"

    def chart(self, lang: str | None = None) -> figures.Chart:
        return figures.build(self.key, self.answer, lang or self.lang)

    @property
    def caption(self) -> str:
        return self.chart().caption

    @property
    def claim(self) -> dict[str, Any]:
        """The values the caption states, by name."""
        return self.chart().claim

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The chart's data, as its CSV export holds it."""
        return self.chart().rows

    def figure(self, lang: str | None = None, theme: str = "normal") -> go.Figure:
        """The page's figure, in the normal theme or (theme="slide") with the projector's sizes."""
        return chart_figure(self.chart(lang), theme)

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows)

    def _repr_html_(self) -> str:
        return f"<p><b>{html.escape(self.key)}</b>: {html.escape(self.caption)}</p>"

    def __repr__(self) -> str:
        return f"Lesson({self.key}: {self.caption[:100]}…)"


def lesson(chart: str, *, lang: Language = "en", **fields: Any) -> Lesson:
    """The lesson chart `chart` (one of LESSON_CHARTS) for the page's fields, e.g. rx.lesson("chain", derivative=0.9,
    depth=96); fields are validated as the chart's POST /api/figure/<chart> body (strict JSON types)."""
    check_lang(lang)
    if chart not in LESSON_CHARTS:
        raise ValueError(f"chart: one of {', '.join(LESSON_CHARTS)}; got {chart!r}")
    kind = REQUESTS[figures.charts()[chart].request]
    refuse_unknown(fields, kind.model, "lesson")
    request = kind.model.model_validate({**LESSON_CHARTS[chart], **fields}, strict=True)
    with as_server():
        return Lesson(chart, answer_in_process(kind.name, request), lang)
