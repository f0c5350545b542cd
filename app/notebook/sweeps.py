"""`rx.sweep(1, 96)`: one stack traced at every depth, with a progress bar; Ctrl-C keeps the depths already done.

Validated by SweepRequest (the body of POST /api/sweep, strictly, as the HTTP body) before the first depth runs,
against this machine's memory rather than the server's budget (app/config/machine.py); each row is
depth_row(run_trace(...)), the line the HTTP API streams for that depth, computed under the server's torch settings.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
from typing_extensions import Unpack

from ..config import TraceConfig
from ..config.machine import Budget, check_budget, check_machine
from ..experiments.isolation import SERVER_THREADS, as_server
from ..experiments.sweep import SweepRequest, depth_row, heatmap_of
from ..experiments.trace import run_trace
from ..figures import build as build_chart
from ..numbers import fmt
from .charts import chart_figure
from .export import Saves
from .fields import Language, ModelFields, check_lang, keyword_signature, refuse_unknown, trace_config
from .strings import t


@dataclass(repr=False)
class Sweep(Saves):
    config: TraceConfig
    depths: list[int]
    rows: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    lang: str = "en"

    def figure(self, relative: bool = True, lang: str | None = None, theme: str = "normal") -> go.Figure:
        """The /gradients heatmap (app/figures/heatmap.py, the page's builder): depth × layer, log colour; relative
        divides each row by its last layer; theme="slide" applies the projector's sizes."""
        config = {**self.config.model_dump(), "depth": 0}  # no "model above" in a notebook: depth 0 names no row
        answer = heatmap_of(config, self.rows, max((row["depth"] for row in self.rows), default=1), relative, csv=True)
        return chart_figure(build_chart("grad-heatmap", answer, lang or self.lang), theme)

    def to_pandas(self) -> Any:
        from .traces import _frame

        return _frame(
            [
                {"depth": row["depth"], "layer": l, "grad_norm": g, "act_norm": a}
                for row in self.rows
                for l, (g, a) in enumerate(zip(row["grad_norm"], row["act_norm"], strict=True), start=1)
            ],
            self.lang,
        )

    def _repr_html_(self) -> str:
        done = ", ".join(f"L={row['depth']}: {fmt(row['grad_survival'])}" for row in self.rows[:12])
        more = " …" if len(self.rows) > 12 else ""
        return f"<p><b>{t('nb.sweep_progress', self.lang)}</b> ({t('nb.grad_survival', self.lang)}): {done}{more}</p>"

    def __repr__(self) -> str:
        span = f"{self.depths[0]}..{self.depths[-1]}" if self.depths else "none"
        state = ", interrupted" if self.interrupted else ""
        return f"Sweep(depths {span}: {len(self.rows)} of {len(self.depths)} traced{state})"


@keyword_signature(skip=("depth",))
def sweep(
    start: int = 1,
    stop: int = 96,
    *,
    depths: list[int] | None = None,
    lang: Language = "en",
    progress: bool = True,
    threads: int = SERVER_THREADS,
    budget: Budget = "machine",
    **fields: Unpack[ModelFields],
) -> Sweep:
    """Trace depths start..stop (or the list `depths`) of the model TraceConfig's other fields describe."""
    check_lang(lang)
    check_budget(budget)
    refuse_unknown(fields, TraceConfig, "sweep", skip=("depth",))  # the sweep sets the depth
    depths = list(range(start, stop + 1)) if depths is None else list(depths) if isinstance(depths, range) else depths
    # the base model at depth 1 (each depth replaces it; SweepRequest checks the deepest and, with
    # budget="server", the total)
    base = trace_config({**fields, "depth": 1}, None, "sweep")
    request = SweepRequest.model_validate(
        {"config": base, "depths": depths}, strict=True, context={"budget": budget == "server"}
    )
    deepest = request.config.with_depth(request.depths[-1])
    check_machine(deepest, budget, "depths", f"its deepest model (depth {deepest.depth}) needs")
    result = Sweep(request.config.with_depth(request.depths[0]), request.depths, lang=lang)  # at the shallowest
    bar = _progress(len(request.depths), t("nb.sweep_progress", lang), progress)
    try:
        for depth in request.depths:
            with as_server(threads):
                result.rows.append(depth_row(run_trace(request.config.with_depth(depth))))
            bar.update(1)
    except KeyboardInterrupt:
        result.interrupted = True
        print(t("nb.interrupted", lang, done=len(result.rows), total=len(request.depths)), file=sys.stderr)
    finally:
        bar.close()
    return result


def _progress(total: int, description: str, shown: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not shown, leave=False)
