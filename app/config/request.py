"""The one source of truth for a model: `TraceConfig`, one enumerated field per axis with bounds and labels.

The API schema (`/api/schema`), the page controls and the URL query keys are all derived from it; nothing here is
retyped in JavaScript (pages read the bounds from the schema they are handed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from .budget import MAX_DEPTH, fits_budget
from .fields import labelled_field
from .variants import keys, listed_help

Arch = Literal["transformer", "mlp"]
if TYPE_CHECKING:  # a type checker sees the table's keys, written out; pydantic validates against the table itself
    from .variant_types import Block, Norm, NormPosition, Residual
else:
    Norm = Literal[keys("norm")]
    NormPosition = Literal[keys("norm_position")]
    Block = Literal[keys("block")]
    Residual = Literal[keys("residual")]
NORM_HELP = listed_help("norm", "Which normalization layer: ", "归一化层：")
Activation = Literal["gelu", "relu", "tanh", "sigmoid"]
Init = Literal["xavier", "gpt2", "deepnorm", "torch"]
DType = Literal["float32", "bfloat16", "float16"]


class TraceConfig(BaseModel):
    """Everything that defines one model and its synthetic batch."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: Arch = labelled_field(
        "transformer",
        "Architecture",
        "架构",
        "transformer: embedding, L attention+FFN blocks, head; mlp: L blocks of Linear + activation.",
        "transformer：嵌入、L 个注意力+前馈块、输出头；mlp：L 个线性层+激活函数。",
        "model",
    )
    depth: int = labelled_field(
        12, "Depth (blocks)", "深度（块数）", "Number of blocks L.", "块的数量 L。", "model", ge=1, le=MAX_DEPTH
    )
    block: Block = labelled_field(
        "sequential",
        "Block layout",
        "块的结构",
        "sequential: attention, then the FFN reads its result (two units, two norms); parallel: x + attn(N(x)) + ffn(N(x)), "
        "both branches read one shared norm (GPT-J, PaLM). The MLP has one branch per block: both are the same there.",
        "sequential：先注意力，前馈再读取它的结果（两个单元、两个归一化）；parallel：x + attn(N(x)) + ffn(N(x))，"
        "两个分支共用一个归一化（GPT-J、PaLM）。MLP 每块只有一个分支，两者相同。",
        "model",
    )
    norm: Norm = labelled_field("layernorm", "Normalization", "归一化", *NORM_HELP, "norm")
    norm_groups: int = labelled_field(
        8,
        "GroupNorm groups",
        "GroupNorm 分组数",
        "Groups of channels GroupNorm normalizes separately (used only by groupnorm); must divide d_model with at least "
        "2 channels a group. 1 group is LayerNorm.",
        "GroupNorm 分别归一化的通道组数（仅 groupnorm 使用）；必须整除 d_model，且每组至少 2 个通道。1 组就是 LayerNorm。",
        "norm",
        ge=1,
        le=256,
    )
    norm_position: NormPosition = labelled_field(
        "pre",
        "Norm position",
        "归一化位置",
        "pre: x + f(N(x)); post: N(x + f(x)) (2017 original); sandwich: x + N(f(N(x))) (Peri-LN); "
        "mix: Post-LN in the first ⌊L/4⌋ blocks, Pre-LN after (Mix-LN).",
        "pre：x + f(N(x))；post：N(x + f(x))（2017 原版）；sandwich：x + N(f(N(x)))（Peri-LN）；"
        "mix：前 ⌊L/4⌋ 块用 Post-LN，其后用 Pre-LN（Mix-LN）。",
        "norm",
    )
    final_norm: bool = labelled_field(
        True,
        "Final norm",
        "最终归一化",
        "Normalize the stream once more before the head (Pre-LN, Sandwich, Mix-LN; Post-LN already ends on a norm).",
        "在输出头之前再归一化一次（Pre-LN、Sandwich、Mix-LN；Post-LN 本身以归一化结尾）。",
        "norm",
    )
    depth_scaled_norm: bool = labelled_field(
        False,
        "Depth-scaled norm",
        "按深度缩放归一化",
        "Divide each pre-norm's output by √l at block l (LayerNorm Scaling, 'The Curse of Depth', 2025).",
        "在第 l 块把每个前置归一化的输出除以 √l（LayerNorm Scaling，《The Curse of Depth》，2025）。",
        "norm",
    )
    residual: Residual = labelled_field(
        "identity",
        "Residual",
        "残差连接",
        "identity: αx + f(x); none: f(x) only (plain stack); rezero: x + a·f(x), a starts at 0; "
        "highway: T·f(x) + (1−T)·x with a learned gate T; dense: αx + f(x) inside each block, and each block reads a "
        "learned weighted average of the embedding and every earlier block's output, starting as identity (DenseFormer).",
        "identity：αx + f(x)；none：只有 f(x)（普通堆叠）；rezero：x + a·f(x)，a 初始为 0；"
        "highway：T·f(x) + (1−T)·x，门控 T 可学习；dense：块内为 αx + f(x)，且每个块读取嵌入和之前所有块输出的"
        "可学习加权平均，初始时等同 identity（DenseFormer）。",
        "residual",
    )
    residual_scale: float = labelled_field(
        1.0,
        "Shortcut scale α",
        "捷径缩放 α",
        "Multiplies the shortcut: αx + f(x). DeepNorm uses α = (2L)^(1/4).",
        "乘在捷径上：αx + f(x)。DeepNorm 取 α = (2L)^(1/4)。",
        "residual",
        gt=0.0,
        le=16.0,
    )
    activation: Activation = labelled_field(
        "gelu",
        "Activation",
        "激活函数",
        "Non-linearity inside the FFN / MLP block.",
        "前馈 / MLP 块中的非线性函数。",
        "model",
    )
    init: Init = labelled_field(
        "xavier",
        "Initialization",
        "初始化",
        "xavier: Xavier-uniform, zero biases (2017 Transformer); gpt2: N(0, 0.02), branch outputs ÷√(2L); "
        "deepnorm: Xavier with FFN/value/output weights × (8L)^(-1/4) (Wang et al. 2022); torch: PyTorch defaults.",
        "xavier：Xavier 均匀分布、偏置为 0（2017 Transformer）；gpt2：N(0, 0.02)，分支输出层 ÷√(2L)；"
        "deepnorm：Xavier，且 FFN/value/输出权重 × (8L)^(-1/4)（Wang 等，2022）；torch：PyTorch 默认。",
        "model",
    )
    dtype: DType = labelled_field(
        "float32",
        "Number format",
        "数值格式",
        "Run the whole model in this format on the CPU, so overflow and swamping really happen.",
        "整个模型在 CPU 上以此格式运行，溢出和舍入丢失会真实发生。",
        "numerics",
    )
    d_model: int = labelled_field(
        64, "Width d_model", "宽度 d_model", "Width of the residual stream.", "残差流的宽度。", "size", ge=4, le=512
    )
    n_heads: int = labelled_field(
        4,
        "Attention heads",
        "注意力头数",
        "Number of attention heads; must divide d_model.",
        "注意力头的数量；必须整除 d_model。",
        "size",
        ge=1,
        le=16,
    )
    seq_len: int = labelled_field(
        32, "Sequence length", "序列长度", "Tokens per sequence.", "每个序列的词元数。", "size", ge=2, le=256
    )
    batch: int = labelled_field(
        4, "Batch size", "批大小", "Sequences per batch.", "每批的序列数。", "size", ge=1, le=64
    )
    vocab_size: int = labelled_field(
        128,
        "Vocabulary",
        "词表大小",
        "Vocabulary size of the random-token task.",
        "随机词元任务的词表大小。",
        "size",
        ge=2,
        le=4096,
    )
    seed: int = labelled_field(
        0,
        "Seed",
        "随机种子",
        "Seed for the weights and the synthetic batch.",
        "权重和合成数据的随机种子。",
        "numerics",
        ge=0,
        le=2**31 - 1,
    )

    @model_validator(mode="after")
    def _check_consistency(self, info: ValidationInfo) -> TraceConfig:
        if self.arch == "transformer" and self.d_model % self.n_heads:
            divisors = [h for h in range(1, 17) if self.d_model % h == 0]
            raise ValueError(
                f"n_heads: must divide d_model ({self.d_model}); got {self.n_heads}"
                f" | allowed: divisors of d_model up to 16: {', '.join(map(str, divisors))}"
            )
        if self.norm == "groupnorm" and self.norm_groups not in group_counts(self.d_model):
            raise ValueError(
                f"norm_groups: must divide d_model ({self.d_model}) with at least 2 channels a group; "
                f"got {self.norm_groups} | allowed: {', '.join(map(str, group_counts(self.d_model)))}"
            )
        budget = (info.context or {}).get("budget", True)  # app/config/limits.py checks the rest without the budget
        if budget and not fits_budget(self):
            from .limits import over_budget_message  # limits validates TraceConfig itself: imported when needed

            raise ValueError(over_budget_message(self))
        return self

    def with_depth(self, depth: int) -> TraceConfig:
        return self.model_copy(update={"depth": depth})

    def cache_key(self) -> str:
        return self.model_dump_json()


def group_counts(d_model: int) -> list[int]:
    """GroupNorm's allowed numbers of groups for a width: divisors of d_model leaving at least 2 channels a group
    (a group of 1 channel normalizes every value to 0)."""
    return [g for g in range(1, d_model // 2 + 1) if d_model % g == 0]
