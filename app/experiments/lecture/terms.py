"""The terms the deck teaches: where each is defined, and how to spot it on a slide, in both languages.

A term is a row of docs/glossary.md (its English cell is the key). DEFINED_ON names the slide that teaches it;
build_deck writes each slide's `defines` and the terms its visible words use (`uses`, found by the patterns below in
the title, the lead, the caption, the departs line, the equation, the question-and-answer box, the aside and the
chart's title and legend). tests/test_lecture_order.py fails when a slide uses a term a later slide defines, so the
deck cannot say "Pre-LN" before it has drawn what Pre-LN is. The title and the agenda are exempt: they preview.
"""

from __future__ import annotations

import re
from typing import Any

# glossary key -> (English pattern, Chinese pattern)
TERMS: dict[str, tuple[str, str]] = {
    "cross-entropy (nats)": (r"\bnats?\b", r"奈特"),
    "chain product": (r"chain product", r"链式乘积"),
    "shortcut (identity path)": (r"\bshortcut", r"捷径"),
    "residual stream": (r"\bstream\b", r"残差流"),
    "number format": (r"\b(?:b?float16)\b", r"b?float16"),
    "softmax saturation": (r"\bsaturat", r"饱和"),
    "LayerNorm (layer normalization)": (r"LayerNorm|\bLN\(", r"LayerNorm|层归一化|\bLN\("),
    "gain γ / shift β": (r"[γβ]", r"[γβ]"),
    "Pre-LN / Post-LN": (r"\b(?:Pre|Post)-LN\b", r"(?:Pre|Post)-LN"),
    "snowball": (r"snowball", r"滚雪球"),
    "increment (a block's update)": (r"\bincrements?\b", r"增量"),
    "warm-up (learning rate)": (r"warm-?up", r"预热"),
    "RMSNorm": (r"RMSNorm", r"RMSNorm"),
    "BatchNorm (batch normalization)": (r"BatchNorm", r"BatchNorm|批归一化"),
    "massive activation": (r"massive activation", r"巨大激活"),
}

# slide id -> the terms it teaches (its words say what the term means, and its chart shows it)
DEFINED_ON: dict[str, tuple[str, ...]] = {
    "model": ("cross-entropy (nats)",),
    "chain": ("chain product",),
    "shortcut": ("shortcut (identity path)",),
    "live-gradient": ("residual stream",),
    "float16": ("number format",),
    "softmax": ("softmax saturation",),
    "layernorm": ("LayerNorm (layer normalization)",),
    "gamma-beta": ("gain γ / shift β",),
    "block-diagram": ("Pre-LN / Post-LN",),
    "snowball": ("snowball",),
    "increments": ("increment (a block's update)",),
    "post-vs-pre-train": ("warm-up (learning rate)",),
    "rmsnorm": ("RMSNorm",),
    "batchnorm": ("BatchNorm (batch normalization)",),
    "real-sink": ("massive activation",),
}
PREVIEW = ("title", "agenda")  # they name what is to come


def visible_text(slide: dict[str, Any], lang: str) -> str:
    """The words a slide shows on screen in one language (not its speaker notes, not its settings line)."""
    parts = [slide["title"][lang], slide["text"][lang], slide["claim"]["statement"][lang]]
    parts += [case["statement"][lang] for case in slide["claim"].get("cases", [])]
    for key in ("departs", "aside", "offline_text", "predict"):
        if slide.get(key):
            parts.append(slide[key][lang])
    if slide.get("equation"):
        parts.append(slide["equation"])
    if slide.get("qa"):
        parts += [slide["qa"][k][lang] for k in ("why", "what", "cost")] + [slide["qa"]["how"]]
    chart = slide.get("chart") or {}
    if chart:
        parts.append(chart["title"][lang])
        for item in [*chart.get("series", []), *chart.get("labels", [])]:
            label = item.get("label", item) if isinstance(item, dict) else None
            if isinstance(label, dict) and lang in label:
                parts.append(label[lang])
        for key in ("x", "y"):
            if isinstance(chart.get(key), dict) and lang in chart[key]:
                parts.append(chart[key][lang])
        for panel in chart.get("panels", []):
            if isinstance(panel.get("y"), dict):
                parts.append(panel["y"][lang])
    return "\n".join(parts)


def terms_used(slide: dict[str, Any], lang: str) -> list[str]:
    text = visible_text(slide, lang)
    return [key for key, patterns in TERMS.items() if re.search(patterns[0 if lang == "en" else 1], text)]


def mark_terms(deck: list[dict[str, Any]]) -> None:
    """Write `defines` and `uses` (both languages together) into every slide of the deck, in place."""
    for slide in deck:
        slide["defines"] = list(DEFINED_ON.get(slide["id"], ()))
        slide["uses"] = sorted({key for lang in ("en", "zh") for key in terms_used(slide, lang)})


def used_before_defined(deck: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(slide id, language, term) for every term a slide uses before the slide that defines it."""
    defined: set[str] = set()
    late = []
    for slide in deck:
        defined |= set(slide.get("defines", ()))
        if slide["id"] in PREVIEW:
            continue
        for lang in ("en", "zh"):
            late += [(slide["id"], lang, key) for key in terms_used(slide, lang) if key not in defined]
    return late
