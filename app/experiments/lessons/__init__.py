"""Four worked examples from the teaching material, each a plain function `request -> answer`.

chain      the chain product: g^L without a shortcut, (1+g)^L with one
layernorm  LayerNorm and RMSNorm step by step, checked against torch's own ops
softmax    softmax saturation: entropy and the Jacobian's norm as the logits grow
precision  float32 / bfloat16 / float16 limits, swamping, and where a float16 stack overflows

Request models carry their bounds and English/Chinese labels (like app/config/request.py), so the API
schema, the page controls and the error messages are derived from one place.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ...config import labelled_field

# A JSON number that is finite: Python's json parser accepts NaN/Infinity tokens, we do not.
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]


def lesson_field(default: Any, label: str, label_zh: str, help: str, help_zh: str, **bounds: Any) -> Any:
    """A lesson's own setting: labelled like every request field, shown in the page's own group of controls."""
    return labelled_field(default, label, label_zh, help, help_zh, "page", **bounds)
