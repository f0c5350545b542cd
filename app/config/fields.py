"""Fields that carry their bilingual labels into the JSON schema, and the allowed range of a field in words.

Error messages (app/errors.py) and lesson endpoints name what a field allows with `field_bounds`, read from the
same schema the pages build their controls from.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import JsonDict


def labelled_field(default: Any, label: str, label_zh: str, help: str, help_zh: str, group: str, **bounds: Any) -> Any:
    """A field whose English and Chinese labels travel with its bounds into the JSON schema."""
    extra: JsonDict = {"label": label, "label_zh": label_zh, "help_zh": help_zh, "group": group}
    return Field(default, description=help, json_schema_extra=extra, **bounds)


def field_bounds(name: str, model: type[BaseModel]) -> str:
    """Human-readable allowed range of a field of `model`, e.g. '[1, 128]' or 'one of: pre, post'."""
    schema = _properties(model).get(name, {})
    if "anyOf" in schema:  # an optional field, e.g. TrainRequest.clip: its range, or null
        bounds = " or ".join(filter(None, (_schema_bounds(option) for option in non_null_options(schema))))
        return f"{bounds} or null" if bounds else ""
    return _schema_bounds(schema)


def non_null_options(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemas a field's value may follow besides null: Pydantic writes `float | None` as anyOf [number, null].
    A field that is not optional gives its own schema."""
    options = [option for option in schema.get("anyOf", []) if option.get("type") != "null"]
    return options or [schema]


_CHECKED_KEYS = ("minimum", "maximum", "exclusiveMinimum", "enum")


def script_bounds(model: type[BaseModel], names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The bounds a page's script checks its inputs against, read from the model's schema (never retyped in JS);
    an optional field gives its non-null option's bounds."""
    properties = _properties(model)
    return {
        name: {key: value for key, value in non_null_options(properties[name])[0].items() if key in _CHECKED_KEYS}
        for name in names
    }


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
