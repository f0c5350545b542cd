"""4xx answers that name the field and its allowed range; nothing a client sends may become a 500."""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.jsonsafe import StrictJSONResponse


class FieldError(Exception):
    """A request that is well-formed but not acceptable, for a named field."""

    def __init__(self, field: str, message: str, allowed: str = "", status: int = 422) -> None:
        super().__init__(message)
        self.field, self.message, self.allowed, self.status = field, message, allowed, status


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


def _allowed_for(leaf: str, ctx: dict[str, Any] | None, error_type: str, model: type | None) -> str:
    """The allowed range of `leaf`: from the model's schema when known, else from pydantic's error context."""
    from app.config import field_bounds

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
    if error_type == "json_invalid":
        return "a valid JSON object"
    return ""


def validation_errors(raw: list[dict[str, Any]], model: type | None = None) -> list[dict[str, Any]]:
    """Pydantic errors -> [{field, message, allowed, input?}]. Model validators raise "field: why | allowed: range"."""
    out = []
    for err in raw:
        loc = tuple(err.get("loc", ()))
        message = str(err.get("msg", "invalid value"))
        field, allowed = _field_name(loc), None
        if err.get("type") == "json_invalid":
            field, message = "body", f"malformed JSON ({err.get('ctx', {}).get('error', 'decode error')})"
        elif message.startswith("Value error, ") and ":" in message:
            named, _, why = message.removeprefix("Value error, ").partition(":")
            if named.strip().isidentifier():
                named = named.strip()
                if field == "body":
                    field = named
                elif field.split(".")[-1] != named:  # a model validator: loc is the model, name the field in it
                    field = f"{field}.{named}"
                message, _, allowed = why.strip().partition(" | allowed: ")
        leaf = field.split(".")[-1]
        entry = {"field": field, "message": message,
                 "allowed": allowed or _allowed_for(leaf, err.get("ctx"), err.get("type", ""), model)}
        if "input" in err and isinstance(err["input"], (int, float, str, bool)) and len(str(err["input"])) < 200:
            entry["input"] = err["input"]
        out.append(entry)
    return out


def _model_for(path: str) -> type | None:
    """The request model whose field table explains a validation error on this path (None: pydantic's own context)."""
    from app.config import TraceConfig

    return TraceConfig if path.startswith(("/api/trace", "/api/sweep")) else None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> StrictJSONResponse:
        model = _model_for(request.url.path)
        return StrictJSONResponse(error_body(validation_errors(list(exc.errors()), model), 422), status_code=422)

    @app.exception_handler(FieldError)
    async def _field(request: Request, exc: FieldError) -> StrictJSONResponse:
        errors = [{"field": exc.field, "message": exc.message, "allowed": exc.allowed}]
        return StrictJSONResponse(error_body(errors, exc.status), status_code=exc.status)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy) -> StrictJSONResponse:
        body = {"error": exc.message, "status": 503, "retry_after": exc.retry_after}
        return StrictJSONResponse(body, status_code=503, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> StrictJSONResponse:
        body = {"error": str(exc.detail), "status": exc.status_code}
        return StrictJSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))
