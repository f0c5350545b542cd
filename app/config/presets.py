"""Named presets: well-known architectures as a handful of TraceConfig fields, with bilingual names and one-line
descriptions. A preset fixes the architecture only; sizes, seed and dtype stay the caller's.
"""

from __future__ import annotations

from typing import Any

from .request import TraceConfig


def deepnorm_alpha(depth: int) -> float:
    """DeepNorm's shortcut scale for an N-block encoder: α = (2N)^(1/4) (Wang et al. 2022, DeepNet, Table 1)."""
    return (2 * depth) ** 0.25


# The fields a preset describes (the architecture); applying a preset resets them to their defaults first, and the
# rest (sizes, seed, dtype) stays as it was.
ARCH_FIELDS = (
    "block",
    "norm",
    "norm_position",
    "residual",
    "residual_scale",
    "activation",
    "init",
    "final_norm",
    "depth_scaled_norm",
)
# The lecture's reference model, where it differs from TraceConfig's defaults: 96 blocks, tanh (Xavier, d_model 64,
# seed 0, Pre-LN LayerNorm are the defaults); app/experiments/lecture/reference.py builds the deck's requests on it.
# /gradients opens on it (Page.defaults) and draws seeds 0-3: without the shortcut its verdict depends on the seed.
REFERENCE_MODEL: dict[str, Any] = {"depth": 96, "activation": "tanh"}

PRESETS: dict[str, dict[str, Any]] = {
    "post_ln": {
        "name": "Original Transformer (Post-LN)",
        "name_zh": "原始 Transformer（Post-LN）",
        "description": "Norm after the residual add, N(x + f(x)): every token is pinned to length √d, but gradients to early layers shrink with depth.",
        "description_zh": "残差相加之后再归一化 N(x + f(x))：每个词元的长度被固定为 √d，但传到前几层的梯度随深度变小。",
        "config": {"norm": "layernorm", "norm_position": "post", "init": "xavier", "activation": "relu"},
    },
    "pre_ln_2017": {
        "name": "Pre-LN, 2017 recipe",
        "name_zh": "Pre-LN，2017 配方",
        "description": "The 2017 Transformer (Xavier, ReLU) with only the norm moved inside the branch: Post-LN's fair partner in a side-by-side.",
        "description_zh": "2017 Transformer（Xavier、ReLU），只把归一化移进分支：与 Post-LN 并排对比时最公平的对照。",
        "config": {"norm": "layernorm", "norm_position": "pre", "init": "xavier", "activation": "relu"},
    },
    "pre_ln": {
        "name": "GPT-2 (Pre-LN)",
        "name_zh": "GPT-2（Pre-LN）",
        "description": "Norm inside the branch, x + f(N(x)): the shortcut carries gradients untouched, but the stream keeps growing.",
        "description_zh": "归一化放在分支内部 x + f(N(x))：捷径让梯度原样通过，但残差流越来越大。",
        "config": {"norm": "layernorm", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "llama": {
        "name": "LLaMA (Pre-RMSNorm)",
        "name_zh": "LLaMA（Pre-RMSNorm）",
        "description": "Pre-norm with RMSNorm: rescales by the root mean square only, no mean subtraction, no bias.",
        "description_zh": "使用 RMSNorm 的前置归一化：只按均方根缩放，不减均值、无偏置。",
        "config": {"norm": "rmsnorm", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "deepnorm": {
        "name": "DeepNorm",
        "name_zh": "DeepNorm",
        "description": "Post-LN with the shortcut up-weighted, N(αx + f(x)) with α = (2L)^(1/4), and smaller branch weights: Post-LN that trains deep.",
        "description_zh": "放大捷径的 Post-LN：N(αx + f(x))，α = (2L)^(1/4)，并缩小分支权重：可以训练很深的 Post-LN。",
        "config": {"norm": "layernorm", "norm_position": "post", "init": "deepnorm", "activation": "gelu"},
        "depth_dependent": {"residual_scale": "deepnorm_alpha"},
    },
    "rezero": {
        "name": "ReZero",
        "name_zh": "ReZero",
        "description": "No norm at all; x + a·f(x) with a learnable a that starts at 0, so every block starts as the identity.",
        "description_zh": "完全不用归一化；x + a·f(x)，可学习的 a 从 0 开始，所以每个块一开始都是恒等映射。",
        "config": {"norm": "none", "residual": "rezero", "init": "xavier", "activation": "gelu"},
    },
    "sandwich": {
        "name": "Sandwich / Peri-LN",
        "name_zh": "Sandwich / Peri-LN",
        "description": "Norm before and after each branch, x + N(f(N(x))): every update has a fixed size, so the stream grows gently.",
        "description_zh": "在每个分支前后都归一化 x + N(f(N(x)))：每次更新大小固定，残差流增长平缓。",
        "config": {"norm": "layernorm", "norm_position": "sandwich", "init": "gpt2", "activation": "gelu"},
    },
    "mix_ln": {
        "name": "Mix-LN",
        "name_zh": "Mix-LN",
        "description": "Post-LN in the first quarter of the blocks, Pre-LN after: healthier gradients in the deep layers.",
        "description_zh": "前四分之一的块用 Post-LN，其余用 Pre-LN：深层的梯度更健康。",
        "config": {"norm": "layernorm", "norm_position": "mix", "init": "gpt2", "activation": "gelu"},
    },
    "dyt": {
        "name": "No normalization (DyT)",
        "name_zh": "无归一化（DyT）",
        "description": "LayerNorm replaced by Dynamic Tanh, γ·tanh(αx) + β: squashes instead of normalizing (Zhu et al. 2025).",
        "description_zh": "用动态 Tanh γ·tanh(αx) + β 替代 LayerNorm：用压缩代替归一化（Zhu 等，2025）。",
        "config": {"norm": "dyt", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "plain": {
        "name": "Plain deep net (no residual)",
        "name_zh": "普通深层网络（无残差）",
        "description": "No shortcut and no norm: each layer's derivative multiplies the gradient, so it vanishes or explodes with depth.",
        "description_zh": "没有捷径也没有归一化：每层的导数都乘到梯度上，深度一大梯度就消失或爆炸。",
        "config": {"norm": "none", "residual": "none", "init": "xavier", "activation": "tanh"},
    },
}


def preset_config(key: str, base: TraceConfig | None = None) -> TraceConfig:
    """A preset applied on top of `base` (sizes, seed, dtype kept), resolved for base's depth."""
    base = base or TraceConfig()
    preset = PRESETS[key]
    defaults = TraceConfig.model_fields
    reset = {name: defaults[name].default for name in ARCH_FIELDS}
    update = {**reset, **preset["config"]}
    for field, rule in preset.get("depth_dependent", {}).items():
        if rule == "deepnorm_alpha":
            update[field] = round(deepnorm_alpha(base.depth), 6)
    return TraceConfig(**{**base.model_dump(), **update})


def presets_payload(base: TraceConfig | None = None) -> list[dict[str, Any]]:
    """Every preset resolved for base's depth, its config holding every ARCH_FIELDS value: the pages reset exactly
    the fields preset_config resets (static/js/presets.js reads them from these configs)."""
    base = base or TraceConfig()
    out = []
    for key, preset in PRESETS.items():
        cfg = preset_config(key, base).model_dump()
        texts = {name: preset[name] for name in ("name", "name_zh", "description", "description_zh")}
        out.append({"key": key, **texts, "config": {field: cfg[field] for field in ARCH_FIELDS}})
    return out
