"""The one source of truth for a model: the request model, its bounds and the named presets.

The API schema (`/api/schema`), the page controls and the URL query keys are all derived
from `TraceConfig`; nothing here is retyped in JavaScript.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Arch = Literal["transformer", "mlp"]
Norm = Literal["layernorm", "rmsnorm", "scalenorm", "dyt", "none"]
NormPosition = Literal["pre", "post", "sandwich", "mix"]
Residual = Literal["identity", "none", "rezero", "highway"]
Activation = Literal["gelu", "relu", "tanh", "sigmoid"]
Init = Literal["xavier", "gpt2", "deepnorm", "torch"]
DType = Literal["float32", "bfloat16", "float16"]

# A request must stay cheap enough that a 2-core laptop keeps answering everybody else.
# Units: multiply-accumulates of one forward pass, and parameters.
MAX_FORWARD_MACS = 3.0e9
MAX_PARAMETERS = 40_000_000
MAX_ACTIVATION_FLOATS = 100_000_000
MAX_DEPTH = 128  # blocks; the sweep, the presets' depth query and the pages share it


def labelled_field(default: Any, label: str, label_zh: str, help: str, help_zh: str, group: str, **bounds: Any) -> Any:
    """A field whose English and Chinese labels travel with its bounds into the JSON schema."""
    extra = {"label": label, "label_zh": label_zh, "help_zh": help_zh, "group": group}
    return Field(default, description=help, json_schema_extra=extra, **bounds)


class TraceConfig(BaseModel):
    """Everything that defines one model and its synthetic batch."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: Arch = labelled_field(
        "transformer", "Architecture", "架构",
        "transformer: embedding, L attention+FFN blocks, head; mlp: L blocks of Linear + activation.",
        "transformer：嵌入、L 个注意力+前馈块、输出头；mlp：L 个线性层+激活函数。", "model")
    depth: int = labelled_field(
        12, "Depth (blocks)", "深度（块数）", "Number of blocks L.", "块的数量 L。", "model", ge=1, le=MAX_DEPTH)
    norm: Norm = labelled_field(
        "layernorm", "Normalization", "归一化",
        "Which normalization layer: LayerNorm, RMSNorm, ScaleNorm (g·x/‖x‖), DyT (γ·tanh(αx)+β) or none.",
        "归一化层：LayerNorm、RMSNorm、ScaleNorm（g·x/‖x‖）、DyT（γ·tanh(αx)+β）或不使用。", "norm")
    norm_position: NormPosition = labelled_field(
        "pre", "Norm position", "归一化位置",
        "pre: x + f(N(x)); post: N(x + f(x)) (2017 original); sandwich: x + N(f(N(x))) (Peri-LN); "
        "mix: Post-LN in the first ⌊L/4⌋ blocks, Pre-LN after (Mix-LN).",
        "pre：x + f(N(x))；post：N(x + f(x))（2017 原版）；sandwich：x + N(f(N(x)))（Peri-LN）；"
        "mix：前 ⌊L/4⌋ 块用 Post-LN，其后用 Pre-LN（Mix-LN）。", "norm")
    final_norm: bool = labelled_field(
        True, "Final norm", "最终归一化",
        "Normalize the stream once more before the head (Pre-LN, Sandwich, Mix-LN; Post-LN already ends on a norm).",
        "在输出头之前再归一化一次（Pre-LN、Sandwich、Mix-LN；Post-LN 本身以归一化结尾）。", "norm")
    depth_scaled_norm: bool = labelled_field(
        False, "Depth-scaled norm", "按深度缩放归一化",
        "Divide each pre-norm's output by √l at block l (LayerNorm Scaling, 'The Curse of Depth', 2025).",
        "在第 l 块把每个前置归一化的输出除以 √l（LayerNorm Scaling，《The Curse of Depth》，2025）。", "norm")
    residual: Residual = labelled_field(
        "identity", "Residual", "残差连接",
        "identity: αx + f(x); none: f(x) only (plain stack); rezero: x + a·f(x), a starts at 0; "
        "highway: T·f(x) + (1−T)·x with a learned gate T.",
        "identity：αx + f(x)；none：只有 f(x)（普通堆叠）；rezero：x + a·f(x)，a 初始为 0；"
        "highway：T·f(x) + (1−T)·x，门控 T 可学习。", "residual")
    residual_scale: float = labelled_field(
        1.0, "Shortcut scale α", "捷径缩放 α",
        "Multiplies the shortcut: αx + f(x). DeepNorm uses α = (2L)^(1/4).",
        "乘在捷径上：αx + f(x)。DeepNorm 取 α = (2L)^(1/4)。", "residual", gt=0.0, le=16.0)
    activation: Activation = labelled_field(
        "gelu", "Activation", "激活函数", "Non-linearity inside the FFN / MLP block.",
        "前馈 / MLP 块中的非线性函数。", "model")
    init: Init = labelled_field(
        "xavier", "Initialization", "初始化",
        "xavier: Xavier-uniform, zero biases (2017 Transformer); gpt2: N(0, 0.02), branch outputs ÷√(2L); "
        "deepnorm: Xavier with FFN/value/output weights × (8L)^(-1/4) (Wang et al. 2022); torch: PyTorch defaults.",
        "xavier：Xavier 均匀分布、偏置为 0（2017 Transformer）；gpt2：N(0, 0.02)，分支输出层 ÷√(2L)；"
        "deepnorm：Xavier，且 FFN/value/输出权重 × (8L)^(-1/4)（Wang 等，2022）；torch：PyTorch 默认。", "model")
    dtype: DType = labelled_field(
        "float32", "Number format", "数值格式",
        "Run the whole model in this format on the CPU, so overflow and swamping really happen.",
        "整个模型在 CPU 上以此格式运行，溢出和精度吞没会真实发生。", "numerics")
    d_model: int = labelled_field(
        64, "Width d_model", "宽度 d_model", "Width of the residual stream.", "残差流的宽度。", "size", ge=4, le=512)
    n_heads: int = labelled_field(
        4, "Attention heads", "注意力头数", "Number of attention heads; must divide d_model.",
        "注意力头的数量；必须整除 d_model。", "size", ge=1, le=16)
    seq_len: int = labelled_field(
        32, "Sequence length", "序列长度", "Tokens per sequence.", "每个序列的词元数。", "size", ge=2, le=256)
    batch: int = labelled_field(
        4, "Batch size", "批大小", "Sequences per batch.", "每批的序列数。", "size", ge=1, le=64)
    vocab_size: int = labelled_field(
        128, "Vocabulary", "词表大小", "Vocabulary size of the random-token task.",
        "随机词元任务的词表大小。", "size", ge=2, le=4096)
    seed: int = labelled_field(
        0, "Seed", "随机种子", "Seed for the weights and the synthetic batch.", "权重和合成数据的随机种子。",
        "numerics", ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _check_consistency(self) -> "TraceConfig":
        if self.arch == "transformer" and self.d_model % self.n_heads:
            divisors = [h for h in range(1, 17) if self.d_model % h == 0]
            raise ValueError(f"n_heads: must divide d_model ({self.d_model}); got {self.n_heads}"
                             f" | allowed: divisors of d_model up to 16: {', '.join(map(str, divisors))}")
        for field, value, limit in (
            ("depth", forward_macs(self), MAX_FORWARD_MACS),
            ("depth", parameter_count(self), MAX_PARAMETERS),
            ("depth", activation_floats(self), MAX_ACTIVATION_FLOATS),
        ):
            if value > limit:
                raise ValueError(
                    f"{field}: the model is too large for this server (depth × d_model² × seq_len × batch "
                    f"budget): {value:.3g} > {limit:.3g}; lower depth, d_model, seq_len or batch"
                    f" | allowed: forward multiply-adds <= {MAX_FORWARD_MACS:.3g}, parameters <= {MAX_PARAMETERS:.3g}, "
                    f"saved activations <= {MAX_ACTIVATION_FLOATS:.3g} floats")
        return self

    def with_depth(self, depth: int) -> "TraceConfig":
        return self.model_copy(update={"depth": depth})

    def cache_key(self) -> str:
        return self.model_dump_json()


def forward_macs(cfg: TraceConfig) -> float:
    """Multiply-accumulates of one forward pass (attention scores included)."""
    tokens = cfg.batch * cfg.seq_len
    if cfg.arch == "mlp":
        per_block = cfg.d_model**2 + (cfg.d_model**2 if cfg.residual == "highway" else 0)
        return float(tokens * cfg.depth * per_block)
    per_block = 12 * cfg.d_model**2 + 2 * cfg.seq_len * cfg.d_model
    if cfg.residual == "highway":
        per_block += 2 * cfg.d_model**2
    return float(tokens * (cfg.depth * per_block + cfg.d_model * cfg.vocab_size))


def parameter_count(cfg: TraceConfig) -> float:
    # A highway shortcut has its own gate, a d x d Linear, per unit: one unit per MLP block, two per Transformer block.
    gate = cfg.d_model**2 + cfg.d_model if cfg.residual == "highway" else 0
    if cfg.arch == "mlp":
        return float(cfg.depth * (cfg.d_model**2 + 4 * cfg.d_model + gate))
    embeddings = 2 * cfg.vocab_size * cfg.d_model + cfg.seq_len * cfg.d_model
    return float(cfg.depth * (12 * cfg.d_model**2 + 2 * gate) + embeddings)


def activation_floats(cfg: TraceConfig) -> float:
    """Floats autograd keeps for the backward pass (a generous estimate)."""
    tokens = cfg.batch * cfg.seq_len
    if cfg.arch == "mlp":
        return float(tokens * cfg.depth * 8 * cfg.d_model)
    per_block = 24 * cfg.d_model + 3 * cfg.n_heads * cfg.seq_len
    return float(tokens * (cfg.depth * per_block + 3 * cfg.vocab_size))


def deepnorm_alpha(depth: int) -> float:
    """DeepNorm's shortcut scale for an N-block encoder: α = (2N)^(1/4) (Wang et al. 2022, DeepNet, Table 1)."""
    return (2 * depth) ** 0.25


PRESETS: dict[str, dict[str, Any]] = {
    "post_ln": {
        "name": "Original Transformer (Post-LN)", "name_zh": "原始 Transformer（Post-LN）",
        "description": "Norm after the residual add, N(x + f(x)): every token is pinned to length √d, but gradients to early layers shrink with depth.",
        "description_zh": "残差相加之后再归一化 N(x + f(x))：每个词元的长度被固定为 √d，但传到前几层的梯度随深度变小。",
        "config": {"norm": "layernorm", "norm_position": "post", "init": "xavier", "activation": "relu"},
    },
    "pre_ln_2017": {
        "name": "Pre-LN, 2017 recipe", "name_zh": "Pre-LN，2017 配方",
        "description": "The 2017 Transformer (Xavier, ReLU) with only the norm moved inside the branch: Post-LN's fair partner in a side-by-side.",
        "description_zh": "2017 Transformer（Xavier、ReLU），只把归一化移进分支：与 Post-LN 并排对比时最公平的对照。",
        "config": {"norm": "layernorm", "norm_position": "pre", "init": "xavier", "activation": "relu"},
    },
    "pre_ln": {
        "name": "GPT-2 (Pre-LN)", "name_zh": "GPT-2（Pre-LN）",
        "description": "Norm inside the branch, x + f(N(x)): the shortcut carries gradients untouched, but the stream keeps growing.",
        "description_zh": "归一化放在分支内部 x + f(N(x))：捷径让梯度原样通过，但残差流越来越大。",
        "config": {"norm": "layernorm", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "llama": {
        "name": "LLaMA (Pre-RMSNorm)", "name_zh": "LLaMA（Pre-RMSNorm）",
        "description": "Pre-norm with RMSNorm: rescales by the root mean square only, no mean subtraction, no bias.",
        "description_zh": "使用 RMSNorm 的前置归一化：只按均方根缩放，不减均值、无偏置。",
        "config": {"norm": "rmsnorm", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "deepnorm": {
        "name": "DeepNorm", "name_zh": "DeepNorm",
        "description": "Post-LN with the shortcut up-weighted, N(αx + f(x)) with α = (2L)^(1/4), and smaller branch weights: Post-LN that trains deep.",
        "description_zh": "放大捷径的 Post-LN：N(αx + f(x))，α = (2L)^(1/4)，并缩小分支权重：可以训练很深的 Post-LN。",
        "config": {"norm": "layernorm", "norm_position": "post", "init": "deepnorm", "activation": "gelu"},
        "depth_dependent": {"residual_scale": "deepnorm_alpha"},
    },
    "rezero": {
        "name": "ReZero", "name_zh": "ReZero",
        "description": "No norm at all; x + a·f(x) with a learnable a that starts at 0, so every block starts as the identity.",
        "description_zh": "完全不用归一化；x + a·f(x)，可学习的 a 从 0 开始，所以每个块一开始都是恒等映射。",
        "config": {"norm": "none", "residual": "rezero", "init": "xavier", "activation": "gelu"},
    },
    "sandwich": {
        "name": "Sandwich / Peri-LN", "name_zh": "三明治 / Peri-LN",
        "description": "Norm before and after each branch, x + N(f(N(x))): every update has a fixed size, so the stream grows gently.",
        "description_zh": "在每个分支前后都归一化 x + N(f(N(x)))：每次更新大小固定，残差流增长平缓。",
        "config": {"norm": "layernorm", "norm_position": "sandwich", "init": "gpt2", "activation": "gelu"},
    },
    "mix_ln": {
        "name": "Mix-LN", "name_zh": "Mix-LN",
        "description": "Post-LN in the first quarter of the blocks, Pre-LN after: healthier gradients in the deep layers.",
        "description_zh": "前四分之一的块用 Post-LN，其余用 Pre-LN：深层的梯度更健康。",
        "config": {"norm": "layernorm", "norm_position": "mix", "init": "gpt2", "activation": "gelu"},
    },
    "dyt": {
        "name": "No normalization (DyT)", "name_zh": "无归一化（DyT）",
        "description": "LayerNorm replaced by Dynamic Tanh, γ·tanh(αx) + β: squashes instead of normalizing (Zhu et al. 2025).",
        "description_zh": "用动态 Tanh γ·tanh(αx) + β 替代 LayerNorm：用压缩代替归一化（Zhu 等，2025）。",
        "config": {"norm": "dyt", "norm_position": "pre", "init": "gpt2", "activation": "gelu"},
    },
    "plain": {
        "name": "Plain deep net (no residual)", "name_zh": "普通深层网络（无残差）",
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
    reset = {name: defaults[name].default for name in ("norm", "norm_position", "residual", "residual_scale",
                                                       "activation", "init", "final_norm", "depth_scaled_norm")}
    update = {**reset, **preset["config"]}
    for field, rule in preset.get("depth_dependent", {}).items():
        if rule == "deepnorm_alpha":
            update[field] = round(deepnorm_alpha(base.depth), 6)
    return TraceConfig(**{**base.model_dump(), **update})


def presets_payload(base: TraceConfig | None = None) -> list[dict[str, Any]]:
    base = base or TraceConfig()
    out = []
    for key, preset in PRESETS.items():
        cfg = preset_config(key, base)
        out.append({
            "key": key, "name": preset["name"], "name_zh": preset["name_zh"],
            "description": preset["description"], "description_zh": preset["description_zh"],
            "config": {k: v for k, v in cfg.model_dump().items() if k in {**preset["config"], **preset.get("depth_dependent", {})}
                       or k in ("norm", "norm_position", "residual", "residual_scale", "activation", "init")},
        })
    return out


def field_bounds(name: str, model: type[BaseModel] | None = None) -> str:
    """Human-readable allowed range of a field of `model` (default TraceConfig), e.g. '[1, 128]' or 'one of: pre, post'."""
    schema = _properties(model or TraceConfig).get(name, {})
    options = [option for option in schema.get("anyOf", []) if option.get("type") != "null"]
    if options:  # an optional field, e.g. TrainRequest.clip: its range, or null
        bounds = " or ".join(filter(None, (_schema_bounds(option) for option in options)))
        return f"{bounds} or null" if bounds else ""
    return _schema_bounds(schema)


@lru_cache(maxsize=32)
def _properties(model: type[BaseModel]) -> dict[str, Any]:
    """A model's schema properties, built once: a request with 20,000 bad keys must not rebuild it 20,000 times."""
    return model.model_json_schema()["properties"]


def _schema_bounds(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of: " + ", ".join(map(str, schema["enum"]))
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None or high is not None:
        left = "(" if "exclusiveMinimum" in schema else "["
        right = ")" if "exclusiveMaximum" in schema else "]"
        return f"{left}{low if low is not None else '-inf'}, {high if high is not None else 'inf'}{right}"
    if schema.get("type") == "boolean":
        return "true or false"
    if schema.get("type") == "array":
        text = f"a list of {schema.get('minItems', 0)} to {schema.get('maxItems', 'any number of')} items"
        items = schema.get("items", {})
        kind = {"number": "finite numbers", "integer": "integers"}.get(items.get("type"))
        if kind:  # what each item must be, e.g. "(finite numbers in [-1e+300, 1e+300])"
            inner = _schema_bounds(items)
            text += f" ({kind}{' in ' + inner if inner else ''})"
        return text
    return ""

