"""The answer models: what each JSON endpoint answers, for /openapi.json (see common.py for how they are used)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ...jsonsafe import StrictJSONResponse
from ..body import body_doc
from .charts import ChartAnswer, DeckAnswer, SlideTrainingMessage, SlideView
from .common import (
    BODY_ERRORS,
    BUSY,
    COMPUTING,
    FORBIDDEN,
    NOT_FOUND,
    QUERY_ERRORS,
    REF,
    TOO_MANY,
    ErrorAnswer,
    json_answer,
    ref,
    stream,
)
from .lessons import (
    BatchDependenceAnswer,
    ChainAnswer,
    LayerNormAnswer,
    NormSpeedAnswer,
    PrecisionAnswer,
    RecordedAnswer,
    SoftmaxAnswer,
)
from .service import FollowOpened, FollowState, HealthAnswer, RealModelsAnswer, RealTraceAnswer, RoomAnswer, TokenCount
from .trace import (
    BudgetAnswer,
    DepthScanAnswer,
    LawsAnswer,
    PathsAnswer,
    PresetsAnswer,
    SweepAnswer,
    SweepLine,
    TraceAnswer,
)
from .train import TrainBudgetAnswer, TrainChartMessage, TrainEvent, TrainPresetsAnswer, TrainStatus

Responses = dict[int | str, dict[str, Any]]


def json_route(
    answer: type[BaseModel], *errors: Responses, body: type[BaseModel] | None = None, status: int = 200, **more: Any
) -> dict[str, Any]:
    """A strict-JSON route's decorator keywords: its answer's model and its errors for /openapi.json, and the body
    json_body reads (FastAPI does not see it in the signature), e.g. `@router.post(path, **json_route(TraceAnswer,
    COMPUTING, body=TraceConfig))`."""
    responses = json_answer(answer, status)
    for table in errors:
        responses = {**responses, **table}
    keywords: dict[str, Any] = {"response_class": StrictJSONResponse, "responses": responses, "status_code": status}
    return {**keywords, **({"openapi_extra": body_doc(body)} if body is not None else {}), **more}


def _models() -> dict[str, type[BaseModel]]:
    """Every answer model this package exports, by name (the names /openapi.json's references use)."""
    exported = {name: globals()[name] for name in __all__}
    return {name: m for name, m in exported.items() if isinstance(m, type) and issubclass(m, BaseModel)}


def document(app: FastAPI) -> None:
    """Make /openapi.json list every answer model routes reference (json_answer, stream, the errors) beside what
    FastAPI found (tests/test_api_schemas.py checks that every reference in it resolves)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        _, definitions = models_json_schema([(model, "serialization") for model in MODELS.values()], ref_template=REF)
        schema.setdefault("components", {}).setdefault("schemas", {}).update(definitions.get("$defs", {}))
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


__all__ = [
    "BODY_ERRORS",
    "BUSY",
    "COMPUTING",
    "FORBIDDEN",
    "NOT_FOUND",
    "QUERY_ERRORS",
    "TOO_MANY",
    "BatchDependenceAnswer",
    "BudgetAnswer",
    "ChainAnswer",
    "ChartAnswer",
    "DeckAnswer",
    "DepthScanAnswer",
    "ErrorAnswer",
    "FollowOpened",
    "FollowState",
    "HealthAnswer",
    "LawsAnswer",
    "LayerNormAnswer",
    "NormSpeedAnswer",
    "PathsAnswer",
    "PrecisionAnswer",
    "PresetsAnswer",
    "RealModelsAnswer",
    "RealTraceAnswer",
    "RecordedAnswer",
    "RoomAnswer",
    "SlideTrainingMessage",
    "SlideView",
    "SoftmaxAnswer",
    "SweepAnswer",
    "SweepLine",
    "TokenCount",
    "TraceAnswer",
    "TrainBudgetAnswer",
    "TrainChartMessage",
    "TrainEvent",
    "TrainPresetsAnswer",
    "TrainStatus",
    "document",
    "json_answer",
    "json_route",
    "ref",
    "stream",
]

MODELS = _models()
