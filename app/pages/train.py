"""The /train page: its strings (English + Chinese) and its page; data for the page's module in `extra`."""

from __future__ import annotations

from ..config import TraceConfig
from ..config import presets_payload as arch_presets_payload
from ..config.fields import script_bounds
from ..experiments.tasks import tasks_payload
from ..experiments.train import MAX_STEPS, MAX_TRAIN_MACS, TrainRequest, training_macs
from ..experiments.train_presets import DEEP, SETTINGS, kinds_payload, presets_payload
from .page import Page

SIZE_FIELDS = ("depth", "d_model", "n_heads", "seq_len", "vocab_size", "batch")

STRINGS = {
    "nav.train": ("Training", "训练"),
    "train.title": ("Does it train? A real training run", "能训练吗？一次真实的训练"),
    "train.intro": (
        "Short real training runs on this server, side by side on the same data: a small Transformer learns to copy "
        "(or reverse, or sort) a sequence. Pick a preset, press Start, and watch the loss curves and the per-layer "
        "gradients change while it learns.",
        "在本服务器上进行的简短真实训练，多个模型在同样的数据上并排训练：一个小 Transformer 学习复制（或反转、排序）"
        "一个序列。选择一个预设，按“开始”，观察学习过程中损失曲线和逐层梯度的变化。",
    ),
    "train.presets": ("Presets (found by real runs)", "预设（由真实训练得出）"),
    "train.start": ("Start training", "开始训练"),
    "train.stop": ("Stop", "停止"),
    "train.idle": ("Choose the runs and settings, then press Start.", "选择要训练的模型和设置，然后按“开始训练”。"),
    "train.recorded": (
        "The charts show the run this server recorded with these settings; Start replays it at once.",
        "图中是本服务器用这些设置记录过的训练；按“开始训练”会立即回放。",
    ),
    "train.progress": ("Step {step} of {steps}", "第 {step} / {steps} 步"),
    "train.running": ("Training… step {step} of {steps}", "训练中… 第 {step} / {steps} 步"),
    "train.finished": ("Finished: the captions below give the results.", "已完成：结果见下方图注。"),
    "train.not_started": (
        "Not started: the server refused these settings (the message above says why).",
        "未开始：服务器不接受这些设置（原因见上方提示）。",
    ),
    "train.over_budget": (
        "Too much training for this server: {runs} run(s) × {steps} steps would take {times} times the work it "
        "allows. With these runs at most {max_steps} steps fit; or train fewer runs or smaller models.",
        "训练量超出本服务器的允许范围：{runs} 个模型 × {steps} 步需要允许工作量的 {times} 倍。"
        "在这些模型下最多只能训练 {max_steps} 步；也可以减少模型数或缩小模型。",
    ),
    "train.over_budget_none": (
        "Too much training for this server: not even one step of these {runs} run(s) fits. Train fewer runs or "
        "smaller models.",
        "训练量超出本服务器的允许范围：这 {runs} 个模型连一步都放不下。请减少模型数或缩小模型。",
    ),
    "train.stopped": (
        "Stopped at step {step}; the server run was cancelled.",
        "在第 {step} 步停止；服务器上的训练已取消。",
    ),
    "train.busy": (
        "Another training run is using this server; try again in {s} s.",
        "另一个训练正在使用本服务器；请 {s} 秒后再试。",
    ),
    "train.runs": ("Runs to train (1 to 4)", "要训练的模型（1 到 4 个）"),
    "train.run_n": ("Run {n}", "模型 {n}"),
    "train.group.training": ("Training", "训练"),
    "train.task": ("Task", "任务"),
    "train.steps": ("Steps", "步数"),
    "train.lr": ("Learning rate", "学习率"),
    "train.warmup_steps": ("Warm-up steps (linear)", "预热步数（线性）"),
    "train.optimizer": ("Optimizer", "优化器"),
    "train.clip": ("Gradient clipping (max norm, 0 = off)", "梯度裁剪（最大范数，0 = 不裁剪）"),
    "train.seed": ("Seed (weights and data)", "随机种子（权重和数据）"),
    "train.profile": ("Per-layer quantity", "逐层的量"),
    "train.loss_scale": ("Loss axis", "损失纵轴"),
    "train.profile_scale": ("Per-layer axis", "逐层纵轴"),
    "enum.optimizer.adam": ("Adam", "Adam"),
    "enum.optimizer.adamw": ("AdamW (weight decay 0.01)", "AdamW（权重衰减 0.01）"),
    "enum.optimizer.sgd": ("SGD (momentum 0.9)", "SGD（动量 0.9）"),
    "enum.task.copy": ("Copy: a b c | a b c", "复制：a b c | a b c"),
    "enum.task.reverse": ("Reverse: a b c | c b a", "反转：a b c | c b a"),
    "enum.task.sort": ("Sort: c a b | a b c", "排序：c a b | a b c"),
}


def strings() -> dict[str, tuple[str, str]]:
    return STRINGS


def _schema_for(fields: tuple[str, ...]) -> dict:
    """The TraceConfig JSON schema restricted to the size fields the page shows (bounds and labels from one source)."""
    schema = TraceConfig.model_json_schema()
    return {"properties": {name: schema["properties"][name] for name in fields}}


# the settings the page's script checks before it starts a run
SETTINGS_FIELDS = ("task", "steps", "lr", "warmup_steps", "optimizer", "clip", "seed")


def pages() -> list[Page]:
    extra = {
        "presets": presets_payload(),
        # the architectures at the default depth, as GET /api/presets answers them: the first chart's request needs
        # them, and asking for them first cost a round trip before it (and the wait for Plotly.js to run)
        "arch_presets": {"depth": DEEP["depth"], "presets": arch_presets_payload(TraceConfig(depth=DEEP["depth"]))},
        "kinds": kinds_payload(),
        "tasks": tasks_payload(),
        "size_schema": _schema_for(SIZE_FIELDS),
        "size_defaults": {k: DEEP[k] for k in SIZE_FIELDS},
        "settings_defaults": SETTINGS,
        "settings_bounds": script_bounds(TrainRequest, SETTINGS_FIELDS),
        "limits": {
            "max_steps": MAX_STEPS,
            "max_train_macs": MAX_TRAIN_MACS,
            "macs_per_step_default": training_macs(TraceConfig(**DEEP), 1),
        },
    }
    return [
        Page(
            key="train",
            path="/train",
            title_key="train.title",
            charts=("train-loss", "train-profile"),
            nav_key="nav.train",
            nav_order=60,
            model_controls=False,
            extra=extra,
        )
    ]
