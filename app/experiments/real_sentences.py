"""A room of sentences: the built-in set every real-model claim is checked on, and what a set's traces show together.

One sentence is not a claim: over the eight English sentences SmolLM2's stream grows ×10.7 to ×17.6, and the
default sentence gives the smallest. The set holds eight English and eight Chinese sentences of 10 to 54 tokens:
prose, a question, numbers, a line of code with a newline (Sun et al. 2024 find massive activations on "\\n" too)
and a 34-character Chinese sentence. Each trace is reduced to the columns the set's charts draw (`summarise`);
`bands` gives per layer the median and the min-max band of each set.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

SENTENCES: dict[str, tuple[str, ...]] = {
    "en": (
        "The quick brown fox jumps over the lazy dog.",
        "Residual connections let the gradient flow straight back to the first layers.",
        "Layer normalization rescales every token's vector to a fixed size.",
        "She opened the window, and the cold morning air filled the small kitchen.",
        "In 1969, two astronauts walked on the Moon while millions watched on television.",
        "Water boils at one hundred degrees Celsius at sea level.",
        "Can you tell me how to get to the nearest train station?",
        "def add(a, b):\n    return a + b",
    ),
    "zh": (
        "残差连接让梯度可以直接流回浅层，层归一化则把每个向量拉回固定的尺度。",
        "今天早上下了一场大雨，街上的行人都撑着伞。",
        "我的奶奶每年夏天都在院子里种西红柿和向日葵。",
        "深度神经网络的训练往往需要大量的数据和计算资源。",
        "请问去最近的火车站怎么走？",
        "水在海平面上的沸点是一百摄氏度。",
        "他打开窗户，清晨的冷空气充满了小小的厨房。",
        "学习一门新的语言需要耐心，也需要每天坚持练习。",
    ),
}
SET_LANGS = tuple(SENTENCES)
# The set's charts: per layer the stream without the first token; per block the attention on the first token
# (causal models) or how far apart the text tokens end after the block's last norm (Post-LN).
BAND_COLUMNS = ("stream", "first_ratio", "sink", "text_spread")


def every_sentence() -> list[tuple[str, str]]:
    """(language, sentence) for the whole set, English first."""
    return [(lang, text) for lang in SET_LANGS for text in SENTENCES[lang]]


def summarise(trace: dict[str, Any], lang: str = "own") -> dict[str, Any]:
    """One sentence's trace reduced to what the set's charts and captions read."""
    stream = trace["stream"]["mean_without_first"]
    attention, post_ln, growth = trace.get("attention"), trace.get("post_ln"), trace["theory"].get("growth")
    return {
        "lang": lang,
        "text": trace["text"],
        "tokens": len(trace["tokens"]),
        "unknown": trace["unknown_tokens"],
        "stream": stream,
        "first_ratio": trace["summary"]["first_token_ratio"],
        "growth": growth["over_blocks"] if growth else None,
        "sink": attention["mass"] if attention else None,
        "uniform": attention["uniform"] if attention else None,
        "text_spread": post_ln["text_token_spread_after_norm"] if post_ln else None,
        "massive": _massive(trace),
    }


def _massive(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The largest coordinate after any block: its dimension, token, value, layer, and the first block after which
    that coordinate meets Sun et al.'s criterion at some token (None: it never does)."""
    massive = trace["massive"]
    if not massive["dimensions"]:
        return None
    row = massive["dimensions"][0]
    peak = max(range(1, len(row["stream"])), key=lambda layer: abs(row["stream"][layer]))
    hits = [hit["layer"] for hit in massive["found"] if hit["index"] == row["index"] and hit["layer"] >= 1]
    return {
        "index": row["index"],
        "token": row["token"],
        "value": row["stream"][peak],
        "layer": peak,
        "ratio": abs(row["stream"][peak]) / massive["median_abs"][peak] if massive["median_abs"][peak] else None,
        "first_block": min(hits) if hits else None,
    }


def band(columns: Sequence[Sequence[float | None] | None]) -> dict[str, list[float | None]] | None:
    """Per position: the median, the smallest and the largest value over the sentences (None where none is finite)."""
    present = [c for c in columns if c is not None]
    if not present:
        return None
    width = min(len(c) for c in present)

    def at(i: int) -> list[float]:
        return [float(c[i]) for c in present if c[i] is not None and math.isfinite(c[i])]  # type: ignore[arg-type]

    spots = [at(i) for i in range(width)]
    return {
        "median": [statistics.median(v) if v else None for v in spots],
        "low": [min(v) if v else None for v in spots],
        "high": [max(v) if v else None for v in spots],
    }


def bands(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per set language and column: the median and its min-max band over that set's sentences."""
    return {
        lang: {column: band([r[column] for r in rows if r["lang"] == lang]) for column in BAND_COLUMNS}
        for lang in SET_LANGS
    }


def spread(values: Sequence[float | None]) -> dict[str, float | None]:
    """The median, smallest and largest of some per-sentence numbers (None ignored)."""
    kept = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not kept:
        return {"median": None, "low": None, "high": None}
    return {"median": statistics.median(kept), "low": min(kept), "high": max(kept)}
