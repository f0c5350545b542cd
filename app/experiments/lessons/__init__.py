"""Four worked examples from the teaching material, each a plain function `request -> answer`.

chain      the chain product: g^L without a shortcut, (1+g)^L with one
layernorm  LayerNorm and RMSNorm step by step, checked against torch's own ops
softmax    softmax saturation: entropy and the Jacobian's norm as the logits grow
precision  float32 / bfloat16 / float16 limits, swamping, and where a float16 stack overflows

Request models carry their bounds and English/Chinese labels (like app/config.py), so the API
schema, the page controls and the error messages are derived from one place.
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

# A JSON number that is finite: Python's json parser accepts NaN/Infinity tokens, we do not.
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]


def lesson_field(default: Any, label: str, label_zh: str, help: str, help_zh: str, **bounds: Any) -> Any:
    """A field whose English and Chinese labels travel with its bounds into the JSON schema."""
    extra = {"label": label, "label_zh": label_zh, "help_zh": help_zh, "group": "page"}
    return Field(default, description=help, json_schema_extra=extra, **bounds)


def allowed_range(model: type[BaseModel], name: str) -> str:
    """Human-readable allowed values of one field of a lesson request, e.g. '[1, 1000]' or 'one of: a, b'."""
    schema = model.model_json_schema()
    prop = schema.get("properties", {}).get(name)
    if prop is None:
        return "known fields: " + ", ".join(model.model_fields)
    prop = _resolve(prop, schema)
    if "enum" in prop:
        return "one of: " + ", ".join(map(str, prop["enum"]))
    parts = []
    low = prop.get("minimum", prop.get("exclusiveMinimum"))
    high = prop.get("maximum", prop.get("exclusiveMaximum"))
    if low is not None or high is not None:
        left = "(" if "exclusiveMinimum" in prop else "["
        right = ")" if "exclusiveMaximum" in prop else "]"
        parts.append(f"{left}{low if low is not None else '-inf'}, {high if high is not None else 'inf'}{right}")
    if prop.get("type") == "array":
        items = f"{prop.get('minItems', 0)}..{prop.get('maxItems', 'any')} finite numbers"
        item_range = _item_bounds(prop.get("items", {}))
        parts.append(items + (f" in {item_range}" if item_range else ""))
    return ", ".join(parts) or prop.get("type", "")


def _resolve(prop: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Optional fields are anyOf [type, null]; enums may live in $defs."""
    for option in prop.get("anyOf", []):
        if option.get("type") != "null":
            prop = {**prop, **option}
    ref = prop.get("$ref")
    if ref:
        prop = {**prop, **schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {})}
    return prop


def _item_bounds(items: dict[str, Any]) -> str:
    low, high = items.get("minimum"), items.get("maximum")
    if low is None and high is None:
        return ""
    return f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
