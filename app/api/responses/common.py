"""What every answer model shares: no keys beyond the documented ones, numbers that may have overflowed, text in
both languages, the overflow flags strict JSON adds, and the error answers.

The models describe answers; they never serialise one. A route still builds its answer as plain dicts and returns a
StrictJSONResponse (inf and NaN become null, listed in `nonfinite_fields`) or an NDJSONResponse, and names its
model in `responses=` (json_answer, stream), which only puts it into /openapi.json: nothing is re-serialised or
validated per request. tests/test_api_schemas.py validates real answers against these models with extra keys refused, so an answer
and its model cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class Answer(BaseModel):
    """An answer object: every key it may carry is a field (a key not listed here is an error in the test)."""

    model_config = ConfigDict(extra="forbid")


class Flagged(Answer):
    """A whole answer (or an NDJSON line): strict JSON lists here what it wrote as null."""

    nonfinite_fields: list[str] | None = Field(
        None,
        description="JSON paths of the values that overflowed (inf) or are undefined (NaN), written as null "
        "(the first 50); absent when every number is finite",
    )
    nonfinite_count: int | None = Field(None, description="how many values were written as null; absent when none")


Measured = Annotated[float | None, Field(description="a measured number; null where it overflowed (inf) or is NaN")]
Json = dict[str, Any]
Figure = Annotated[Json, Field(description="Plotly JSON: {data: [traces], layout: {...}}")]


class Bilingual(Answer):
    en: str
    zh: str


class Source(Answer):
    """Where an answer came from."""

    cached: bool = Field(description="false only when this request computed it")
    source: str = Field(description="computed | coalesced | memory | disk | redis")


class FieldProblem(Answer):
    field: str = Field(description="the setting at fault, as a path into the request (depth, runs.0.seed, body)")
    message: str
    allowed: str = Field(description="what the field allows, in words")
    input: int | float | str | bool | None = Field(None, description="the value sent, when short")


class ErrorAnswer(Answer):
    """Every 4xx and 503: `error` sums up the first problem; `errors` names each field."""

    error: str
    status: int
    errors: list[FieldProblem] | None = None
    errors_omitted: int | None = Field(None, description="problems past the first 20, not listed")
    retry_after: int | None = Field(None, description="seconds to wait (also the Retry-After header): 429 and 503")


REF = "#/components/schemas/{model}"


def ref(model: type[BaseModel]) -> dict[str, str]:
    """A reference to `model` in /openapi.json's components (responses/__init__.py's `document` puts it there)."""
    return {"$ref": REF.format(model=model.__name__)}


def json_answer(model: type[BaseModel], status: int = 200) -> dict[int | str, dict[str, Any]]:
    """The `responses=` entry of a route's JSON answer. A reference, not `response_model=`: FastAPI would build a
    validator for every field of every model to write /openapi.json (2.6 s against 0.3 s at the first request of
    it, on the event loop), while responses/__init__.py's `document` adds every model's schema in one pass."""
    summary = (model.__doc__ or model.__name__).strip().splitlines()[0]
    return {status: {"description": summary, "content": {"application/json": {"schema": ref(model)}}}}


def _error(description: str) -> dict[str, Any]:
    """An error answer is JSON whatever the route answers when it succeeds (a stream, SVG, HTML)."""
    return {"description": description, "content": {"application/json": {"schema": ref(ErrorAnswer)}}}


BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: _error("the body is not JSON at all"),
    413: _error("the body is larger than RESNORM_MAX_BODY_BYTES"),
    415: _error("a body sent with a Content-Type other than application/json"),
    422: _error("JSON, but not an acceptable request: each bad field, named with what it allows"),
}
QUERY_ERRORS: dict[int | str, dict[str, Any]] = {422: _error("a query key out of range or of the wrong type")}
BUSY: dict[int | str, dict[str, Any]] = {
    503: _error("every compute slot stayed busy past the queue timeout, or the queue is full (Retry-After)")
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: _error("nothing of that name here: the allowed ones are named")}
FORBIDDEN: dict[int | str, dict[str, Any]] = {403: _error("not the presenter key of this follow session")}
TOO_MANY: dict[int | str, dict[str, Any]] = {429: _error("every training slot of this worker is taken (Retry-After)")}
COMPUTING = {**BODY_ERRORS, **BUSY}  # a JSON body, then a compute slot


def stream(line: type[BaseModel], description: str) -> dict[int | str, dict[str, Any]]:
    """The 200 entry of an NDJSON answer: each line is a `line` (OpenAPI's itemSchema, as FastAPI writes for its own
    JSON Lines streams)."""
    return {200: {"description": description, "content": {"application/x-ndjson": {"itemSchema": ref(line)}}}}
