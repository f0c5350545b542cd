"""Where LayerNorm moves a vector, as geometry (the /layernorm lesson's `geometry` block and its picture).

Subtracting the mean is the orthogonal projection onto the hyperplane ⊥ 1 = (1, …, 1): with u = 1/√n,
x − μ·1 = x − (x·u)·u, because x·u = μ·√n. Dividing by σ (the biased standard deviation) then puts the result on the
sphere of radius √n, because ‖x − μ‖² = Σ(xᵢ − μ)² = n·σ² (Ba et al. 2016, eq. 3-4; the geometric reading is Brody,
Alon & Yahav 2023). With ε under the root the radius is √n·σ/√(σ² + ε), a hair short of √n.

Every point is given in two views:
- the side view, exact for any n: the plane through 0 spanned by u and x's part across u. Its two numbers are
  `along` = v·u (the part LayerNorm removes) and `across` = ‖v − (v·u)·u‖ (the distance from the line through 1).
- for n = 3, the view along (1, 1, 1): the components (v·e₁, v·e₂) in the orthonormal basis e₁ = (1, −1, 0)/√2,
  e₂ = (1, 1, −2)/√6 of the plane ⊥ (1, 1, 1); x and x − μ have the same components there (a projection).
All in float64 with torch, like the lesson's steps.
"""

from __future__ import annotations

import math
from typing import Any

import torch

PLANE_WIDTH = 3  # the view along (1, 1, 1) exists for 3 components


def plane_basis() -> torch.Tensor:
    """(2, 3): an orthonormal basis of the plane ⊥ (1, 1, 1), rows e₁ and e₂."""
    return torch.tensor([[1.0, -1.0, 0.0], [1.0, 1.0, -2.0]], dtype=torch.float64) / torch.tensor(
        [[math.sqrt(2.0)], [math.sqrt(6.0)]], dtype=torch.float64
    )


def _point(v: torch.Tensor, basis: torch.Tensor | None) -> dict[str, Any]:
    n = v.numel()
    unit = torch.full((n,), 1.0 / math.sqrt(n), dtype=torch.float64)
    along = torch.dot(v, unit)
    across = torch.linalg.vector_norm(v - along * unit)
    point: dict[str, Any] = {
        "along": along.item(),
        "across": across.item(),
        "length": torch.linalg.vector_norm(v).item(),
        "sum": v.sum().item(),
    }
    if basis is not None:
        point["plane"] = (basis @ v).tolist()
    return point


def geometry(x: torch.Tensor, normalized: torch.Tensor, centred: torch.Tensor | None) -> dict[str, Any]:
    """The input, its centred version (LayerNorm only) and the normalized vector as points of the two views, the
    sphere's radius √n, and how far the normalized vector lies from it (`radius_ratio` = ‖x̂‖ / √n)."""
    n = x.numel()
    basis = plane_basis() if n == PLANE_WIDTH else None
    points = {"input": _point(x, basis), "normalized": _point(normalized, basis)}
    if centred is not None:
        points["centred"] = _point(centred, basis)
    radius = math.sqrt(n)
    return {
        "radius": radius,
        "radius_ratio": points["normalized"]["length"] / radius,
        "spread": (x.max() - x.min()).item(),  # 0: every entry equal, σ = 0, and only ε is under the root
        "points": points,
        "basis": basis.tolist() if basis is not None else None,
        # where each coordinate axis eᵢ falls in the view along (1, 1, 1): the picture's three faint spokes
        "axes": basis.T.tolist() if basis is not None else None,
    }
