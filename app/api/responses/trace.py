"""The answers of /api/trace, /api/laws, /api/depth_scan, /api/sweep, /api/budget and /api/presets."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, RootModel

from ...config import TraceConfig
from .common import Answer, Flagged, Measured, Source


class StreamStatistics(Answer):
    """One snapshot of the residual stream: means over batch and positions."""

    act_norm: Measured = Field(description="mean L2 norm of a token's stream vector")
    act_rms: Measured = Field(description="root mean square of all its coordinates")
    act_max_abs: Measured = Field(description="largest |coordinate| (what overflows first)")
    token_cosine: Measured = Field(description="mean cosine between distinct positions of a sequence (1: collapse)")
    token_max_abs: Measured = Field(description="mean over tokens of a token vector's largest |coordinate|")
    token_min_abs: Measured = Field(description="mean over tokens of a token vector's smallest |coordinate|")
    grad_norm: Measured = Field(description="the same norm for ∂loss/∂x")


class Sublayer(StreamStatistics):
    layer: int
    sublayer: str = Field(description="attn, ffn or mlp (a parallel block's units by their own name)")
    branch_norm: Measured = Field(description="norm of what the unit's branch handed to the merge, f(·)")
    param_grad_norm: Measured = Field(description="L2 norm of the gradient of the unit's parameters")


class Layer(StreamStatistics):
    layer: int = Field(description="the block, 1..L: statistics of the stream after it")
    branch_norm: Measured = Field(description="norm of the sum the block's branches handed to the merge")
    param_grad_norm: Measured = Field(description="L2 norm of the gradient of all the block's parameters")
    attn_param_grad_norm: Measured = Field(None, description="its attention's part (transformer blocks)")
    ffn_param_grad_norm: Measured = Field(None, description="its FFN's part (transformer blocks)")


class TraceSummary(Source):
    grad_survival: Measured = Field(description="grad_norm of block 1 / grad_norm of block L")
    norm_growth: Measured = Field(description="act_norm of block L / act_norm of block 1")
    nonfinite: bool = Field(description="whether any statistic or the loss overflowed")
    first_nonfinite_layer: int | None
    dtype_max: float = Field(description="the largest finite number of the run's dtype")
    depth: int
    parameters: int
    forward_macs: float = Field(description="multiply-adds of one forward pass")
    elapsed_ms: float = Field(description="the computation")
    served_ms: float = Field(description="this answer, from request to response")


class TraceAnswer(Flagged):
    """One traced forward + backward pass (docs/api.md, "POST /api/trace: the answer")."""

    config: TraceConfig = Field(description="the full resolved request")
    embedding: StreamStatistics = Field(description="x₀ (for the MLP: the input)")
    layers: list[Layer]
    sublayers: list[Sublayer]
    loss: Measured
    summary: TraceSummary


class LawFit(Answer):
    p: float | None = Field(description="the exponent (null for the exponential law)")
    c: float
    error: float = Field(description="root mean square error over blocks 1..L (log10 units when `log`)")
    curve: list[float] = Field(description="the law from ‖x₀‖, per layer")


class Independent(Answer):
    curve: list[float] = Field(description="√(‖x₀‖² + Σₖ≤ₗ ‖fₖ‖²) per layer, nothing fitted")
    error: float


class LawsAnswer(Flagged):
    """The growth laws fitted from ‖x₀‖ to a trace's stream."""

    layers: list[int] = Field(description="0 (the embedding) .. L")
    values: list[Measured] = Field(description="the stream's mean token norm per layer")
    fits: dict[str, LawFit] = Field(description="by law: sqrt, line, exp, power; {} when the stream overflowed")
    law: str | None = Field(description="the law that fits by docs/physics.md's rule, or null")
    log: bool = Field(description="the series spans more than three decades: errors in log10 units")
    independent: Independent | None


class PresetScan(Answer):
    seeds: list[list[Measured]] = Field(description="per seed, the last block's FFN parameter gradient per depth")
    exponents: list[Measured] = Field(description="per seed, the fitted exponent against depth")


class DepthScanAnswer(Flagged):
    """Xiong et al. 2020's theorem measured; one key per preset asked for, e.g. `post_ln`."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, PresetScan] = Field(init=False)

    layers: list[int] = Field(description="the depths")
    seeds: list[int]


class SweepRow(Source):
    """One depth of a sweep: what the /gradients heatmap reads."""

    depth: int
    grad_norm: list[Measured] = Field(description="per block")
    act_norm: list[Measured] = Field(description="per block")
    embedding_grad_norm: Measured
    grad_survival: Measured
    norm_growth: Measured
    nonfinite: bool
    loss: Measured


class SweepStart(Flagged):
    type: Literal["start"]
    total: int
    depths: list[int]
    config: TraceConfig


class SweepDepth(Flagged):
    """A depth done (in completion order); with ?rows=false only `depth`, `cached` and `source` besides the counts."""

    type: Literal["depth"]
    index: int
    total: int
    depth: int
    cached: bool
    source: str
    grad_norm: list[Measured] | None = None
    act_norm: list[Measured] | None = None
    embedding_grad_norm: Measured = None
    grad_survival: Measured = None
    norm_growth: Measured = None
    nonfinite: bool | None = None
    loss: Measured = None


class SweepError(Flagged):
    """The stream ends here: 503 (busy; retry after `retry_after` s) or 500."""

    type: Literal["error"]
    status: int
    error: str
    completed: int
    total: int
    retry_after: int | None = None


class SweepDone(Flagged):
    type: Literal["done"]
    total: int
    elapsed_ms: float


class SweepLine(RootModel[Annotated[SweepStart | SweepDepth | SweepError | SweepDone, Field(discriminator="type")]]):
    """One line of POST /api/sweep's NDJSON stream: `start`, a `depth` per depth, then `done` (or `error`)."""


class SweepAnswer(Flagged):
    """POST /api/sweep?stream=false: every depth at once, sorted by depth."""

    config: TraceConfig
    depths: list[int]
    results: list[SweepRow]
    elapsed_ms: float


class SizeLimit(Answer):
    value: int
    min: int
    max: int | None = Field(description="the largest value that fits with the others as they are; null if none does")


class Cost(Answer):
    value: float
    limit: float


class BudgetAnswer(Flagged):
    """How a model stands against this server's compute budget."""

    fits: bool
    cause: str | None = Field(description="the size needing the smallest cut, or null")
    limits: dict[str, SizeLimit] = Field(description="depth, d_model, seq_len, batch, vocab_size, n_heads")
    costs: dict[str, Cost] = Field(description="forward_multiply_adds, parameters, saved_activation_floats")


class Preset(Answer):
    key: str
    name: str
    name_zh: str
    description: str
    description_zh: str
    config: dict[str, str | float | bool] = Field(description="every architecture field, resolved for the depth")


class PresetsAnswer(Flagged):
    """The named presets, resolved for `depth`."""

    depth: int
    presets: list[Preset]
