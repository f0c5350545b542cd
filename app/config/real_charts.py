"""The requests of /models' charts (POST /api/figure/models-*): one model's trace, two models side by side, or one
model's sentence set beside the reader's sentence. Each chart kind (app/figures/) names one of REAL_REQUESTS."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .real import DEFAULT_TEXT, MAX_TEXT_CHARS, MAX_TOKENS, RealTraceRequest, printable


class _ReaderText(BaseModel):
    """The reader's sentence, checked as POST /api/real_trace checks it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(
        DEFAULT_TEXT,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description=f"the reader's sentence (English, Chinese, ...; newlines and tabs allowed), at most {MAX_TOKENS} "
        "tokens",
    )

    @field_validator("text")
    @classmethod
    def _printable(cls, text: str) -> str:
        return printable(text)


class RealPairRequest(_ReaderText):
    """The stream chart: a model and, beside it, a second one (or none)."""

    model: str = Field("smollm2", min_length=1, max_length=200, description="a model from GET /api/real_models")
    compare: str = Field("minilm", min_length=1, max_length=200, description="a second model drawn beside it, or none")

    def traces(self) -> list[RealTraceRequest]:
        """The traces it draws: the model's, then the second model's (the same text, the default extras)."""
        names = [self.model] + ([self.compare] if self.compare not in ("none", self.model) else [])
        return [RealTraceRequest(model=name, text=self.text) for name in names]


class RealSetRequest(_ReaderText):
    """The sentence set's charts: one model over the built-in set, with the reader's sentence drawn beside it."""

    model: str = Field("smollm2", min_length=1, max_length=200, description="a model from GET /api/real_models")

    def own(self) -> RealTraceRequest:
        return RealTraceRequest(model=self.model, text=self.text)


REAL_REQUESTS: dict[str, type[BaseModel]] = {
    "real_trace": RealTraceRequest,
    "real_pair": RealPairRequest,
    "real_set": RealSetRequest,
}
