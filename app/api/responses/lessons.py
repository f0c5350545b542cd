"""The lessons' answers: /api/chain, /api/layernorm, /api/softmax, /api/precision, /api/batch_dependence and
/api/norm_speed, and /api/recorded. Each says whether it came from the cache (`cached`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ...config import TraceConfig
from .common import Answer, Flagged, Measured


class Lesson(Flagged):
    cached: bool = Field(description="false only when this request computed it")


class WorkedCase(Answer):
    key: str
    derivative: float
    depth: int
    product: str = Field(description="plain or residual: the product the case is about")
    caption: str
    caption_zh: str
    value: Measured
    plain_final: Measured
    residual_final: Measured


class PathLengths(Answer):
    """Path lengths (numbers of branches passed) read off what the lengths carry."""

    peak: int | None = Field(description="the length that carries the most")
    half: int | None = Field(description="the shortest lengths up to this one carry half of the total")
    most: int | None = Field(description="... nine tenths of it")


class ChainPathsSummary(PathLengths):
    count_peak: int = Field(description="the commonest length, L // 2")


class ChainPaths(Answer):
    """(1 + g)^L unrolled into its 2^L paths (Veit et al. 2016), in exact rational arithmetic."""

    lengths: list[int] = Field(description="k = 0..L")
    count: list[float] = Field(description="C(L, k): the paths through k branches")
    share: list[float] = Field(description="C(L, k) / 2^L")
    carried: list[Measured] = Field(description="C(L, k)·g^k, what the paths of length k carry together")
    carried_log10: list[Measured]
    total: Measured = Field(description="Σ_k C(L, k)·g^k = (1 + g)^L")
    summary: ChainPathsSummary


class ChainAnswer(Lesson):
    """The products g^l and (1+g)^l for l = 1..depth, in float64."""

    derivative: float
    depth: int
    plain_final: Measured
    residual_final: Measured
    layers: list[int]
    plain: list[Measured] = Field(description="g^l")
    residual: list[Measured] = Field(description="(1+g)^l")
    plain_log10: list[Measured]
    residual_log10: list[Measured]
    dtype: str
    paths: ChainPaths = Field(description="the same product unrolled into its 2^L paths")
    worked_cases: list[WorkedCase]


class TorchCheck(Answer):
    op: str = Field(description="the torch function the hand computation is compared with")
    max_abs_difference: Measured


class NormStep(Answer):
    key: str
    label: str
    label_zh: str
    formula: str
    formula_zh: str
    worked: str = Field(description="the step with this vector's numbers put in")
    value: float | list[float] | None
    scalar: bool


class GeometryPoint(Answer):
    along: Measured = Field(description="v·u, u = (1, ..., 1)/√n: the part LayerNorm's centring removes")
    across: Measured = Field(description="the distance from the line through (1, ..., 1)")
    length: Measured = Field(description="‖v‖")
    sum: Measured
    plane: list[Measured] | None = Field(None, description="n = 3: (v·e₁, v·e₂) in the plane ⊥ (1, 1, 1)")


class GeometryPoints(Answer):
    input: GeometryPoint
    normalized: GeometryPoint
    centred: GeometryPoint | None = Field(None, description="x − μ (LayerNorm only)")


class NormGeometry(Answer):
    """Where the norm moves x: onto the plane ⊥ (1, ..., 1), then onto the sphere of radius √n."""

    radius: float = Field(description="√n")
    radius_ratio: Measured = Field(description="‖x̂‖ / √n")
    spread: Measured = Field(description="max − min of x (0: every entry equal)")
    points: GeometryPoints
    basis: list[list[float]] | None = Field(description="n = 3: e₁, e₂, an orthonormal basis of the plane")
    axes: list[list[float]] | None = Field(description="n = 3: each coordinate axis in that basis")


class LayerNormAnswer(Lesson):
    """LayerNorm or RMSNorm of `x`, step by step, in float64."""

    kind: str
    n: int
    eps: float
    dtype: str
    mean: Measured
    variance: Measured = Field(description="biased: divided by n")
    std: Measured
    std_eps: Measured = Field(description="√(variance + eps), LayerNorm's divisor")
    mean_square: Measured
    rms: Measured
    rms_eps: Measured = Field(description="√(mean_square + eps), RMSNorm's divisor")
    normalized: list[Measured]
    output: list[Measured]
    normalized_mean: Measured
    normalized_rms: Measured
    steps: list[NormStep]
    geometry: NormGeometry
    torch_check: TorchCheck


class AtScale(Answer):
    scale: float
    probs: list[Measured]
    entropy: Measured
    max_prob: Measured
    argmax: int
    jacobian_norm: Measured = Field(description="spectral norm of d softmax / d (s·z)")
    jacobian_frobenius: Measured
    jacobian_norm_wrt_logits: Measured = Field(description="s times jacobian_norm: d p / d z")


class SoftmaxAnswer(Lesson, AtScale):
    """softmax(scale·logits) in float64, with its Jacobian; `sweep` per scale when `scales` were asked for."""

    logits: list[float]
    n: int
    dtype: str
    jacobian_norm_kind: str
    jacobian_of: str
    jacobian_check: TorchCheck
    uniform_entropy: float
    uniform_jacobian_norm: float
    sweep: list[AtScale] | None = None


class NumberFormat(Answer):
    dtype: str
    bits: int
    fraction_bits: int
    max: float
    eps: float
    tiny: float
    stored_big: Measured = Field(description="`big` as this format stores it")
    stored_small: Measured
    sum: Measured = Field(description="big + small in this format")
    spacing_at_big: Measured = Field(description="the gap to the next number after big")
    overflowed: bool
    update_lost: bool = Field(description="big + small came back as big")
    sum_error: Measured


class Snowball(Answer):
    """The same stack traced in float16 and in float32: where float16 first overflows."""

    overflow_layer: int | None
    overflow_sublayer: str | None = Field(description='e.g. "21.attn"')
    float32_exceeds_float16_max_at: int | None
    float16_loss: Measured
    float32_loss: Measured
    float16_nonfinite: bool
    config: TraceConfig
    float16_max: float
    layers: list[int]
    float16_max_abs: list[Measured]
    float32_max_abs: list[Measured]
    float16_act_norm: list[Measured]
    float32_act_norm: list[Measured]


class PrecisionAnswer(Lesson):
    """a + b in each number format, and where a float16 stack overflows."""

    big: float
    small: float
    float64_sum: float
    formats: list[NumberFormat]
    snowball: Snowball


class Dependence(Answer):
    batch: int
    same_sequence_change: Measured = Field(description="mean relative change of one fixed sequence's output")
    same_sequence_change_max: Measured
    train_eval_change: Measured = Field(description="BatchNorm's train vs eval output; null for the others")


class Padding(Answer):
    pad_fraction: float
    other_length: int
    output_change: Measured
    mean_shift: Measured = Field(description="BatchNorm only: its statistics with the pads counted")
    std_ratio: Measured


class BatchDependenceAnswer(Lesson, Dependence):
    """How one fixed sequence's normalized output changes with its batch mates, and what padding does."""

    norm: str
    d_model: int
    seq_len: int
    groups: int
    trials: int
    dtype: str
    by_batch: list[Dependence]
    padding: list[Padding]
    torch_check: TorchCheck


class Timing(Answer):
    median_us: float
    p25_us: float
    p75_us: float
    min_us: float
    max_us: float


class SpeedRow(Answer):
    width: int
    layernorm: Timing
    rmsnorm: Timing
    layernorm_composed: Timing
    ratio: float = Field(description="RMSNorm's median / LayerNorm's (> 1: RMSNorm slower)")
    composed_ratio: float
    ns_per_number: dict[str, float]


class NormSpeedAnswer(Lesson):
    """LayerNorm vs RMSNorm, forward + backward, timed on this server."""

    rows: list[SpeedRow]
    widths: list[int]
    tokens: int
    dtype: str
    repeats: int
    calls_per_sample: dict[str, int]
    operator_calls: dict[str, int]
    threads: int
    torch: str
    kernels: dict[str, str]
    elapsed_ms: float
    measured_at: str
    verdict: str = Field(
        description="RMSNorm against LayerNorm at every width: slower, faster (beyond ±5 % at every width) or mixed"
    )
    spread: str = Field(
        description="wide where some width's middle half of the repeats spans > half its median, else narrow"
    )


class RecordedRun(Answer):
    kind: str = Field(description="the preset trained (post_ln, pre_ln_2017)")
    final_loss: Measured
    eval_loss: Measured
    sequence_accuracy: Measured
    diverged: bool


class RecordedCell(Answer):
    lr: float
    warmup_steps: int
    runs: list[RecordedRun]
    elapsed_s: float


class RecordedBest(Answer):
    final_loss: Measured
    lr: float | None
    warmup_steps: int | None


class RecordedKind(Answer):
    final_loss: list[list[Measured]] = Field(description="[warm-up][learning rate]")
    all: list[Measured] = Field(description="final_loss, row after row")
    best: RecordedBest


class RecordedAnswer(Lesson):
    """A result too slow for a request, recorded by a development tool (the learning-rate × warm-up grid), with how
    it was made."""

    command: str = Field(description="the command that recorded it, from the repository's root")
    recorded_at: str
    torch: str
    python: str
    threads_per_run: int
    seeds: dict[str, int | list[int]] = Field(description="weights: one seed per kind; data: the batches' seed")
    kinds: list[str]
    lrs: list[float]
    warmups: list[int]
    settings: dict[str, Any] = Field(description="the training request of every cell, without lr and warmup_steps")
    elapsed_s: float
    cells: list[RecordedCell]
    recorded: bool = Field(description="always true: recorded, not computed for this request")
    uniform_guess: float = Field(description="ln(symbols): the loss of a uniform guess")
    grid: dict[str, RecordedKind] = Field(description="per kind")
