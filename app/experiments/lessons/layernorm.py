"""LayerNorm and RMSNorm by hand, one step at a time, checked against torch's own ops.

LayerNorm: y = γ ⊙ (x − μ) / √(σ² + ε) + β with the biased variance σ² (Ba et al. 2016, eq. 3-4).
RMSNorm:   y = γ ⊙ x / √(mean(x²) + ε), no centring and no shift (Zhang & Sennrich 2019, eq. 4).
Everything runs in float64 so the by-hand steps and torch agree to rounding.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, model_validator

from ...numbers import fmt
from . import Finite, lesson_field
from .layernorm_geometry import geometry

MAX_LENGTH = 4096
SHOWN_TERMS = 8  # formulas spell out the numbers when the vector is this short


class LayerNormRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    x: list[Finite] = lesson_field(
        [8.0, 2.0, 2.0, 4.0],
        "Input vector x",
        "输入向量 x",
        "The numbers one token carries (2 to 4096).",
        "一个词元携带的数（2 到 4096 个）。",
        min_length=2,
        max_length=MAX_LENGTH,
    )
    kind: Literal["layernorm", "rmsnorm"] = lesson_field(
        "layernorm",
        "Normalization",
        "归一化",
        "layernorm: centre then scale; rmsnorm: scale by the root mean square only.",
        "layernorm：先减均值再缩放；rmsnorm：只按均方根缩放。",
    )
    gamma: list[Finite] | None = lesson_field(
        None,
        "Gain γ",
        "增益 γ",
        "Per-coordinate gain (same length as x); default all ones.",
        "逐分量增益（与 x 等长）；默认全为 1。",
        min_length=2,
        max_length=MAX_LENGTH,
    )
    beta: list[Finite] | None = lesson_field(
        None,
        "Shift β",
        "偏移 β",
        "Per-coordinate shift (same length as x; LayerNorm only); default zeros.",
        "逐分量偏移（与 x 等长；仅 LayerNorm）；默认全为 0。",
        min_length=2,
        max_length=MAX_LENGTH,
    )
    eps: float = lesson_field(
        1e-5,
        "ε",
        "ε",
        "Added to the variance (or mean square) before the square root, so a constant x does not divide by 0.",
        "在开方前加到方差（或均方）上，避免常数向量除以 0。",
        gt=0.0,
        le=1.0,
        allow_inf_nan=False,
    )

    @model_validator(mode="after")
    def _check_lengths(self) -> LayerNormRequest:
        for name in ("gamma", "beta"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.x):
                raise ValueError(
                    f"{name}: has {len(values)} numbers but x has {len(self.x)}"
                    f" | allowed: exactly {len(self.x)} numbers (the length of x)"
                )
        if self.kind == "rmsnorm" and self.beta is not None:
            raise ValueError(
                "beta: RMSNorm has no shift β (Zhang & Sennrich 2019) | allowed: omit beta when kind is rmsnorm"
            )
        return self


def layernorm_lesson(req: LayerNormRequest) -> dict[str, Any]:
    x = torch.tensor(req.x, dtype=torch.float64)
    n = x.numel()
    gamma = (
        torch.tensor(req.gamma, dtype=torch.float64) if req.gamma is not None else torch.ones(n, dtype=torch.float64)
    )
    beta = torch.tensor(req.beta, dtype=torch.float64) if req.beta is not None else torch.zeros(n, dtype=torch.float64)
    stats = _statistics(x, req.eps)
    centred = x - stats["mean"] if req.kind == "layernorm" else None
    if centred is not None:
        normalized = centred / stats["std_eps"]
        by_hand = gamma * normalized + beta
        output = F.layer_norm(x, (n,), weight=gamma, bias=beta, eps=req.eps)
        steps = _layernorm_steps(x, stats, normalized, by_hand, req)
    else:
        normalized = x / stats["rms_eps"]
        by_hand = gamma * normalized
        output = F.rms_norm(x, (n,), weight=gamma, eps=req.eps)
        steps = _rmsnorm_steps(x, stats, normalized, by_hand, req)
    difference = (output - by_hand).abs().max().item()
    return {
        "kind": req.kind,
        "n": n,
        "eps": req.eps,
        "dtype": "float64",
        **{k: v.item() for k, v in stats.items()},
        "normalized": normalized.tolist(),
        "output": output.tolist(),
        "normalized_mean": normalized.mean().item(),
        "normalized_rms": normalized.pow(2).mean().sqrt().item(),
        "steps": steps,
        "geometry": geometry(x, normalized, centred),
        "torch_check": {
            "op": "torch.nn.functional." + ("layer_norm" if req.kind == "layernorm" else "rms_norm"),
            "max_abs_difference": difference,
        },
    }


def _statistics(x: torch.Tensor, eps: float) -> dict[str, torch.Tensor]:
    mean = x.mean()
    variance = x.var(correction=0)  # biased: LayerNorm divides by n, not n − 1
    mean_square = x.pow(2).mean()
    return {
        "mean": mean,
        "variance": variance,
        "std": variance.sqrt(),
        "std_eps": (variance + eps).sqrt(),
        "mean_square": mean_square,
        "rms": mean_square.sqrt(),
        "rms_eps": (mean_square + eps).sqrt(),
    }


def _step(
    key: str, label: str, label_zh: str, formula: str, formula_zh: str, value: torch.Tensor, worked: str = ""
) -> dict[str, Any]:
    scalar = value.dim() == 0
    return {
        "key": key,
        "label": label,
        "label_zh": label_zh,
        "formula": formula,
        "formula_zh": formula_zh,
        "worked": worked,
        "value": value.item() if scalar else value.tolist(),
        "scalar": scalar,
    }


def _layernorm_steps(x, stats, normalized, output, req) -> list[dict[str, Any]]:
    centred = x - stats["mean"]
    return [
        _step(
            "mean",
            "Mean",
            "均值",
            "μ = (1/n)·Σᵢ xᵢ",
            "μ = (1/n)·Σᵢ xᵢ（所有分量的平均）",
            stats["mean"],
            _sum_text(req.x, len(req.x), stats["mean"]),
        ),
        _step("centred", "Subtract the mean", "减去均值", "xᵢ − μ", "xᵢ − μ（每个分量减去均值）", centred),
        _step(
            "variance",
            "Variance (biased, divide by n)",
            "方差（有偏，除以 n）",
            "σ² = (1/n)·Σᵢ (xᵢ − μ)²",
            "σ² = (1/n)·Σᵢ (xᵢ − μ)²（除以 n，不是 n − 1）",
            stats["variance"],
            _sum_text([v * v for v in centred.tolist()], len(req.x), stats["variance"]),
        ),
        _step(
            "std",
            "Standard deviation with ε",
            "含 ε 的标准差",
            "√(σ² + ε)",
            "√(σ² + ε)（ε 防止除以 0）",
            stats["std_eps"],
        ),
        _step(
            "normalized",
            "Normalize",
            "归一化",
            "x̂ᵢ = (xᵢ − μ) / √(σ² + ε)",
            "x̂ᵢ = (xᵢ − μ) / √(σ² + ε)（均值 0、方差 1）",
            normalized,
        ),
        _step(
            "output",
            "Scale and shift",
            "缩放并平移",
            "yᵢ = γᵢ·x̂ᵢ + βᵢ",
            "yᵢ = γᵢ·x̂ᵢ + βᵢ（可学习的增益和偏移）",
            output,
        ),
    ]


def _rmsnorm_steps(x, stats, normalized, output, req) -> list[dict[str, Any]]:
    return [
        _step(
            "mean_square",
            "Mean of the squares",
            "平方的均值",
            "ms = (1/n)·Σᵢ xᵢ²",
            "ms = (1/n)·Σᵢ xᵢ²（不减均值）",
            stats["mean_square"],
            _sum_text([v * v for v in req.x], len(req.x), stats["mean_square"]),
        ),
        _step(
            "rms",
            "Root mean square with ε",
            "含 ε 的均方根",
            "RMS = √(ms + ε)",
            "RMS = √(ms + ε)（ε 防止除以 0）",
            stats["rms_eps"],
        ),
        _step(
            "normalized",
            "Divide by the RMS",
            "除以均方根",
            "x̂ᵢ = xᵢ / RMS",
            "x̂ᵢ = xᵢ / RMS（均方为 1，均值不一定为 0）",
            normalized,
        ),
        _step("output", "Scale", "缩放", "yᵢ = γᵢ·x̂ᵢ", "yᵢ = γᵢ·x̂ᵢ（只有增益，没有偏移）", output),
    ]


def _sum_text(terms: list[float], n: int, result: torch.Tensor) -> str:
    """'(8 + 2 + 2 + 4) / 4 = 4' for short vectors, so a student can redo the arithmetic."""
    if len(terms) > SHOWN_TERMS:
        return ""
    body = " + ".join(_number(t) for t in terms).replace("+ \u2212", "\u2212 ")
    return f"({body}) / {n} = {_number(result.item())}"


def _number(value: float) -> str:
    return fmt(value, digits=6)  # the site's one number style (app/numbers.py, twin of static/js/format.js)


class LayerNormPage(BaseModel):
    """The /layernorm page's settings: one vector through both norms, with one gain γ and one shift β for every
    coordinate (RMSNorm has no β)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: list[Finite] = LayerNormRequest.model_fields["x"]  # type: ignore[assignment]
    gamma: Finite = 1.0
    beta: Finite = 0.0
    eps: float = LayerNormRequest.model_fields["eps"]  # type: ignore[assignment]

    def requests(self) -> list[LayerNormRequest]:
        """LayerNorm's and RMSNorm's requests (γ = 1 and β = 0 are the defaults, not sent: the cache keys of the
        lesson endpoint's own default requests)."""
        gamma = None if self.gamma == 1 else [self.gamma] * len(self.x)
        beta = None if self.beta == 0 else [self.beta] * len(self.x)
        return [
            LayerNormRequest(x=self.x, kind="layernorm", gamma=gamma, beta=beta, eps=self.eps),
            LayerNormRequest(x=self.x, kind="rmsnorm", gamma=gamma, eps=self.eps),
        ]


def page_parts(page: LayerNormPage) -> list[tuple[str, BaseModel]]:
    return [("layernorm", req) for req in page.requests()]


def page_answer(page: LayerNormPage, layernorm: dict[str, Any], rmsnorm: dict[str, Any]) -> dict[str, Any]:
    return {"layernorm": layernorm, "rmsnorm": rmsnorm, "x": page.x, "gamma": page.gamma, "beta": page.beta}
