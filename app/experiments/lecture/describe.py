"""The settings line under each chart, in both languages, read from the sources themselves: a slide never
describes its model in words that could disagree with the config it actually sends."""

from __future__ import annotations

from typing import Any

from ... import i18n
from ...config import TraceConfig
from ...config.variants import enum_strings
from ..depth_scan import DepthScan
from ..lessons.batch import BatchDependenceRequest
from ..lessons.norm_speed import TOKENS, WIDTHS
from ..lessons.precision import snowball_config
from ..lr_warmup import LRS, WARMUPS, cell_request
from ..tasks import TASKS
from .build import pair

SHOWN = ("depth", "d_model", "block", "norm", "norm_position", "residual", "activation", "init", "dtype")
QUIET_DEFAULTS = (
    "block",
)  # named only when a slide changes them (every slide but the alternatives uses sequential blocks)
LABELS = TraceConfig.model_json_schema()["properties"]


def settings_text(chart: dict[str, Any]) -> dict[str, str]:
    kinds = {source["api"] for source in chart["sources"]}
    configs = [TraceConfig(**s["body"]) for s in chart["sources"] if s["api"] == "trace"]
    for source in chart["sources"]:
        if source["api"] == "precision":
            configs.append(snowball_config({k: str(v) for k, v in source["query"].items()}))
        if source["api"] == "train":
            configs += [TraceConfig(**run) for run in source["body"]["runs"]]
        if source["api"] == "depth_scan":  # its traces: every preset at every depth and seed
            configs += DepthScan(**source["body"]).configs()
        if source["api"] == "paths":  # the unrolled model
            configs.append(TraceConfig(**source["body"]["model"]))
        if source["api"] == "recorded":  # the learning-rate × warm-up grid: the same runs in every cell
            configs += cell_request(LRS[0], WARMUPS[0]).runs
    parts = [_describe(configs, lang) for lang in ("en", "zh")] if configs else ["", ""]
    training = next((s["body"] for s in chart["sources"] if s["api"] == "train"), None)
    if training:
        parts = [f"{text} · {_training(training, lang)}" for text, lang in zip(parts, ("en", "zh"), strict=True)]
    if "recorded" in kinds:
        parts = [f"{text} · {_grid(lang)}" for text, lang in zip(parts, ("en", "zh"), strict=True)]
    if kinds <= {"chain", "layernorm", "softmax"}:
        parts = ["Computed in float64 by torch", "由 torch 以 float64 计算"]
    if "precision" in kinds:
        parts = [f"{text} · {_dtype_note(lang)}" for text, lang in zip(parts, ("en", "zh"), strict=True)]
    if kinds == {"batch_dependence"}:
        parts = _batch_sizes(chart["sources"][0]["body"])
    if kinds == {"norm_speed"}:
        widths = f"{WIDTHS[0]}–{WIDTHS[-1]}"
        parts = [
            f"Timed on this server, once an hour · float32 · {TOKENS} tokens · widths {widths} · forward + backward",
            f"在本服务器上计时，每小时一次 · float32 · {TOKENS} 个词元 · 宽度 {widths} · 前向 + 反向",
        ]
    return pair(*parts)


def _batch_sizes(body: dict[str, Any]) -> list[str]:
    """The /batchnorm lesson's sizes, read from the request (its defaults where the slide sends none)."""
    req = BatchDependenceRequest(**body)
    return [
        f"Synthetic tokens, float64 · width {req.d_model} · {req.seq_len} tokens a sentence · batch {req.batch} · "
        f"{req.trials} sets of new batch mates · seed {req.seed}",
        f"合成词元，float64 · 宽度 {req.d_model} · 每句 {req.seq_len} 个词元 · 批大小 {req.batch} · "
        f"换 {req.trials} 次同批句子 · 随机种子 {req.seed}",
    ]


def _describe(configs: list[TraceConfig], lang: str) -> str:
    shared, differing = [], []
    for name in SHOWN:
        values = {getattr(cfg, name, None) for cfg in configs}
        if None in values or (name == "norm_position" and {c.norm for c in configs} == {"none"}):
            continue
        if name == "norm_position" and values == {"pre"} and any(c.residual == "none" for c in configs):
            values = {"front"}  # x ← f(LN(x)) is no Pre-LN: Pre-LN is x + f(LN(x))
        if len(values) > 1:
            differing.append(_label(name, lang))
        elif values != {getattr(TraceConfig(), name, None)} or name not in QUIET_DEFAULTS:
            shared.append(_value_text(name, values.pop(), lang))
    text = " · ".join(shared)
    if differing:
        joined = "、".join(differing) if lang == "zh" else ", ".join(differing)
        text += f" · 各曲线不同：{joined}" if lang == "zh" else f" · the series differ in: {joined}"
    return text


# Short forms for a settings line; anything else is "<label>: <option label>" from the request model and i18n.
SHORT = {
    ("depth", None): ("{v} blocks", "{v} 块"),
    ("d_model", None): ("width {v}", "宽度 {v}"),
    ("norm", "none"): ("no norm", "无归一化"),
    ("residual", "none"): ("no shortcut", "无捷径"),
    ("residual", "identity"): ("identity shortcut", "恒等捷径"),
    ("activation", None): ("{label}", "{label}"),
    ("init", None): ("{label} init", "{label} 初始化"),
    ("dtype", None): ("{v}", "{v}"),
    ("norm", None): ("{label}", "{label}"),
    ("norm_position", "pre"): ("Pre-LN", "Pre-LN"),
    ("norm_position", "front"): ("norm in front of each branch", "归一化在每个分支之前"),
    ("norm_position", "post"): ("Post-LN", "Post-LN"),
}


def option_label(name: str, value: Any) -> tuple[str, str]:
    """A field value's (English, 中文) label: the variant table's, a shared one (app/i18n.py), else the value."""
    key = f"enum.{name}.{value}"
    return enum_strings().get(key) or i18n.STRINGS.get(key) or (str(value), str(value))


def _value_text(name: str, value: Any, lang: str) -> str:
    label = option_label(name, value)[1 if lang == "zh" else 0]
    form = SHORT.get((name, value)) or SHORT.get((name, None))
    if form:
        return form[1 if lang == "zh" else 0].format(v=value, label=label)
    return f"{_label(name, lang)}{'：' if lang == 'zh' else ': '}{label}"


def _label(name: str, lang: str) -> str:
    prop = LABELS.get(name, {})
    return prop.get("label_zh" if lang == "zh" else "label", name)


def _training(body: dict[str, Any], lang: str) -> str:
    if lang == "zh":
        return f"{TASKS[body['task']].name_zh}任务 · {body['steps']} 步 · {body['optimizer'].capitalize()}，学习率 {body['lr']:g}"
    return f"{TASKS[body['task']].name.lower()} task · {body['steps']} steps · {body['optimizer'].capitalize()}, lr {body['lr']:g}"


def _grid(lang: str) -> str:
    body = cell_request(LRS[0], WARMUPS[0]).model_dump()
    lrs, warmups = f"{LRS[0]:g}–{LRS[-1]:g}", f"{WARMUPS[0]}–{WARMUPS[-1]}"
    if lang == "zh":
        return (
            f"{TASKS[body['task']].name_zh}任务 · {body['steps']} 步 · Adam，学习率 {lrs} × 预热 {warmups} 步 · 记录值"
        )
    return f"{TASKS[body['task']].name.lower()} task · {body['steps']} steps · Adam, lr {lrs} × warm-up {warmups} · recorded"


def _dtype_note(lang: str) -> str:
    return (
        "同一组权重分别以 float16 和 float32 运行" if lang == "zh" else "the same weights run in float16 and in float32"
    )
