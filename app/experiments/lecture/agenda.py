"""The deck's teaching order: its sections in the order a lecturer teaches them, and the agenda slide that shows them.

The order follows the argument: the problem (the chain product) → the first stabilizer (the shortcut) → what the
unchecked stream runs into (the explosion, float16, softmax) → the second stabilizer (LayerNorm: three steps, its
geometry, γ and β, and why a norm alone is not enough) → where it sits (the block diagram, Post-LN against Pre-LN) → the snowball and
why it is not exactly √l → training (the shortcut, Post-LN's stall, warm-up) → RMSNorm and BatchNorm → the alternatives → real
models → the summary. build_deck lays the slides out in this order, so a slide is placed by naming it here; a term a
slide uses must be defined on or before it (terms.py, tests/test_lecture_order.py).

The agenda slide lists the sections with their slides (links that jump there, offline too), the minutes a lecturer
plans for each (the speaker view shows the current section's), the optional slides, and the models the deck runs,
each with the slides it appears on, read from the slides' own requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...config import TraceConfig
from .build import claim, const, pair, slide
from .reference import REFERENCE, is_reference

# The agenda's table headings, for the deck's page (app/pages/lecture.py) and the notebook's agenda table alike.
STRINGS: dict[str, tuple[str, str]] = {
    "lecture.agenda.section": ("Section", "部分"),
    "lecture.agenda.min": ("Min", "分钟"),
    "lecture.agenda.optional_slides": ("Optional slides:", "可跳过的页："),
    "lecture.agenda.model": ("Model", "模型"),
    "lecture.agenda.slides": ("Slides", "页"),
    "lecture.agenda.optional": ("optional", "可选"),
}


@dataclass(frozen=True)
class Section:
    key: str
    title: tuple[str, str]
    minutes: int
    slides: tuple[str, ...]
    optional: tuple[str, ...] = ()  # slides a short lecture may skip (shown as such in the agenda and the footer)


SECTIONS: tuple[Section, ...] = (
    Section("start", ("Start", "开始"), 2, ("title", "agenda")),
    Section("problem", ("The problem: the chain product", "问题：链式乘积"), 5, ("model", "chain")),
    Section("shortcut", ("The shortcut", "捷径"), 6, ("shortcut", "live-gradient")),
    Section(
        "walls",
        ("The explosion, two walls", "爆炸与两堵墙"),
        8,
        ("drift", "float16", "softmax"),
        optional=("drift",),
    ),
    Section(
        "layernorm",
        ("LayerNorm", "LayerNorm（层归一化）"),
        11,
        ("layernorm", "layernorm-geometry", "gamma-beta", "norm-collapse"),
    ),
    Section(
        "placement",
        ("Where it sits: Post- or Pre-LN", "位置：Post-LN 或 Pre-LN"),
        13,
        ("block-diagram", "post-vs-pre", "post-vs-pre-grad", "paths", "xiong"),
        optional=("paths", "xiong"),
    ),
    Section(
        "snowball",
        ("The snowball, not exactly √l", "滚雪球：不完全是 √l"),
        6,
        ("snowball", "increments"),
        optional=("increments",),
    ),
    Section(
        "training",
        ("Training, and warm-up", "训练与预热"),
        10,
        ("train-shortcut", "post-vs-pre-train", "lr-warmup"),
    ),
    Section(
        "rmsnorm",
        ("RMSNorm and BatchNorm", "RMSNorm 与 BatchNorm"),
        7,
        ("rmsnorm", "rmsnorm-speed", "batchnorm"),
        optional=("rmsnorm-speed", "batchnorm"),
    ),
    Section("alternatives", ("The alternatives", "其他方案"), 4, ("alternatives",)),
    Section(
        "real",
        ("Real pretrained models", "真实的预训练模型"),
        6,
        ("real-pinned", "real-snowball", "real-sink"),
        optional=("real-pinned", "real-snowball", "real-sink"),
    ),
    Section(
        "summary",
        ("Summary, references", "总结与参考文献"),
        6,
        ("summary", "summary-limits", "summary-walls", "references", "references-2", "references-3", "references-4"),
    ),
)

# The models the deck runs, by what the slides' requests ask for (first match). A row: (key, name, which requests).
MODELS: tuple[tuple[str, tuple[str, str]], ...] = (
    ("reference", ("Reference: 96 blocks, tanh", "参考模型：96 块、tanh")),
    ("reference-12", ("Reference at 12 blocks", "参考模型，12 块")),
    ("recipe-2017", ("2017 recipe (ReLU)", "2017 配方（ReLU）")),
    ("gpt2", ("GPT-2 recipe (GELU)", "GPT-2 配方（GELU）")),
    ("stack-48", ("48 blocks, no norm", "48 块、无归一化")),
    ("minilm", ("MiniLM-L6 (Post-LN)", "MiniLM-L6（Post-LN）")),
    ("smollm2", ("SmolLM2-135M (Pre-RMSNorm)", "SmolLM2-135M（Pre-RMSNorm）")),
    ("presets", ("Every preset", "每个预设")),
)


def _model_of_config(fields: dict[str, Any]) -> str:
    cfg = TraceConfig(**{k: v for k, v in fields.items() if k in TraceConfig.model_fields})
    if is_reference(cfg):
        return "reference"
    if cfg.depth == 12 and is_reference(cfg.with_depth(REFERENCE["depth"])):
        return "reference-12"
    if cfg.activation == "relu":
        return "recipe-2017"
    if cfg.init == "gpt2":
        return "gpt2"
    if cfg.depth == 48 and cfg.norm == "none":
        return "stack-48"
    return "other"


def model_of(source: dict[str, Any]) -> str | None:
    """Which of MODELS one request runs; None for a worked example without a model (chain, layernorm, softmax)."""
    api = source["api"]
    if api == "trace":
        return _model_of_config(source["body"])
    if api == "precision":  # the float16 stack: the lesson's defaults under the slide's own fields
        from ..lessons.precision import snowball_config

        return _model_of_config(snowball_config({k: str(v) for k, v in source["query"].items()}).model_dump())
    if api == "train":
        return _model_of_config(source["body"]["runs"][0])
    if api == "depth_scan":  # Post-LN and Pre-LN on one recipe at several depths: that recipe
        from ..depth_scan import DepthScan

        found = {_model_of_config(cfg.model_dump()) for cfg in DepthScan(**source["body"]).configs()}
        return found.pop() if len(found) == 1 else "presets"
    if api == "paths":  # one model unrolled into its paths
        return _model_of_config(source["body"]["model"])
    if api == "recorded":  # the learning-rate × warm-up grid: the training slide's recipe at each cell
        from ..lr_warmup import cell_request

        return _model_of_config(cell_request(1e-3, 0).runs[0].model_dump())
    if api == "real_trace":
        name = str(source["body"].get("model", "")).lower()
        return "minilm" if "minilm" in name else "smollm2" if "smol" in name else "other"
    return None


def slide_model(s: dict[str, Any]) -> str | None:
    """The model a slide shows: the one its requests run, "presets" for a slide that runs many (the alternatives)."""
    found = {model_of(source) for source in (s["chart"] or {}).get("sources", [])} - {None}
    if not found:
        return None
    if len(found) > 1:
        return "presets"
    return found.pop()


def ordered(slides: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The slides in SECTIONS' order, each marked with its section and whether it is optional. A slide that no
    section places stops the build; a placed slide that is absent (the real models, when not installed) is skipped."""
    placed = [slide_id for section in SECTIONS for slide_id in section.slides]
    if len(set(placed)) != len(placed):
        raise ValueError(f"a slide is placed twice in agenda.SECTIONS: {placed}")
    unplaced = set(slides) - set(placed)
    if unplaced:
        raise ValueError(f"slides no section of agenda.SECTIONS places: {sorted(unplaced)}")
    out = []
    for section in SECTIONS:
        for slide_id in section.slides:
            if slide_id in slides:
                out.append({**slides[slide_id], "section": section.key, "optional": slide_id in section.optional})
    return out


def _ranges(numbers: list[int]) -> str:
    """[4, 5, 6, 9] -> "4–6, 9"."""
    parts: list[str] = []
    for n in numbers:
        if parts and int(parts[-1].split("–")[-1]) == n - 1:
            parts[-1] = f"{parts[-1].split('–')[0]}–{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts)


def agenda_of(deck: list[dict[str, Any]]) -> dict[str, Any]:
    """The agenda slide's content, from the numbered deck: sections (title, first slide's id and number, the range,
    minutes, optional slide numbers) and the model map (name, slide numbers)."""
    number = {s["id"]: i for i, s in enumerate(deck, start=1)}
    sections = []
    for section in SECTIONS:
        present = [slide_id for slide_id in section.slides if slide_id in number]
        if not present or section.key == "start":
            continue
        numbers = [number[slide_id] for slide_id in present]
        sections.append(
            {
                "key": section.key,
                "title": pair(*section.title),
                "first": present[0],
                "slides": _ranges(numbers),
                "minutes": section.minutes,
                "optional": _ranges([number[s] for s in present if s in section.optional]),
            }
        )
    models = []
    for key, name in MODELS:
        numbers = [number[s["id"]] for s in deck if slide_model(s) == key]
        if numbers:
            models.append({"key": key, "name": pair(*name), "slides": _ranges(numbers)})
    optional = [number[s["id"]] for s in deck if s.get("optional")]
    return {"sections": sections, "models": models, "optional": _ranges(optional)}


def section_minutes(key: str) -> int:
    return next(section.minutes for section in SECTIONS if section.key == key)


def agenda_slide(present: list[str]) -> dict[str, Any]:
    """The slide after the title; its `agenda` (sections and models) is filled in once the deck is numbered.
    present: the ids of the slides this deck has (the real models' only where installed)."""
    shown = [section for section in SECTIONS if set(section.slides) & {*present, "title", "agenda"}]
    total = sum(section.minutes for section in shown)
    optional = sum(section.minutes for section in shown if section.optional == section.slides)
    return slide(
        "agenda",
        ("The plan", "内容安排"),
        (
            "The problem first, then one stabilizer at a time. Click a section to jump to it.",
            "先讲问题，再逐一引入两种稳定机制。点击某一部分可直接跳转。",
        ),
        (
            f"The minutes are a plan for a {total}-minute lecture; the speaker view shows the current section's. The "
            "right column is the map of models: which model each slide runs, read from its requests. A slide on "
            "another model than the reference says so in orange under its title.",
            f"分钟数是按 {total} 分钟的课安排的；演讲者视图会显示当前部分的计划时间。右栏是模型一览：每页运行哪个模型，"
            "从该页的请求中读出。不使用参考模型的页面会在标题下方用橙色注明。",
        ),
        None,
        claim(
            (
                "{minutes|0} minutes in all, {optional|0} of them for a section that is optional as a whole.",
                "共 {minutes|0} 分钟，其中 {optional|0} 分钟属于整部分都可跳过的内容。",
            ),
            {"minutes": const(total), "optional": const(optional)},
            [],  # a plan, not a measurement: no ✓
        ),
    )
