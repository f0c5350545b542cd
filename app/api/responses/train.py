"""The training lab's answers: POST /api/train's NDJSON events, /api/train/budget, /status and /presets."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, RootModel

from ...config import TraceConfig
from .charts import ChartAnswer
from .common import Answer, Flagged, Measured


class RunShape(Answer):
    run: int
    config: TraceConfig
    tokens: int = Field(description="tokens per sequence of the task")
    answer_tokens: int = Field(description="the scored second half")


class TrainStart(Flagged):
    type: Literal["start"]
    task: str
    steps: int
    probe_every: int = Field(description="steps between two `layers` profiles (and the first and last step)")
    runs: list[RunShape]
    cached: bool | None = Field(None, description="true: a finished identical run replayed from the cache")


class LayerProfile(Answer):
    act_norm: list[Measured] = Field(description="per block: the stream's mean token norm after it")
    grad_norm: list[Measured]
    param_grad_norm: list[Measured]
    embedding_act_norm: Measured
    embedding_grad_norm: Measured


class TrainStep(Flagged):
    type: Literal["step"]
    run: int
    step: int
    loss: Measured
    grad_norm: Measured = Field(description="the global gradient norm before clipping")
    lr: float
    layers: LayerProfile | None = Field(None, description="every probe_every steps")
    diverged: bool | None = Field(None, description="true: this step's loss or gradient was not finite")


class TrainDone(Flagged):
    type: Literal["done"]
    run: int
    done: Literal[True]
    diverged: bool
    diverged_step: int | None
    steps_done: int
    final_loss: Measured
    eval_loss: Measured = Field(description="held-out loss on the answer positions")
    accuracy: Measured = Field(description="held-out token accuracy")
    sequence_accuracy: Measured = Field(description="held-out whole-answer accuracy")
    elapsed_ms: float


class TrainEnd(Flagged):
    type: Literal["end"]
    elapsed_ms: float
    diverged: list[int] = Field(description="the runs that diverged")
    cached: bool | None = None


class TrainError(Flagged):
    type: Literal["error"]
    error: str


class TrainEvent(
    RootModel[Annotated[TrainStart | TrainStep | TrainDone | TrainEnd | TrainError, Field(discriminator="type")]]
):
    """One line of POST /api/train's NDJSON stream: `start`, `step` events (runs interleaved), a `done` per run, `end`."""


class TrainBudgetAnswer(Flagged):
    """How a training request stands against this server's training budget, before Start."""

    fits: bool
    multiply_adds: float
    limit: float
    times_over: float
    max_steps: int = Field(description="the most steps that fit with these runs (0: not even one)")
    runs: int
    steps: int


class TrainStatus(Flagged):
    """Training streams running in this worker."""

    active: int
    max: int
    started: int
    steps: int
    replays: int


class TrainRun(Answer):
    kind: str
    label: str
    label_zh: str
    config: TraceConfig


class TrainPreset(Answer):
    key: str
    name: str
    name_zh: str
    caption: str
    caption_zh: str
    runs: list[TrainRun]
    base: dict[str, Any]
    settings: dict[str, Any]


class Task(Answer):
    key: str
    name: str
    name_zh: str
    description: str
    description_zh: str


class TrainLimits(Answer):
    max_runs: int
    max_steps: int
    max_train_macs: float
    max_concurrent: int


class TrainPresetsAnswer(Flagged):
    """The named comparisons, the tasks, the defaults and the limits of the training lab."""

    presets: list[TrainPreset]
    tasks: list[Task]
    defaults: dict[str, Any] = Field(description="every training setting's default")
    limits: TrainLimits


class ChartWhole(ChartAnswer):
    type: Literal["chart"]


class ChartExtend(Flagged):
    type: Literal["extend"]
    chart: str = Field(description="the chart the points are appended to (train-loss)")
    step: int
    traces: list[int] = Field(description="the indices of the curves that grow")
    x: list[list[Measured]]
    y: list[list[Measured]]
    rows: list[dict[str, Any]] = Field(description="the CSV rows this step adds")


class ChartSet(Flagged):
    type: Literal["set"]
    chart: str
    set: list[list[Any]] = Field(description="[path, value] pairs: each value written at its path in the chart")


class TrainChartMessage(
    RootModel[Annotated[ChartWhole | ChartExtend | ChartSet | TrainError, Field(discriminator="type")]]
):
    """One line of POST /api/train/charts' NDJSON stream: each chart whole once, then `extend` and `set` patches."""
