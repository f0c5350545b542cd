"""`rx.sweep(1, 96)`: one stack traced at every depth, with a progress bar; Ctrl-C keeps the depths already done.

Validated by SweepRequest (the body of POST /api/sweep, with its compute budget) before the first depth runs; each
row is depth_row(run_trace(...)), the line the HTTP API streams for that depth.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from ..config import TraceConfig
from ..experiments.sweep import SweepRequest, depth_row
from ..experiments.trace import run_trace
from ..i18n import t
from . import figures
from . import strings as _strings  # noqa: F401  (registers the API's words)


@dataclass
class Sweep:
    config: TraceConfig
    depths: list[int]
    rows: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    lang: str = "en"

    def figure(self, relative: bool = True, lang: str | None = None) -> go.Figure:
        """The /gradients heatmap: depth × layer, log colour; relative divides each row by its last layer."""
        return figures.heatmap_figure(self.rows, lang or self.lang, relative=relative)

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
        done = ", ".join(f"L={row['depth']}: {figures.fmt(row['grad_survival'])}" for row in self.rows[:12])
        more = " …" if len(self.rows) > 12 else ""
        return f"<p><b>{t('nb.sweep_progress', self.lang)}</b> ({t('nb.grad_survival', self.lang)}): {done}{more}</p>"


def sweep(
    start: int = 1,
    stop: int = 96,
    depths: list[int] | None = None,
    lang: str = "en",
    progress: bool = True,
    **fields: Any,
) -> Sweep:
    """Trace depths start..stop (or the list `depths`) of the model the fields describe (TraceConfig's fields)."""
    depths = depths or list(range(start, stop + 1))
    # the base model at the shallowest depth (each depth replaces it; SweepRequest checks the deepest and the total)
    base = TraceConfig(**{"depth": min(depths, default=1), **fields})
    request = SweepRequest(config=base, depths=depths)
    result = Sweep(request.config, request.depths, lang=lang)
    bar = _progress(len(request.depths), t("nb.sweep_progress", lang), progress)
    try:
        for depth in request.depths:
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
