"""The unrolled residual stack (Veit, Wilber & Belongie 2016): which paths carry the gradient.

A Pre-norm stack of L residual units x_{l+1} = x_l + f_l(x_l) (f_l the branch with its norm in front) has the Jacobian
∏_l (I + J_l), J_l = ∂f_l/∂x_l. Expanded, it is a sum over the 2^L subsets S of the units, the "paths" (Veit et al.,
eq. 1 unrolled): the gradient at x_0 is Σ_S (∏_{l∈S} J_lᵀ) v, v = ∂loss/∂x_L, each term the gradient along one path
through the |S| branches in S and around the others by the shortcut. C(L, k) of them pass k branches.

Two measurements, on one model at initialisation, one backward pass:
- exact, per length: G_k = Σ_{|S|=k} (∏_{l∈S} J_lᵀ) v, every path of length k summed. Propagated down the stack as the
  coefficients of a polynomial in t, ∏(I + t·J_lᵀ) v: at unit l, G_k ← G_k + J_lᵀ G_{k−1} (one vector-Jacobian
  product per coefficient, about L²/2 in all). Σ_k G_k is the whole gradient: the answer carries its distance from
  autograd's as a check.
- sampled, per path, as Veit et al. did (their Figure 6): for each length k, random subsets S of k units; the gradient
  is sent back through the branches of S only and around the others (the shortcut alone), and its size recorded.
  C(L, k) × the mean size is their "total gradient magnitude" of length k: it adds sizes, so paths that cancel
  each other still count (it is at least ‖G_k‖ in expectation). The answer says how many paths of each length were
  drawn (fewer than asked only on a machine so busy that SAMPLE_SECONDS ran out).
Sizes are the deck's: the mean over tokens of each token's L2 norm. Computed in float32, the model's own format, as
its /api/trace is (so the two agree): the sum over lengths equals autograd's gradient to float32's rounding. (Without
a norm the 12-block reference model is so sensitive that its float64 gradient is another number, about 3× smaller at
seed 0: float32 is the model the other slides show.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..config import TraceConfig
from ..models.init import build_model
from ..models.residuals import IdentityShortcut
from ..models.stack import Stack, make_batch
from ..models.units import PreNormUnit

MAX_DEPTH = 24  # blocks: at most 48 units, about 1,200 vector-Jacobian products for the exact part
SAMPLE_SECONDS = 20.0  # a safety cap on the sampled paths (about 3 s on two idle cores; the exact part is not capped)
MOST = 0.9  # "most of the gradient": the shortest lengths that carry nine tenths of it (Veit et al.'s effective paths)


class PathsRequest(BaseModel):
    """POST /api/paths: the model (a /api/trace body, Pre-norm with the identity shortcut) and how many paths of each
    length to sample."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: TraceConfig = Field(default_factory=lambda: TraceConfig(depth=12))
    samples: int = Field(8, ge=1, le=32, description="paths sampled per length (Veit et al.'s measurement)")
    sample_seed: int = Field(0, ge=0, le=1000, description="seed of the sampled subsets of units")

    @model_validator(mode="after")
    def _unrollable(self) -> PathsRequest:
        cfg = self.model
        if cfg.residual != "identity" or cfg.residual_scale != 1.0 or cfg.norm_position != "pre":
            raise ValueError(
                "model: the unrolled view needs units x + f(N(x)) | allowed: residual identity, residual_scale 1, "
                "norm_position pre (norm may be none)"
            )
        if cfg.depth > MAX_DEPTH or cfg.dtype != "float32":
            raise ValueError(f"model: depth {cfg.depth}, dtype {cfg.dtype} | allowed: depth 1 to {MAX_DEPTH}, float32")
        return self


def _units(model: Stack) -> list[PreNormUnit]:
    units = [unit for block in model.blocks for unit in block.units.values()]
    found = [u for u in units if isinstance(u, PreNormUnit) and isinstance(u.combine, IdentityShortcut)]
    assert len(found) == len(units), "PathsRequest admits x + f(N(x)) units only"
    return found


def _size(v: torch.Tensor) -> float:
    """The deck's gradient size: the mean over tokens of each token's L2 norm."""
    return v.norm(dim=-1).mean().item()


class Unrolled:
    """One forward pass unit by unit, each branch's graph kept for vector-Jacobian products."""

    def __init__(self, cfg: TraceConfig) -> None:
        model = build_model(cfg)
        inputs, targets = make_batch(cfg)
        self.units = _units(model)
        x0 = model.embed(inputs).detach()
        self.ins: list[torch.Tensor] = []
        self.outs: list[torch.Tensor] = []
        x = x0
        for unit in self.units:
            x_in = x.detach().requires_grad_(True)
            f = unit.branch(unit.norm(x_in))
            self.ins.append(x_in)
            self.outs.append(f)
            x = x_in + f
        top = x.detach().requires_grad_(True)
        (self.top,) = torch.autograd.grad(_loss(model, top, targets), top)
        leaf = x0.clone().requires_grad_(True)  # the whole gradient by autograd, through the model's own units
        stream = leaf
        for unit in self.units:
            stream = unit(stream)
        (self.whole,) = torch.autograd.grad(_loss(model, stream, targets), leaf)

    def through(self, unit: int, v: torch.Tensor) -> torch.Tensor:
        """J_lᵀ v: the gradient v sent back through unit l's branch (and its norm), not its shortcut."""
        return torch.autograd.grad(self.outs[unit], self.ins[unit], v, retain_graph=True)[0]

    def by_length(self) -> list[torch.Tensor]:
        """G_k for k = 0..L: every path of length k summed (the coefficients of ∏(I + t·J_lᵀ) v)."""
        coefficients = [self.top]
        for unit in reversed(range(len(self.units))):
            shifted = [self.through(unit, c) for c in coefficients]
            coefficients = [coefficients[0]] + [
                (coefficients[k] if k < len(coefficients) else 0) + shifted[k - 1]
                for k in range(1, len(coefficients) + 1)
            ]
        return coefficients

    def along(self, path: set[int]) -> torch.Tensor:
        """The gradient along one path: through the branches in `path`, around every other unit."""
        v = self.top
        for unit in reversed(range(len(self.units))):
            if unit in path:
                v = self.through(unit, v)
        return v


def _loss(model: Stack, stream: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    out = model.head(model.final_norm(stream))
    if model.arch == "transformer":
        return torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), targets.reshape(-1))
    return torch.nn.functional.mse_loss(out, targets)


def _sampled(unrolled: Unrolled, samples: int, seed: int) -> list[list[float]]:
    """Per length k, the sizes of the sampled paths (lengths 0 and L: their one path), drawn a round at a time over
    every length until `samples` rounds or SAMPLE_SECONDS."""
    count = len(unrolled.units)
    sizes: list[list[float]] = [[] for _ in range(count + 1)]
    sizes[0], sizes[count] = [_size(unrolled.top)], [_size(unrolled.along(set(range(count))))]
    generator = torch.Generator().manual_seed(seed)
    started = time.perf_counter()
    for _ in range(samples):
        for k in range(1, count):
            path = set(torch.randperm(count, generator=generator)[:k].tolist())
            sizes[k].append(_size(unrolled.along(path)))
        if time.perf_counter() - started > SAMPLE_SECONDS:
            break
    return sizes


def length_quantile(amounts: Sequence[float | None], share: float) -> int | None:
    """The shortest length k such that the lengths 0..k carry `share` of the sum of `amounts` (None: an amount that
    overflowed, or nothing at all)."""
    if any(a is None or not math.isfinite(a) for a in amounts) or not sum(amounts):  # type: ignore[arg-type]
        return None
    total, running = math.fsum(amounts), 0.0  # type: ignore[arg-type]
    for k, amount in enumerate(amounts):
        running += amount  # type: ignore[operator]
        if running >= share * total * (1 - 1e-12):
            return k
    return len(amounts) - 1


def summary_of(amounts: Sequence[float | None]) -> dict[str, int | None]:
    """Where the gradient travels, in path lengths: the length that carries the most, and the shortest lengths that
    carry half and nine tenths of it."""
    finite = [a if a is not None and math.isfinite(a) else -math.inf for a in amounts]
    return {"peak": finite.index(max(finite)), "half": length_quantile(amounts, 0.5),
            "most": length_quantile(amounts, MOST)}  # fmt: skip


def chain_paths(derivative: float, depth: int) -> dict[str, Any]:
    """The scalar chain unrolled: (1 + g)^L = Σ_k C(L, k)·g^k, the paths of length k carrying C(L, k)·g^k together.
    Exact rational arithmetic on g's binary value, rounded to float64 once per number (null where it overflows);
    `total` is the exact sum, (1 + g)^L, rounded once."""
    g = Fraction(derivative)
    carried, term = [], Fraction(1)
    for k in range(depth + 1):
        carried.append(term)
        term = term * (depth - k) / (k + 1) * g
    counts = [math.comb(depth, k) for k in range(depth + 1)]
    as_float = [_rounded(c) for c in carried]
    return {
        "lengths": list(range(depth + 1)),
        "count": [float(c) for c in counts],
        "share": [float(Fraction(c, 2**depth)) for c in counts],
        "carried": as_float,
        "carried_log10": [_log10(c) for c in carried],
        "total": _rounded(sum(carried, Fraction(0))),
        "summary": {**_exact_summary(carried), "count_peak": depth // 2},
    }


def _exact_summary(carried: list[Fraction]) -> dict[str, int | None]:
    """summary_of on exact amounts (a product that overflows float64 still has a peak and quantiles)."""
    total = sum(carried, Fraction(0))
    if not total:
        return {"peak": None, "half": None, "most": None}
    running, found = Fraction(0), {}
    for k, amount in enumerate(carried):
        running += amount
        for name, share in (("half", Fraction(1, 2)), ("most", Fraction(str(MOST)))):
            if name not in found and running >= share * total:
                found[name] = k
    return {"peak": max(range(len(carried)), key=carried.__getitem__), **found}


def _rounded(value: Fraction) -> float | None:
    try:
        return float(value)
    except OverflowError:
        return None


def _log10(value: Fraction) -> float | None:
    return math.log10(value.numerator) - math.log10(value.denominator) if value > 0 else None


def unrolled_paths(req: PathsRequest) -> dict[str, Any]:
    """Path counts, the exact gradient per length, Veit et al.'s sampled per-path sizes, and the checks' numbers."""
    started = time.perf_counter()
    unrolled = Unrolled(req.model)
    count = len(unrolled.units)
    exact = unrolled.by_length()
    summed = torch.stack(exact).sum(dim=0)
    sizes = _sampled(unrolled, req.samples, req.sample_seed)
    top = _size(unrolled.top)
    means = [sum(s) / len(s) for s in sizes]
    paths = [math.comb(count, k) for k in range(count + 1)]
    exact_ratio = [_size(g) / top for g in exact]
    total_ratio = [p * m / top for p, m in zip(paths, means, strict=True)]
    return {
        "units": count,
        "blocks": req.model.depth,
        "lengths": list(range(count + 1)),
        "paths": [float(p) for p in paths],
        "paths_total": float(2**count),
        "top": top,
        "whole": _size(unrolled.whole),
        "sum_error": (summed - unrolled.whole).norm().item() / unrolled.whole.norm().item(),
        "exact": [_size(g) for g in exact],
        "exact_ratio": exact_ratio,
        "sampled": {
            "drawn": [len(s) for s in sizes],
            "fewest": min(len(s) for s in sizes[1:-1]) if count > 1 else 1,
            "mean": means,
            "low": [min(s) for s in sizes],
            "high": [max(s) for s in sizes],
            "total_ratio": total_ratio,
        },
        "summary": {"exact": summary_of(exact_ratio), "sampled": summary_of(total_ratio), "count_peak": count // 2},
        "dtype": req.model.dtype,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
