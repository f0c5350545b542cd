"""/norms' caption over a covering array of the architecture (every pair of norm, placement, residual, activation
and dtype values meets in one of 40 settings) × seeds 0-3 × depths 1, 12 and 96, at small sizes: no sentence may
state a direction, a law or an overflow that the trace's own numbers, worked out here by hand, deny."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from app.config import VARIANTS, TraceConfig
from app.experiments.trace import run_trace
from app.figures import build
from app.numbers import fmt

from .grids import all_pairs, case_id

AXES = ("norm", "norm_position", "residual", "activation", "dtype")
SMALL = {"d_model": 16, "n_heads": 2, "seq_len": 8, "batch": 2}
SEEDS = (0, 1, 2, 3)
DEPTHS = (1, 12, 96)


def by_hand_fits(values: list[float], log: bool) -> dict[str, float]:
    """RMS errors of √(x₀² + c·l), x₀ + c·l and x₀·e^{c·l} (c ≥ 0, least squares through the origin), numpy's way."""
    v = np.asarray(values, dtype=float)
    layers = np.arange(len(v), dtype=float)
    curves = {}
    for key, p in (("sqrt", 0.5), ("line", 1.0)):
        lifted = (v / v.max()) ** (1 / p)
        c = max(0.0, float(layers @ (lifted - lifted[0]) / (layers @ layers)))
        curves[key] = v.max() * (lifted[0] + c * layers) ** p
    rate = max(0.0, float(layers @ np.log(v / v[0]) / (layers @ layers)))
    curves["exp"] = v[0] * np.exp(np.minimum(rate * layers, 700))
    return {key: rms(v, curve, log) for key, curve in curves.items()}


def rms(values: Any, curve: Any, log: bool) -> float:
    v, f = np.asarray(values[1:], dtype=float), np.asarray(curve[1:], dtype=float)
    return float(np.sqrt(np.mean((np.log10(v) - np.log10(f)) ** 2 if log else (v - f) ** 2)))


def law_denials(cfg: dict[str, Any], act: list[float], text: str, dashed: list[float] | None) -> list[str]:
    """A law named (a dashed curve drawn) only where it fits by hand; 'no simple law' only where none does."""
    start = cfg["depth"] // 4 if cfg["norm_position"] == "mix" and cfg["norm"] != "none" else 0
    values = act[start:]
    if len(values) < 4 or min(values) <= 0:
        return ["a law on fewer than 3 blocks"] if dashed is not None else []
    log = math.log10(max(values) / min(values)) > 3
    spread = math.log10(max(values) / min(values)) if log else max(values) - min(values)
    errors = by_hand_fits(values, log)
    if dashed is not None:
        named = rms(values, dashed, log)
        rivals = sorted(errors.values())
        rival = rivals[1] if math.isclose(named, rivals[0], rel_tol=1e-6, abs_tol=1e-12) else rivals[0]
        if not (named <= 0.1 * spread + 1e-12 and named <= 0.8 * rival + 1e-12):
            return [f"law drawn with error {named:.3g}, range {spread:.3g}, next best {rival:.3g}"]
    elif "No simple law fits" in text:
        for key, error in errors.items():
            others = min(e for k, e in errors.items() if k != key)
            if others > 0 and error <= min(0.1 * spread, 0.8 * others):
                return [f"'no simple law' but {key} fits by hand ({error:.3g} vs {others:.3g}, range {spread:.3g})"]
    return []


def denials(trace: dict[str, Any], text: str, dashed: list[float] | None) -> list[str]:
    """Every sentence of an English caption its trace's numbers deny, worked out from the trace alone."""
    cfg = trace["config"]
    act = [trace["embedding"]["act_norm"], *(layer["act_norm"] for layer in trace["layers"])]
    peak = [trace["embedding"]["act_max_abs"], *(layer["act_max_abs"] for layer in trace["layers"])]
    bad = [k for k, (a, m) in enumerate(zip(act, peak, strict=True)) if not all(map(_finite, (a, m)))]
    found: list[str] = []
    if "keeps getting longer" in text or "snowballs" in text:
        found.append("an unconditional growth sentence")
    if cfg["residual"] == "none" and "after the add" in text:
        found.append("'after the add' without a shortcut")
    if "from layer 1 to layer 1" in text:
        found.append("layer 1 compared with itself")
    said = re.search(r"inf or NaN.*?layer (\d+)|from layer (\d+) on they are inf", text)
    if bad and not said:
        found.append(f"overflow at layer {bad[0]} not stated")
    if said and (not bad or int(said.group(1) or said.group(2)) != bad[0]):
        found.append(f"overflow stated at {said.groups()} but the first non-finite layer is {bad[:1]}")
    pinned = cfg["norm_position"] == "post" and VARIANTS["norm"][cfg["norm"]].pins_token
    if bad or (act[-1] == 0):
        return found + (["a law on an overflowed stream"] if dashed is not None else [])
    r = act[-1] / act[0]
    word = "grew" if r > 1.2 else "shrank" if r < 1 / 1.2 else "stayed within"
    if pinned:
        worst = max(abs(v / math.sqrt(cfg["d_model"]) - 1) for v in act[1:])
        percent = re.search(r"within ([\d.]+)% of √", text)
        if percent is None or 100 * worst > max(float(percent[1]), 0.01) * 1.005:
            found.append(f"pinned within {percent and percent[1]}% stated, {100 * worst:.3g}% measured")
    elif word not in text or f"×{fmt(r)}" not in text:
        found.append(f"direction: measured {word} ×{fmt(r)}, caption: {text[:160]}")
    if dashed is not None and (pinned or word != "grew"):
        found.append(f"a law drawn on a stream that {word}")
    return found + law_denials(cfg, act, text, dashed)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def dashed_curve(figure: dict[str, Any]) -> list[float] | None:
    curves = [trace["y"] for trace in figure["data"] if trace["line"]["dash"] == "dash" and trace["mode"] == "lines"]
    laws = [y for y in curves if len(y) > 2]  # reference lines (√d, format limits) have two points
    return laws[0] if laws else None


@pytest.mark.parametrize("setting", all_pairs(AXES), ids=case_id)
def test_the_norms_caption_says_only_what_its_numbers_show(setting):
    for depth in DEPTHS:
        for seed in SEEDS:
            trace = run_trace(TraceConfig(**SMALL, **setting, depth=depth, seed=seed))
            english, chinese = build("norms", trace, "en"), build("norms", trace, "zh")
            found = denials(trace, english.caption, dashed_curve(english.figure))
            assert found == [], (depth, seed, found, english.caption)
            assert english.claim == chinese.claim and chinese.caption != english.caption
