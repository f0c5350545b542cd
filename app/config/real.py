"""The request for a pretrained model's trace (POST /api/real_trace): which model, which sentence, which extras."""

from __future__ import annotations

import hashlib
import unicodedata

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_TEXT_CHARS = 400
MAX_TOKENS = 48  # a sentence or two: the layer x token heatmap stays readable and a 30-block model answers in ~1 s
DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog."


class RealTraceRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field("minilm", min_length=1, max_length=200, description="a model from GET /api/real_models")
    text: str = Field(
        DEFAULT_TEXT,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description=f"the sentence (English, Chinese, ...), at most {MAX_TOKENS} tokens",
    )
    gradients: bool = Field(default=True, description="causal models: the gradient of the next-token loss per block")

    @field_validator("text")
    @classmethod
    def _printable(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("text: is empty | allowed: a sentence of 1 to 400 characters")
        if any(unicodedata.category(c) == "Cc" for c in text):
            raise ValueError("text: contains control characters | allowed: printable text without control characters")
        return text

    def cache_key(self, revision: str) -> str:
        """(model, its weights' revision, text, options): the trace is a function of these alone."""
        body = self.model_dump_json()
        return "real_trace:" + hashlib.sha256(f"{revision}\n{body}".encode()).hexdigest()
