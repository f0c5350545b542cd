"""`rx.train("post_vs_pre")`: a /train preset (or your own runs) trained in this process, as POST /api/train streams it.

In Jupyter with plotly's FigureWidget available the loss chart draws itself while the runs train; elsewhere a
progress bar counts the steps (live=False: neither). Ctrl-C stops between two steps and keeps what was recorded.
The request is validated strictly, as the HTTP body, and trained under the server's torch settings. The budget is
this machine's memory (app/config/machine.py), not the server's training budget, unless budget="server".
"""

from __future__ import annotations

import html
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
from typing_extensions import Unpack

from ..config.machine import Budget, check_budget, check_machine_training
from ..experiments.isolation import SERVER_THREADS, as_server
from ..experiments.train import TrainRequest, train_events
from ..experiments.train_answer import TrainCharts, answer_of
from ..experiments.train_presets import TRAIN_PRESETS, preset_request
from ..figures import Chart
from ..figures import build as build_chart
from ..figures.train import CHART as LOSS
from ..figures.train import label
from ..figures.train_profile import CHART as PROFILE
from .charts import chart_figure
from .export import Saves
from .fields import Language, TrainFields, check_lang, refuse_unknown, train_signature
from .strings import t
from .traces import _frame

CHARTS = (LOSS.key, PROFILE.key)
NO_BUDGET = {"budget": False, "train_budget": False}  # validated when it was trained
REDRAW_EVERY = 10  # steps between two redraws of a live chart


@dataclass(repr=False)
class Training(Saves):
    """Every event POST /api/train streams for this request (start, step, done, end), as they came."""

    request: TrainRequest
    kinds: list[str] | None = None  # the /train run kind of each run (what names its curve), where a preset gave them
    events: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    lang: str = "en"

    def answer(self) -> dict[str, Any]:
        """The /train charts' answer of every event so far (app/experiments/train_answer.py)."""
        request = TrainCharts.model_validate({**self.request.model_dump(), "kinds": self.kinds}, context=NO_BUDGET)
        return answer_of(request, self.events)

    @property
    def runs(self) -> list[dict[str, Any]]:
        """Per run: its steps, losses, gradient norms, learning rates, latest per-layer snapshot and `done` event
        (None while it trains), as the /train page's charts read them."""
        return self.answer()["runs"]

    @property
    def labels(self) -> list[str]:
        """Each run's name on the charts ("1. Pre-LN, 2017 recipe")."""
        answer = self.answer()
        return [label(answer, i, self.lang) for i in range(len(self.request.runs))]

    def chart(self, name: str = "train-loss", lang: str | None = None) -> Chart:
        """The /train chart `name` (train-loss, train-profile) of the events so far: its `.figure`, `.caption`,
        `.claim` and `.rows` are what the page shows."""
        if name not in CHARTS:
            raise ValueError(f"name: one of {', '.join(CHARTS)}; got {name!r}")
        return build_chart(name, self.answer(), lang or self.lang)

    def figure(self, lang: str | None = None, theme: str = "normal", chart: str = "train-loss") -> go.Figure:
        """The /train loss chart, the page's figure to the key (chart="train-profile": the per-layer chart): one
        curve per run over the uniform guess ln(symbols), divergence marked; theme="slide": the projector's sizes."""
        return chart_figure(self.chart(chart, lang), theme)

    def to_pandas(self) -> Any:
        """One row per run and step: loss, gradient norm, learning rate, and on the steps that recorded them the
        per-block columns act_norm_1.., grad_norm_1.., param_grad_norm_1.. (block l's output stream)."""
        rows = []
        for event in self.events:
            if event.get("type") != "step":
                continue
            row = {"run": event["run"], "label": self.labels[event["run"]], "step": event["step"]}
            row.update({key: event[key] for key in ("loss", "grad_norm", "lr")})
            for column, values in (event.get("layers") or {}).items():
                if isinstance(values, list):
                    row.update({f"{column}_{l}": v for l, v in enumerate(values, start=1)})
            rows.append(row)
        return _frame(rows, self.lang)

    def __repr__(self) -> str:
        steps = sum(1 for e in self.events if e.get("type") == "step")
        state = ", interrupted" if self.interrupted else ""
        runs = "; ".join(self.labels)
        return f"Training({len(self.labels)} runs, {steps} of {self.request.steps * len(self.labels)} steps{state}: {runs})"

    def _repr_html_(self) -> str:
        chart = self.chart()
        title = html.escape(chart.figure["layout"]["title"]["text"])
        return f"<p><b>{title}</b></p><p>{html.escape(chart.caption)}</p>"


@train_signature
def train(
    preset: str | None = "post_vs_pre",
    *,
    lang: Language = "en",
    live: bool = True,
    threads: int = SERVER_THREADS,
    budget: Budget = "machine",
    **fields: Unpack[TrainFields],
) -> Training:
    """Train a /train preset (post_vs_pre, warmup, ...), its settings overridden by TrainRequest's fields
    (steps=100, lr=3e-4, ...), or with preset=None your own runs=[dict of TraceConfig's fields, ...]. live=True: a
    live chart in Jupyter, else a progress bar; live=False: neither. `budget`: "machine" refuses runs needing over
    half of this machine's memory, "server" applies the server's training and model budgets, None neither."""
    request = train_request(preset, lang, budget, fields)
    result = Training(request, _kinds(preset, request), lang=lang)
    cancel = threading.Event()
    widget, shown = _live_widget(result) if live else (None, None)
    bar = _progress(request.steps * len(request.runs), t("nb.train_progress", lang), shown=live and widget is None)
    try:
        with as_server(threads):
            _record(result, train_events(request, cancel), bar, widget)
    except KeyboardInterrupt:
        cancel.set()
        result.interrupted = True
        steps = sum(1 for e in result.events if e.get("type") == "step")
        print(t("nb.interrupted", lang, done=steps, total=request.steps * len(request.runs)), file=sys.stderr)
    finally:
        bar.close()
    if widget is not None:
        _settle(widget, shown, result)
    return result


def train_request(preset: str | None, lang: object, budget: Budget, fields: Mapping[str, Any]) -> TrainRequest:
    """The request POST /api/train would validate, strictly; the server's budgets only with budget="server"."""
    check_lang(lang)
    check_budget(budget)
    if preset is not None and preset not in TRAIN_PRESETS:
        raise ValueError(f"preset: one of {', '.join(TRAIN_PRESETS)}; got {preset!r}")
    refuse_unknown(fields, TrainRequest, "train")
    base = preset_request(preset).model_dump() if preset else {}
    # budget (each run's model) and train_budget (the whole request) are the server's validators' switches
    context = {} if budget == "server" else {"budget": False, "train_budget": False}
    request = TrainRequest.model_validate({**base, **fields}, strict=True, context=context)
    check_machine_training(request.runs, request.optimizer, budget)
    return request


def _record(result: Training, events: Any, bar: Any, widget: Any) -> None:
    last_run = len(result.request.runs) - 1
    for event in events:
        result.events.append(event)
        if event.get("type") == "step":
            bar.update(1)
            if widget is not None and event["run"] == last_run and event["step"] % REDRAW_EVERY == 0:
                _redraw(widget, result)


def _kinds(preset: str | None, request: TrainRequest) -> list[str] | None:
    """The preset's run kinds (its curves' names), unless the runs were replaced."""
    kinds = TRAIN_PRESETS[preset]["runs"] if preset else None
    return list(kinds) if kinds and len(kinds) == len(request.runs) else None


def _live_widget(result: Training) -> tuple[Any, Any]:
    """A FigureWidget shown in the running Jupyter kernel and its display handle, or (None, None) (a script, a
    terminal, no widget support)."""
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is None or not hasattr(get_ipython(), "kernel"):
            return None, None
        widget = go.FigureWidget(result.figure())
        return widget, display(widget, display_id=True)
    except Exception:  # no IPython, no ipywidgets/anywidget: a progress bar instead
        return None, None


def _settle(widget: Any, shown: Any, result: Training) -> None:
    """The live chart becomes the finished figure, a plain output that stays in a notebook exported to HTML (a
    widget would need its JavaScript manager from a CDN there), and the widget is closed."""
    bundle = result.figure()._repr_mimebundle_()
    if shown is None or not bundle:
        _redraw(widget, result)
        return
    shown.update(bundle, raw=True)
    widget.close()


def _redraw(widget: Any, result: Training) -> None:
    """The widget shows the loss chart of the events so far (its curves extended in place while the runs train)."""
    fig = result.figure()
    with widget.batch_update():
        if [s.name for s in widget.data] == [s.name for s in fig.data]:
            for series, drawn in zip(widget.data, fig.data, strict=True):
                series.x, series.y = drawn.x, drawn.y
        else:  # the first points, or a divergence marked: the chart's traces themselves changed
            widget.data = []
            widget.add_traces(list(fig.data))
            widget.layout = fig.layout


def _progress(total: int, description: str, shown: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not shown, leave=False)
