"""JSON request bodies, read the same strict way by every endpoint (see docs/api.md, "Errors").

- No body (or only whitespace): every field takes its default.
- A body that is not JSON at all (bad syntax, not UTF-8, nested too deeply): 400, field `body`.
- A Content-Type other than application/json: 415, field `body`, saying which header to send.
- JSON that is not an acceptable request (null, a list, `{"depth": true}`, `{"depth": "12"}`, an unknown key): 422
  naming each field and what it allows. Validation is pydantic's strict JSON mode: true is not 1 and "12" is
  not 12 (the GET forms, whose values are all text, still convert "12").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)

UNPARSEABLE_STATUS = 400
WRONG_TYPE_STATUS = 415


class InvalidBody(RequestValidationError):
    """Validation errors of a body, with the request model that explains them and the status to answer."""

    def __init__(self, errors: Sequence[Mapping[str, Any]], model: type[BaseModel] | None, status: int = 422) -> None:
        super().__init__(errors)
        self.model, self.status = model, status


def _is_json(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


async def json_body(request: Request, model: type[Model], context: dict[str, Any] | None = None) -> Model:
    """The body validated against `model` in strict JSON mode (with a validation `context`, e.g. {"budget": False}),
    or InvalidBody with the right status."""
    raw = await request.body()
    if not raw.strip():
        return model.model_validate({}, context=context)
    if not _is_json(request):
        raise InvalidBody(
            [
                {
                    "type": "not_json",
                    "loc": ("body",),
                    "input": b"",
                    "msg": "the body was not read as JSON (missing or non-JSON Content-Type)",
                }
            ],
            model,
            WRONG_TYPE_STATUS,
        )
    try:
        return model.model_validate_json(raw, strict=True, context=context)
    except ValidationError as exc:
        errors = list(exc.errors())
        unparseable = any(err["type"] == "json_invalid" for err in errors)
        raise InvalidBody(errors, model, UNPARSEABLE_STATUS if unparseable else 422) from None
    except (RecursionError, ValueError) as exc:  # pydantic-core's own limits, e.g. nesting
        raise InvalidBody(
            [{"type": "json_invalid", "loc": ("body",), "msg": "invalid JSON", "ctx": {"error": type(exc).__name__}}],
            model,
            UNPARSEABLE_STATUS,
        ) from None


def body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI for a JSON body read by json_body (FastAPI does not see it in the signature)."""
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": model.model_json_schema()}}}}
