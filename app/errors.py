"""4xx answers that name the field and its allowed range; nothing a client sends may become a 500."""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from .jsonsafe import StrictJSONResponse


class FieldError(Exception):
    """A request that is well-formed but not acceptable, for a named field."""

    def __init__(
        self, field: str, message: str, allowed: str = "", status: int = 422, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.field, self.message, self.allowed, self.status = field, message, allowed, status
        self.retry_after = retry_after  # a 503 that will pass: the client may send the same request again then


class Busy(Exception):
    """Every compute slot stayed taken for the whole queue timeout."""

    def __init__(self, retry_after: int = 2, message: str = "the server is busy; try again shortly") -> None:
        super().__init__(message)
        self.retry_after, self.message = retry_after, message


def error_body(errors: list[dict[str, Any]], status: int) -> dict[str, Any]:
    first = errors[0] if errors else {}
    summary = f"{first.get('field', 'body')}: {first.get('message', 'invalid request')}"
    if first.get("allowed"):
        summary += f" (allowed: {first['allowed']})"
    return {"error": summary, "status": status, "errors": errors}


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


# What a value of the wrong type should have been, by pydantic error type (prefix): the last resort for `allowed`.
_EXPECTED_TYPE = (
    ("int_", "an integer"),
    ("float_", "a finite number"),
    ("bool_", "true or false"),
    ("string_", "a string"),
    ("list_", "a JSON list"),
    ("model_", "a JSON object"),
    ("dict_", "a JSON object"),
    ("json_invalid", "a valid JSON object"),
)
NOT_JSON = "a JSON object sent with Content-Type: application/json"
# A 256 kB body can hold 20,000 unknown keys: list only the first few, so the answer stays small and quick.
MAX_LISTED_ERRORS = 20


def _allowed_for(leaf: str, ctx: dict[str, Any] | None, error_type: str, model: type[BaseModel] | None) -> str:
    """The allowed range of `leaf`: from the model's schema when known, else from pydantic's error context,
    else the type the value should have had (never empty: a client must learn what to send instead)."""
    from .config import field_bounds

    bounds = field_bounds(leaf, model) if model is not None else ""
    if bounds:
        return bounds
    ctx = ctx or {}
    if "expected" in ctx:
        return str(ctx["expected"])
    low, high = ctx.get("ge", ctx.get("gt")), ctx.get("le", ctx.get("lt"))
    if low is not None or high is not None:
        return f"[{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]"
    if error_type == "extra_forbidden" and model is not None:
        return "known fields: " + ", ".join(model.model_fields)
    return next((expected for prefix, expected in _EXPECTED_TYPE if error_type.startswith(prefix)), "a valid value")


def _model_at(model: type[BaseModel] | None, parts: list[str]) -> type[BaseModel] | None:
    """The request model that owns the last part of an error location (runs.0.depth -> TraceConfig)."""
    for part in parts[:-1]:
        field = getattr(model, "model_fields", {}).get(part)
        inner = _inner_model(field.annotation) if field is not None else None
        if inner is None:
            break
        model = inner
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as TraceConfig, list[TraceConfig] or TraceConfig | None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in typing.get_args(annotation) if (m := _inner_model(arg)) is not None), None)


def validation_errors(raw: Sequence[Mapping[str, Any]], model: type[BaseModel] | None = None) -> list[dict[str, Any]]:
    """Pydantic errors -> [{field, message, allowed, input?}]. Model validators raise "field: why | allowed: range"."""
    out = []
    for err in raw:
        loc = tuple(err.get("loc", ()))
        message = str(err.get("msg", "invalid value"))
        field, allowed = _field_name(loc), None
        if err.get("type") == "json_invalid":
            field, message = "body", f"malformed JSON ({err.get('ctx', {}).get('error', 'decode error')})"
        elif field == "body" and isinstance(err.get("input"), bytes):  # FastAPI reads JSON only when the type says so
            message, allowed = "the body was not read as JSON (missing or non-JSON Content-Type)", NOT_JSON
        elif message.startswith("Value error, ") and ":" in message:
            named, _, why = message.removeprefix("Value error, ").partition(":")
            if named.strip().isidentifier():
                named = named.strip()
                if field == "body":
                    field = named
                elif field.split(".")[-1] != named:  # a model validator: loc is the model, name the field in it
                    field = f"{field}.{named}"
                message, _, allowed = why.strip().partition(" | allowed: ")
        parts = field.split(".")
        allowed = allowed or _allowed_for(parts[-1], err.get("ctx"), err.get("type", ""), _model_at(model, parts))
        entry: dict[str, Any] = {"field": field, "message": message, "allowed": allowed}
        if "input" in err and isinstance(err["input"], (int, float, str, bool)) and len(str(err["input"])) < 200:
            entry["input"] = err["input"]
        out.append(entry)
    return out


def _model_for(path: str) -> type | None:
    """The request model whose field table explains a validation error on this path (None: pydantic's own context).
    /api/presets' only key is TraceConfig's depth, with the same bounds. Bodies read by app/api/body.py bring their
    own model (InvalidBody.model), so only FastAPI's own query validation lands here."""
    from .config import TraceConfig

    return TraceConfig if path.startswith(("/api/trace", "/api/presets")) else None


NOT_FOUND_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found · 页面不存在</title><link rel="icon" href="data:,"></head>
<body style="font-family: sans-serif; margin: 3rem">
<h1>Page not found · 页面不存在</h1>
<p>This address is not a page of ResNorm Explorer. · 这个地址不是 ResNorm 探索器的页面。</p>
<p><a href="/">Start the tour · 从导览开始</a></p>
</body></html>"""


def _wants_page(request: Request) -> bool:
    """A browser asking for a page (not the JSON API) gets a page back."""
    return not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", "")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> StrictJSONResponse:
        # A body read by app/api/body.py brings its model and status (400 unparseable, 415 not JSON, 422 invalid).
        model = getattr(exc, "model", None) or _model_for(request.url.path)
        status, raw = getattr(exc, "status", 422), list(exc.errors())
        body = error_body(validation_errors(raw[:MAX_LISTED_ERRORS], model), status)
        if len(raw) > MAX_LISTED_ERRORS:
            body["errors_omitted"] = len(raw) - MAX_LISTED_ERRORS
        return StrictJSONResponse(body, status_code=status)

    @app.exception_handler(FieldError)
    async def _field(request: Request, exc: FieldError) -> StrictJSONResponse:
        errors = [{"field": exc.field, "message": exc.message, "allowed": exc.allowed}]
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return StrictJSONResponse(error_body(errors, exc.status), status_code=exc.status, headers=headers)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy) -> StrictJSONResponse:
        body = {"error": exc.message, "status": 503, "retry_after": exc.retry_after}
        return StrictJSONResponse(body, status_code=503, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404 and _wants_page(request):
            return HTMLResponse(NOT_FOUND_PAGE, status_code=404)
        if exc.status_code == 400:  # FastAPI's "error parsing the body" (unparseable JSON is 400 everywhere)
            cause = f" ({type(exc.__cause__).__name__})" if exc.__cause__ is not None else ""
            errors = [
                {
                    "field": "body",
                    "message": f"the body could not be parsed as JSON{cause}",
                    "allowed": "a valid JSON object",
                }
            ]
            return StrictJSONResponse(error_body(errors, 400), status_code=400)
        body = {"error": str(exc.detail), "status": exc.status_code}
        return StrictJSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))
