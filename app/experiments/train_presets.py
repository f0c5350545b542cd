"""Named training comparisons for the /train page, found by real runs (see README, "Training lab").

Each preset is a list of architecture presets from app.config (Post-LN, Pre-LN, DeepNorm, ReZero, ...)
on one shared model size, plus the training settings they share. The captions describe what the runs
did when the presets were chosen (torch 2.13 CPU, seed 0); the page always shows the numbers of the
run it just made, never these words' numbers.
"""

from __future__ import annotations

from typing import Any

from ..config import PRESETS, TraceConfig, preset_config
from .train import TrainRequest

# Run kinds: every architecture preset of app.config (pre_ln_2017 is Post-LN's fair partner: same init), plus
# Post-LN with GPT-2's initialisation, which separates the norm's position from the size of the branches, and
# the 2017 Pre-LN recipe without its shortcut (a norm in every block, no residual: the lecture's training slide).
EXTRA_KINDS: dict[str, dict[str, Any]] = {
    "post_ln_gpt2": {
        "arch": "post_ln",
        "overrides": {"init": "gpt2", "activation": "gelu"},
        "label": "Post-LN, GPT-2 init (small branches)",
        "label_zh": "Post-LN，GPT-2 初始化（分支很小）",
    },
    # GPT-2 (Pre-LN) with one thing changed: each pairs with "pre_ln" in a preset below.
    "pre_ln_plain": {
        "arch": "pre_ln",
        "overrides": {"residual": "none"},
        "label": "GPT-2 without the residual (plain stack)",
        "label_zh": "去掉残差的 GPT-2（普通堆叠）",
    },
    "pre_ln_parallel": {
        "arch": "pre_ln",
        "overrides": {"block": "parallel"},
        "label": "GPT-2 with parallel blocks (GPT-J)",
        "label_zh": "并行块的 GPT-2（GPT-J）",
    },
    "pre_ln_batchnorm": {
        "arch": "pre_ln",
        "overrides": {"norm": "batchnorm"},
        "label": "GPT-2 with BatchNorm",
        "label_zh": "使用 BatchNorm 的 GPT-2",
    },
    "pre_ln_dense": {
        "arch": "pre_ln",
        "overrides": {"residual": "dense"},
        "label": "GPT-2 with dense connections (DenseFormer)",
        "label_zh": "密集连接的 GPT-2（DenseFormer）",
    },
    **{
        f"post_ln_{depth}": {
            "arch": "post_ln",
            "overrides": {"depth": depth},
            "label": f"Post-LN (2017), {depth} blocks",
            "label_zh": f"Post-LN（2017），{depth} 块",
        }
        for depth in (6, 12, 24)
    },
    # The 2017 Pre-LN recipe without its shortcut: a norm in every block, no residual (the lecture's training slide).
    "pre_ln_2017_no_shortcut": {
        "arch": "pre_ln_2017",
        "overrides": {"residual": "none"},
        "label": "Pre-LN, 2017 recipe, without the shortcut",
        "label_zh": "Pre-LN，2017 配方，去掉捷径",
    },
}
RUN_KINDS: dict[str, dict[str, Any]] = {
    **{key: {"arch": key, "overrides": {}, "label": p["name"], "label_zh": p["name_zh"]} for key, p in PRESETS.items()},
    **EXTRA_KINDS,
}

# Deep enough that the 2017 Post-LN recipe stops learning, small enough to train in ~15 s a run on one core.
DEEP = {"depth": 12, "d_model": 64, "n_heads": 4, "seq_len": 16, "vocab_size": 16, "batch": 16, "seed": 0}
SETTINGS = {"task": "copy", "steps": 300, "lr": 1e-3, "warmup_steps": 0, "optimizer": "adam", "clip": None, "seed": 0}

TRAIN_PRESETS: dict[str, dict[str, Any]] = {
    "post_vs_pre": {
        "name": "12 blocks, no warm-up: Post-LN vs Pre-LN",
        "name_zh": "12 块、无预热：Post-LN 对比 Pre-LN",
        "caption": (
            "Same 12-block stack, same 2017 initialisation (Xavier, ReLU), same data, Adam at lr 1e-3 from step "
            "1: only the norm's place differs. When we ran it, Post-LN never left the loss of a uniform guess "
            "and scored at chance on held-out sequences; it did not blow up, it just did not learn. Pre-LN "
            "copied every held-out sequence perfectly."
        ),
        "caption_zh": (
            "同一个 12 块的模型、同样的 2017 初始化（Xavier、ReLU）、同样的数据、从第 1 步起就用学习率 1e-"
            "3 的 Adam：只有归一化的位置不同。我们运行时，Post-LN 的损失始终停在均匀猜测的水平，在留出序列上的准确率只"
            "有随机水平；它没有发散，只是学不会。Pre-LN 则完美复制了每个留出序列。"
        ),
        "runs": ["post_ln", "pre_ln_2017"],
        "base": DEEP,
        "settings": {},
    },
    "warmup": {
        "name": "The same, with 100 warm-up steps",
        "name_zh": "同上，预热 100 步",
        "caption": (
            "The same pair, with the learning rate ramped up linearly over the first 100 steps. When we ran it, "
            "warm-up got Post-LN moving: its loss fell below the uniform guess and it predicted a good part of "
            "the answer tokens, but after 300 steps it still got no whole answer right, while Pre-LN was again "
            "perfect. Warm-up helps Post-LN; it does not make it as easy to train."
        ),
        "caption_zh": (
            "同样两个模型，学习率在前 100 步线性升高。我们运行时，预热让 Post-LN 动了起来：损失降到均匀猜测以下，能预测"
            "出相当一部分答案词元，但 300 步后整句全对的比例仍为 0%，而 Pre-LN 再次完美。预热对 Post-LN 有帮助"
            "，但不能让它像 Pre-LN 一样好训练。"
        ),
        "runs": ["post_ln", "pre_ln_2017"],
        "base": DEEP,
        "settings": {"warmup_steps": 100},
    },
    "fixes": {
        "name": "12 blocks: what rescues Post-LN",
        "name_zh": "12 块：什么能救回 Post-LN",
        "caption": (
            "Post-LN (2017) beside three ways to make a deep stack train without warm-up: DeepNorm (up-weighted "
            "shortcut, down-scaled branches), ReZero (no norm, every block starts as the identity) and Post-LN "
            "with GPT-2's small initialisation. When we ran it, all three learned to copy perfectly, DeepNorm "
            "and ReZero fastest. Note the last one: at this depth the failure of Post-LN is as much about the "
            "size of the branches at the start as about the norm's position."
        ),
        "caption_zh": (
            "Post-LN（2017）与三种无需预热就能训练深层模型的办法并排：DeepNorm（放大捷径、缩小分支）、ReZero"
            "（不用归一化，每个块开始时都是恒等映射）以及使用 GPT-2 小初始化的 Post-LN。我们运行时，三者都学会了完美复"
            "制，DeepNorm 和 ReZero 最快。注意最后一个：在这个深度，Post-LN 的失败既取决于归一化的位置，也取"
            "决于分支在开始时的大小。"
        ),
        "runs": ["post_ln", "deepnorm", "rezero", "post_ln_gpt2"],
        "base": DEEP,
        "settings": {},
    },
    "shallow": {
        "name": "Control: 6 blocks",
        "name_zh": "对照：6 块",
        "caption": (
            "The first comparison with 6 blocks instead of 12. When we ran it, both learned to copy perfectly "
            "within 300 steps: at this scale Post-LN's trouble appears with depth."
        ),
        "caption_zh": (
            "把第一个对比的 12 块换成 6 块。我们运行时，两者都在 300 步内学会了完美复制：在这个规模下，Post-LN 的"
            "麻烦随深度出现。"
        ),
        "runs": ["post_ln", "pre_ln_2017"],
        "base": {**DEEP, "depth": 6},
        "settings": {},
    },
    "deeper": {
        "name": "24 blocks with warm-up",
        "name_zh": "24 块，带预热",
        "caption": (
            "24 blocks with 100 warm-up steps. When we ran it, warm-up was no longer enough: Post-LN stayed at "
            "the uniform guess for all 300 steps, while Pre-LN learned to copy perfectly. The longest preset: "
            "about 30 s on two idle cores."
        ),
        "caption_zh": (
            "24 块，预热 100 步。我们运行时，预热已经不够了：Post-LN 在全部 300 步里都停在均匀猜测的水平，而 P"
            "re-LN 学会了完美复制。这是最慢的预设：在两个空闲的核上约 30 秒。"
        ),
        "runs": ["post_ln", "pre_ln_2017"],
        "base": {**DEEP, "depth": 24},
        "settings": {"warmup_steps": 100},
    },
    "residual": {
        "name": "12 blocks: with and without the residual",
        "name_zh": "12 块：有残差与无残差",
        "caption": (
            "GPT-2 (Pre-LN, GPT-2 initialisation, GELU) with and without the shortcut, nothing else changed. When we ran "
            "it, the residual stack's loss fell from 2.82 to 0.016 and it copied every held-out sequence; the plain "
            "stack stayed at the loss of a uniform guess over the 15 symbols (ln 15 ≈ 2.71; 2.72 after 300 steps) "
            "and scored at chance (7% of held-out tokens): it never started to learn."
        ),
        "caption_zh": (
            "GPT-2（Pre-LN、GPT-2 初始化、GELU）有捷径与没有捷径，其他都不变。我们运行时，有残差的模型损失从 2.82 "
            "降到 0.016，复制对了每个留出序列；普通堆叠的损失一直停在对 15 个符号均匀猜测的水平（ln 15 ≈ 2.71；"
            "300 步后为 2.72），准确率只有随机水平（留出词元的 7%）：它根本没有开始学习。"
        ),
        "runs": ["pre_ln", "pre_ln_plain"],
        "base": DEEP,
        "settings": {},
    },
    "rmsnorm": {
        "name": "RMSNorm vs LayerNorm",
        "name_zh": "RMSNorm 对比 LayerNorm",
        "caption": (
            "GPT-2 with LayerNorm against the same model with RMSNorm (LLaMA's norm: no mean, no shift), nothing else "
            "changed. When we ran it, both copied every held-out sequence and ended at the same loss (0.016); RMSNorm "
            "was a little behind halfway (0.27 against 0.18). Dropping the mean cost nothing the model "
            "could learn here."
        ),
        "caption_zh": (
            "使用 LayerNorm 的 GPT-2 与换成 RMSNorm（LLaMA 的归一化：不减均值、没有偏移）的同一模型，其他都不变。"
            "我们运行时，两者都复制对了每个留出序列，最终损失相同（0.016）；RMSNorm 在中途稍慢（0.27 对 "
            "0.18）。在这里，去掉均值并没有让模型少学到什么。"
        ),
        "runs": ["pre_ln", "llama"],
        "base": DEEP,
        "settings": {},
    },
    "parallel": {
        "name": "Parallel vs sequential blocks",
        "name_zh": "并行块对比串行块",
        "caption": (
            "Sequential blocks (attention, then the FFN reads its result) against parallel blocks, x + attn(N(x)) + "
            "ffn(N(x)) with one shared norm (GPT-J, PaLM). When we ran it, the loss curves lay almost on top of each "
            "other (0.18 against 0.19 halfway, 0.016 for both at the end) and both copied every held-out sequence: "
            "at this size the FFN lost nothing by not reading attention's output within the block."
        ),
        "caption_zh": (
            "串行块（先注意力，前馈再读取它的结果）与并行块 x + attn(N(x)) + ffn(N(x))（两个分支共用一个归一化；"
            "GPT-J、PaLM）对比。我们运行时，两条损失曲线几乎重合（中途 0.18 对 0.19，最终都是 0.016），"
            "两者都复制对了每个留出序列：在这个规模下，前馈在块内不读取注意力的输出并没有损失。"
        ),
        "runs": ["pre_ln", "pre_ln_parallel"],
        "base": DEEP,
        "settings": {},
    },
    "post_ln_depth": {
        "name": "Post-LN at 6, 12 and 24 blocks",
        "name_zh": "6、12、24 块的 Post-LN",
        "caption": (
            "The 2017 Post-LN recipe (Xavier, ReLU, Adam at 1e-3 from step 1) at 6, 12 and 24 blocks. When we ran it, "
            "6 blocks learned to copy perfectly (loss 0.004), while 12 and 24 blocks stayed at the uniform guess "
            "(about 2.7) and scored at chance. Runs in between, made the same way, put the edge at about 10 blocks: "
            "8 blocks still got there late (0.025 after 300 steps), 10 blocks only partly (loss 2.0, no whole answer "
            "right). At this scale Post-LN stops training between 8 and 12 blocks."
        ),
        "caption_zh": (
            "2017 年的 Post-LN 配方（Xavier、ReLU、从第 1 步起学习率 1e-3 的 Adam）分别用 6、12、24 块。我们运行时，"
            "6 块学会了完美复制（损失 0.004），12 块和 24 块一直停在均匀猜测的水平（约 2.7），准确率只有随机水平。"
            "用同样方法补跑的中间深度把分界放在 10 块左右：8 块仍在后期学会（300 步后 0.025），10 块只学会了一部分"
            "（损失 2.0，整句全对的比例为 0%）。在这个规模下，Post-LN 在 8 到 12 块之间不再能训练。"
        ),
        "runs": ["post_ln_6", "post_ln_12", "post_ln_24"],
        "base": DEEP,
        "settings": {},
    },
    "batchnorm": {
        "name": "BatchNorm vs LayerNorm on copy",
        "name_zh": "复制任务上 BatchNorm 对比 LayerNorm",
        "caption": (
            "GPT-2 with LayerNorm against the same model with BatchNorm (statistics per channel over the 16 sequences "
            "× 16 positions of each batch). When we ran it, BatchNorm learned too: slower at first (0.77 against 0.18 "
            "halfway), but it reached 0.02 and, scored in eval mode with its running averages, copied every "
            "held-out sequence. On this fixed-length task its trouble is not training: see the BatchNorm page for "
            "what it costs (batch dependence, a train/eval gap, padding)."
        ),
        "caption_zh": (
            "使用 LayerNorm 的 GPT-2 与换成 BatchNorm（每个通道在每批 16 个序列 × 16 个位置上求统计量）的同一模型。"
            "我们运行时，BatchNorm 也学会了：一开始较慢（中途 0.77 对 0.18），但最终降到 0.02，并且在评估模式下"
            "（用滑动平均）复制对了每个留出序列。在这个定长任务上，它的问题不在于训练：它的代价见 BatchNorm 页"
            "（依赖同批样本、训练与评估不一致、填充）。"
        ),
        "runs": ["pre_ln", "pre_ln_batchnorm"],
        "base": DEEP,
        "settings": {},
    },
    "dense": {
        "name": "Dense connections (DenseFormer) vs the residual",
        "name_zh": "密集连接（DenseFormer）对比残差",
        "caption": (
            "GPT-2 with and without DenseFormer's connections: each block reads a learned weighted average of the "
            "embedding and every earlier block's output, starting as the plain residual stack (90 extra weights for "
            "12 blocks). When we ran it, the dense stack was a little ahead halfway (0.12 against 0.18) "
            "and both ended in the same place (0.015 against 0.016, every held-out sequence copied). More paths for "
            "information, a few more parameters and multiply-adds; at 12 blocks little to gain."
        ),
        "caption_zh": (
            "有与没有 DenseFormer 连接的 GPT-2：每个块读取嵌入和之前所有块输出的可学习加权平均，初始时就是普通残差模型"
            "（12 块多 90 个权重）。我们运行时，密集连接的模型在中途稍快（0.12 对 0.18），两者最终相同"
            "（0.015 对 0.016，每个留出序列都复制对了）。信息通路更多，参数和乘加略多；在 12 块时收益很小。"
        ),
        "runs": ["pre_ln", "pre_ln_dense"],
        "base": DEEP,
        "settings": {},
    },
}


def kind_config(kind: str, base: TraceConfig) -> TraceConfig:
    spec = RUN_KINDS[kind]
    cfg = preset_config(spec["arch"], base)
    return TraceConfig(**{**cfg.model_dump(), **spec["overrides"]})  # validated: an override may change the depth


def preset_runs(key: str) -> list[TraceConfig]:
    preset = TRAIN_PRESETS[key]
    base = TraceConfig(**preset["base"])
    return [kind_config(kind, base) for kind in preset["runs"]]


def preset_settings(key: str) -> dict[str, Any]:
    return {**SETTINGS, **TRAIN_PRESETS[key]["settings"]}


def preset_request(key: str) -> TrainRequest:
    return TrainRequest(runs=preset_runs(key), **preset_settings(key))


def presets_payload() -> list[dict[str, Any]]:
    """What the page needs: names, captions, labelled run configs and settings, in English and Chinese."""
    out = []
    for key, preset in TRAIN_PRESETS.items():
        runs = [
            {
                "kind": kind,
                "label": RUN_KINDS[kind]["label"],
                "label_zh": RUN_KINDS[kind]["label_zh"],
                "config": cfg.model_dump(),
            }
            for kind, cfg in zip(preset["runs"], preset_runs(key), strict=True)
        ]
        out.append(
            {
                "key": key,
                "name": preset["name"],
                "name_zh": preset["name_zh"],
                "caption": preset["caption"],
                "caption_zh": preset["caption_zh"],
                "runs": runs,
                "base": preset["base"],
                "settings": preset_settings(key),
            }
        )
    return out


def kinds_payload() -> list[dict[str, Any]]:
    """Run kinds for the page's run pickers: an app.config preset plus fixed overrides."""
    return [
        {
            "key": key,
            "arch": spec["arch"],
            "overrides": spec["overrides"],
            "label": spec["label"],
            "label_zh": spec["label_zh"],
        }
        for key, spec in RUN_KINDS.items()
    ]


def measure(keys: list[str] | None = None) -> None:
    """Re-run presets and print what happened (python -m app.experiments.train_presets [key ...])."""
    from .train import train_events
    from .train_curves import add_event, empty_answer

    for key in keys or list(TRAIN_PRESETS):
        kinds = TRAIN_PRESETS[key]["runs"]
        request = preset_request(key)
        answer = empty_answer(request.steps, request.task, [cfg.model_dump() for cfg in request.runs])
        for event in train_events(request):
            add_event(answer, event)
            if event["type"] == "done":
                curve = answer["runs"][event["run"]]["loss"]
                marks = [curve[min(len(curve) - 1, int(len(curve) * f))] for f in (0, 0.25, 0.5, 0.75, 1)]
                print(
                    f"{key:12s} {kinds[event['run']]:14s} diverged={event['diverged']} loss@0,25,50,75,100%="
                    f"{[round(m, 3) for m in marks]} eval_loss={event['eval_loss']:.3f} "
                    f"accuracy={event['accuracy']:.3f} whole={event['sequence_accuracy']:.3f}",
                    flush=True,
                )


if __name__ == "__main__":
    import sys

    import torch

    torch.set_num_threads(1)
    measure(sys.argv[1:])
