"""Named training comparisons for the /train page, found by real runs (see README, "Training lab").

Each preset is a list of architecture presets from app.config (Post-LN, Pre-LN, DeepNorm, ReZero, ...)
on one shared model size, plus the training settings they share. The captions describe what the runs
did when the presets were chosen (torch 2.13 CPU, seed 0); the page always shows the numbers of the
run it just made, never these words' numbers.
"""
from __future__ import annotations

from typing import Any

from app.config import PRESETS, TraceConfig, preset_config
from app.experiments.train import TrainRequest

# A deep, narrow stack that learns `copy` in a few hundred steps when it trains at all.
DEEP = {"depth": 24, "d_model": 64, "n_heads": 4, "seq_len": 16, "vocab_size": 16, "batch": 16}
SHALLOW = {**DEEP, "depth": 6}
SETTINGS = {"task": "copy", "steps": 300, "lr": 1e-3, "warmup_steps": 0, "optimizer": "adam", "clip": None, "seed": 0}

TRAIN_PRESETS: dict[str, dict[str, Any]] = {
    "deep_post_vs_pre": {
        "name": "24 blocks, no warm-up: Post-LN vs Pre-LN",
        "name_zh": "24 块、无预热：Post-LN 对比 Pre-LN",
        "caption": "Same 24-block stack, same data, Adam at lr 1e-3 from step 1. When we ran it, Pre-LN left the "
                   "plateau after about 100 steps and copied perfectly by step 300; Post-LN stayed at the loss of "
                   "a uniform guess (ln 15 ≈ 2.71) for all 300 steps: it did not blow up, it just never learned.",
        "caption_zh": "同一个 24 块的模型、同样的数据、从第 1 步起就用学习率 1e-3 的 Adam。我们运行时，Pre-LN 约 100 步后"
                      "走出平台期，到第 300 步能完美复制；Post-LN 在全部 300 步里一直停在均匀猜测的损失（ln 15 ≈ 2.71）："
                      "它没有发散，只是始终学不会。",
        "archs": ["post_ln", "pre_ln"], "base": DEEP, "settings": {},
    },
    "deep_warmup": {
        "name": "24 blocks with 100 warm-up steps",
        "name_zh": "24 块，预热 100 步",
        "caption": "The same pair with the learning rate ramped up linearly over the first 100 steps. When we ran it, "
                   "warm-up did not rescue Post-LN within 300 steps at this depth: it still sat at ln 15 ≈ 2.71, "
                   "while Pre-LN learned a little later than without warm-up.",
        "caption_zh": "同样两个模型，学习率在前 100 步线性升高。我们运行时，在这个深度下预热没能在 300 步内救回 Post-LN："
                      "它仍停在 ln 15 ≈ 2.71，而 Pre-LN 比不预热时学会得稍晚一些。",
        "archs": ["post_ln", "pre_ln"], "base": DEEP, "settings": {"warmup_steps": 100},
    },
    "deep_fixes": {
        "name": "24 blocks: DeepNorm and ReZero",
        "name_zh": "24 块：DeepNorm 与 ReZero",
        "caption": "Two other ways to train a deep stack, beside Post-LN and Pre-LN, no warm-up.",
        "caption_zh": "在 Post-LN 和 Pre-LN 之外，另外两种训练深层模型的办法，不预热。",
        "archs": ["post_ln", "deepnorm", "rezero", "pre_ln"], "base": DEEP, "settings": {},
    },
    "shallow_control": {
        "name": "Control: 6 blocks, Post-LN vs Pre-LN",
        "name_zh": "对照：6 块，Post-LN 对比 Pre-LN",
        "caption": "The same comparison with only 6 blocks. When we ran it, both learned to copy perfectly in 300 "
                   "steps: Post-LN's trouble is a deep-stack problem.",
        "caption_zh": "同样的对比，但只有 6 块。我们运行时，两者都在 300 步内学会了完美复制：Post-LN 的麻烦是深层模型才有的问题。",
        "archs": ["post_ln", "pre_ln"], "base": SHALLOW, "settings": {},
    },
}


def preset_runs(key: str) -> list[TraceConfig]:
    preset = TRAIN_PRESETS[key]
    base = TraceConfig(**preset["base"])
    return [preset_config(arch, base) for arch in preset["archs"]]


def preset_settings(key: str) -> dict[str, Any]:
    return {**SETTINGS, **TRAIN_PRESETS[key]["settings"]}


def preset_request(key: str) -> TrainRequest:
    return TrainRequest(runs=preset_runs(key), **preset_settings(key))


def presets_payload() -> list[dict[str, Any]]:
    """What the page needs: names, captions, labelled run configs and settings, in English and Chinese."""
    out = []
    for key, preset in TRAIN_PRESETS.items():
        runs = [{"arch": arch, "label": PRESETS[arch]["name"], "label_zh": PRESETS[arch]["name_zh"],
                 "config": cfg.model_dump()} for arch, cfg in zip(preset["archs"], preset_runs(key))]
        out.append({"key": key, "name": preset["name"], "name_zh": preset["name_zh"], "caption": preset["caption"],
                    "caption_zh": preset["caption_zh"], "runs": runs, "settings": preset_settings(key)})
    return out
