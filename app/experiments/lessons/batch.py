"""Why NLP avoids BatchNorm: a token's normalized output depends on the other sequences in its batch.

BatchNorm normalizes each channel with a mean and variance taken over the whole batch and every position
(Ioffe & Szegedy 2015, Alg. 1), so one fixed sequence comes out differently next to different batch mates,
training mode (batch statistics) and eval mode (running averages) disagree, and padding positions enter the
statistics. LayerNorm, RMSNorm and GroupNorm use one token's own numbers only (Ba et al. 2016, sec. 3;
Shen et al. 2020, PowerNorm, sec. 3, measure the batch-statistics problem in Transformers).

The layers are the engine's own (app.models.norms), run in float64 on synthetic token vectors:
token = channel mean mu + sequence offset m_b + token noise, each N(0, 1) per channel and drawn once from `seed`
(real embeddings have channel means and sentence-level offsets too).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Literal, get_args

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, create_model, model_validator

from ...config import group_counts
from ...models.norms import norm_from_config
from . import lesson_field

BATCH_SWEEP = (2, 4, 8, 16, 32, 64)
PAD_FRACTIONS = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875)  # of each other sequence's positions
WARMUP_BATCHES = 50  # training batches that fill BatchNorm's running averages (momentum 0.1: 0.9^50 < 1%)
BatchNormName = Literal["batchnorm", "layernorm", "rmsnorm", "groupnorm"]


def _groups_rule(req: Any) -> Any:
    """GroupNorm's groups must divide the width with at least 2 channels a group (also when another norm is asked:
    the page's four norms share one set of sizes)."""
    allowed = group_counts(req.d_model)
    if req.groups not in allowed:
        raise ValueError(
            f"groups: must divide d_model ({req.d_model}) with at least 2 channels a group; "
            f"got {req.groups} | allowed: {', '.join(map(str, allowed))}"
        )
    return req


class BatchDependenceRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    norm: BatchNormName = lesson_field(
        "batchnorm",
        "Normalization",
        "归一化",
        "The layer to test: batchnorm, layernorm, rmsnorm or groupnorm.",
        "要检验的层：batchnorm、layernorm、rmsnorm 或 groupnorm。",
    )
    d_model: int = lesson_field(
        16, "Channels d", "通道数 d", "Width of each token vector.", "每个词元向量的宽度。", ge=4, le=64
    )
    seq_len: int = lesson_field(
        16, "Sequence length", "序列长度", "Tokens per sequence.", "每个序列的词元数。", ge=2, le=64
    )
    batch: int = lesson_field(
        8,
        "Batch size",
        "批大小",
        "Sequences per batch: the fixed one and its batch mates.",
        "每批的序列数：固定的那一个和它的同批序列。",
        ge=2,
        le=64,
    )
    groups: int = lesson_field(
        4,
        "GroupNorm groups",
        "GroupNorm 分组数",
        "Groups of channels for groupnorm; must divide d with at least 2 channels a group.",
        "groupnorm 的通道组数；必须整除 d，且每组至少 2 个通道。",
        ge=1,
        le=32,
    )
    trials: int = lesson_field(
        8,
        "Replacement batches",
        "替换的批数",
        "How many times the batch mates are replaced by fresh sequences.",
        "把同批序列换成新序列的次数。",
        ge=1,
        le=16,
    )
    seed: int = lesson_field(
        0, "Seed", "随机种子", "Seed of the synthetic tokens.", "合成词元的随机种子。", ge=0, le=2**31 - 1
    )

    _check_groups = model_validator(mode="after")(_groups_rule)


class _SharedSizes(BaseModel):
    """The four norms' shared sizes, under the same groups rule (BatchNormsRequest's fields come from the lesson's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="after")
    def _check_groups(self) -> Any:
        return _groups_rule(self)


BatchNormsRequest = create_model(  # type: ignore[call-overload]
    "BatchNormsRequest",
    __base__=_SharedSizes,
    __doc__="The /batchnorm page's sizes, shared by its four norms (one batch_dependence answer each).",
    **{n: (f.annotation, f) for n, f in BatchDependenceRequest.model_fields.items() if n != "norm"},
)


def norms_parts(req: BaseModel) -> list[tuple[str, BaseModel]]:
    """One batch_dependence request per norm, on the same sizes (each cached under its own key)."""
    return [
        ("batch_dependence", BatchDependenceRequest(norm=norm, **req.model_dump())) for norm in get_args(BatchNormName)
    ]


def norms_answer(req: BaseModel, *answers: dict[str, Any]) -> dict[str, Any]:
    """The four answers by norm name."""
    return {answer["norm"]: answer for answer in answers}


class TokenSource:
    """Synthetic sequences: channel mean + sequence offset + token noise (module docstring), float64."""

    def __init__(self, req: BatchDependenceRequest) -> None:
        self.generator = torch.Generator().manual_seed(req.seed)
        self.shape = (req.seq_len, req.d_model)
        self.channel_mean = self._normal(req.d_model)

    def _normal(self, *shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=self.generator, dtype=torch.float64)

    def sequences(self, count: int) -> torch.Tensor:
        offsets = self._normal(count, 1, self.shape[1])
        return self.channel_mean + offsets + self._normal(count, *self.shape)  # (B, T, C)


def make_layer(req: BatchDependenceRequest) -> torch.nn.Module:
    """The engine's own layer (what a TraceConfig with this norm builds), in float64 and training mode."""
    spec = SimpleNamespace(norm=req.norm, d_model=req.d_model, norm_groups=req.groups)
    return norm_from_config(spec).double().train()


def relative_change(changed: torch.Tensor, reference: torch.Tensor) -> float:
    """RMS of the difference over the RMS of the reference: 0 = identical, 1 = as large as the output itself."""
    return ((changed - reference).pow(2).mean().sqrt() / reference.pow(2).mean().sqrt()).item()


@torch.no_grad()
def dependence_at(req: BatchDependenceRequest, batch: int) -> dict[str, Any]:
    """One fixed sequence among `trials` + 1 different sets of batch mates: how much its output moves, and
    (BatchNorm) how far training-mode output is from eval-mode output once running averages are filled."""
    source, layer = TokenSource(req), make_layer(req)
    fixed = source.sequences(1)
    outputs = [layer(torch.cat([fixed, source.sequences(batch - 1)]))[0] for _ in range(req.trials + 1)]
    changes = [relative_change(out, outputs[0]) for out in outputs[1:]]
    answer = {
        "batch": batch,
        "same_sequence_change": sum(changes) / len(changes),
        "same_sequence_change_max": max(changes),
        "train_eval_change": None,
    }
    if req.norm == "batchnorm":
        for _ in range(WARMUP_BATCHES):
            layer(source.sequences(batch))
        batches = [torch.cat([fixed, source.sequences(batch - 1)]) for _ in range(req.trials)]
        trained = [layer(b)[0] for b in batches]
        layer.eval()
        gaps = [relative_change(out, layer(b)[0]) for out, b in zip(trained, batches, strict=True)]
        answer["train_eval_change"] = sum(gaps) / len(gaps)
    return answer


@torch.no_grad()
def padding_effect(req: BatchDependenceRequest) -> list[dict[str, Any]]:
    """One batch; its sequences after the first cut shorter and shorter (PAD_FRACTIONS of their positions)."""
    batch = TokenSource(req).sequences(req.batch)
    return [padding_at(req, batch, fraction) for fraction in PAD_FRACTIONS]


def padding_at(req: BatchDependenceRequest, batch: torch.Tensor, fraction: float) -> dict[str, Any]:
    """Every other sequence is shorter and padded with zero vectors to the fixed sequence's length.
    The layer sees the padded batch (as nn.BatchNorm1d on a padded tensor would); the reference is the same
    layer on the real tokens alone. Per-token norms never look at the pads; BatchNorm counts them."""
    layer = make_layer(req)
    other_length = max(1, round(req.seq_len * (1.0 - fraction)))
    real = torch.ones(req.batch, req.seq_len, dtype=torch.bool)
    real[1:, other_length:] = False
    padded = batch * real.unsqueeze(-1)  # pads are zero vectors
    reference = layer(batch[real].unsqueeze(0))[0, : req.seq_len]  # the fixed sequence's tokens come first
    point = {
        "pad_fraction": 1.0 - real.double().mean().item(),
        "other_length": other_length,
        "output_change": relative_change(layer(padded)[0], reference),
        "mean_shift": None,
        "std_ratio": None,
    }
    if req.norm == "batchnorm":  # its per-channel statistics with the pads counted, against the real tokens' own
        flat, tokens = padded.reshape(-1, req.d_model), batch[real]
        spread = tokens.std(0, correction=0)
        point["mean_shift"] = ((flat.mean(0) - tokens.mean(0)).abs() / spread).mean().item()
        point["std_ratio"] = (flat.std(0, correction=0) / spread).mean().item()
    return point


def torch_check(req: BatchDependenceRequest) -> dict[str, Any]:
    """The engine's layer against torch.nn.functional's own op on one batch (training mode)."""
    x = TokenSource(req).sequences(req.batch)
    flat = x.reshape(-1, req.d_model)
    reference, op = {
        "batchnorm": (lambda: F.batch_norm(flat, None, None, training=True, eps=1e-5), "batch_norm"),
        "layernorm": (lambda: F.layer_norm(flat, (req.d_model,), eps=1e-5), "layer_norm"),
        "rmsnorm": (lambda: F.rms_norm(flat, (req.d_model,), eps=1e-6), "rms_norm"),
        "groupnorm": (lambda: F.group_norm(flat, req.groups, eps=1e-5), "group_norm"),
    }[req.norm]
    with torch.no_grad():
        difference = (make_layer(req)(x).reshape(-1, req.d_model) - reference()).abs().max().item()
    return {"op": f"torch.nn.functional.{op}", "max_abs_difference": difference}


def batch_dependence_lesson(req: BatchDependenceRequest) -> dict[str, Any]:
    headline = dependence_at(req, req.batch)
    return {
        "norm": req.norm,
        "d_model": req.d_model,
        "seq_len": req.seq_len,
        "batch": req.batch,
        "groups": req.groups,
        "trials": req.trials,
        "dtype": "float64",
        "same_sequence_change": headline["same_sequence_change"],
        "same_sequence_change_max": headline["same_sequence_change_max"],
        "train_eval_change": headline["train_eval_change"],
        "by_batch": [headline if b == req.batch else dependence_at(req, b) for b in BATCH_SWEEP],
        "padding": padding_effect(req),
        "torch_check": torch_check(req),
    }
