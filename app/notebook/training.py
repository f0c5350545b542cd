"""`rx.train("post_vs_pre")`: a /train preset (or your own runs) trained in this process, as POST /api/train streams it.

In Jupyter with plotly's FigureWidget available the loss chart draws itself while the runs train; elsewhere a
progress bar counts the steps (live=False: neither). Ctrl-C stops between two steps and keeps what was recorded.
The request is validated strictly, as the HTTP body, and trained under the server's torch settings. The budget is
this machine's memory (app/config/machine.py), not the server's training budget, unless budget="server".
"""

from __future__ import annotations

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
from ..experiments.train_presets import RUN_KINDS, TRAIN_PRESETS, preset_request
from ..figures import slides
from ..figures.chart import Chart, diff
from ..i18n import t
from ..pages import train as _train_strings  # noqa: F401  (registers the loss chart's strings)
from . import figures
from . import strings as _strings  # noqa: F401  (registers the API's words)
from .export import Saves
from .fields import Language, TrainFields, check_lang, refuse_unknown
from .traces import _frame

REDRAW_EVERY = 10  # steps between two redraws of a live chart


@dataclass(repr=False)
class Training(Saves):
    """Every event POST /api/train streams for this request (start, step, done, end), as they came."""

    request: TrainRequest
    labels: list[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    lang: str = "en"

    @property
    def runs(self) -> list[dict[str, Any]]:
        """Per run: its steps, losses and `done` event (None while it trains), as the /train page builds them."""
        runs: list[dict[str, Any]] = [{"steps": [], "loss": [], "done": None} for _ in self.request.runs]
        for event in self.events:
            if event.get("type") == "step":
                runs[event["run"]]["steps"].append(event["step"])
                runs[event["run"]]["loss"].append(event["loss"])
            elif event.get("type") == "done":
                runs[event["run"]]["done"] = event
        return runs

    def figure(self, lang: str | None = None, theme: str = "normal") -> go.Figure:
        """The loss chart as the deck's training slides draw it (app/figures/slides.py): one curve per run on a log
        axis, the uniform guess ln(symbols) as a line; theme="slide" applies that builder's slide patch."""
        lang = lang or self.lang
        names = [{"en": f"{i + 1}. {name}", "zh": f"{i + 1}. {name}"} for i, name in enumerate(self.labels)]
        chart = {
            "kind": "train",
            "title": {code: t("chart.train_loss.title", code) for code in ("en", "zh")},
            "labels": names,
            "sources": [{"api": "train", "body": self.request.model_dump()}],
        }
        drawn = {"chart": chart}
        answers = [{"runs": self.runs}]
        normal, projected = (slides.figure(drawn, answers, look, lang) for look in ("normal", "slide"))
        built = Chart("train-loss", normal, "", {}, [], {"slide": diff(normal, projected)})
        return figures.chart_figure(built, theme)

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
        done = [run["done"] for run in self.runs]
        rows = "".join(
            f"<tr><td>{i + 1}. {name}</td><td>{figures.fmt(d['final_loss']) if d else '…'}</td></tr>"
            for i, (name, d) in enumerate(zip(self.labels, done, strict=True))
        )
        return f"<table><caption><b>{t('chart.train_loss.title', self.lang)}</b></caption>{rows}</table>"


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
    labels = _labels(preset, request, lang)
    result = Training(request, labels, lang=lang)
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


def _labels(preset: str | None, request: TrainRequest, lang: str) -> list[str]:
    kinds = TRAIN_PRESETS[preset]["runs"] if preset and len(request.runs) == len(TRAIN_PRESETS[preset]["runs"]) else []
    if kinds:
        return [RUN_KINDS[k]["label_zh" if lang == "zh" else "label"] for k in kinds]
    return [f"{cfg.norm_position}-{cfg.norm}, L={cfg.depth}" for cfg in request.runs]


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
    with widget.batch_update():
        for series, run in zip(widget.data, result.runs, strict=False):
            series.x, series.y = run["steps"], figures.finite(run["loss"])


def _progress(total: int, description: str, shown: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not shown, leave=False)
