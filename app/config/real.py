"""The request for a pretrained model's trace (POST /api/real_trace): which model, which sentence, which extras."""

from __future__ import annotations

import hashlib
import unicodedata

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_TEXT_CHARS = 2000
# A paragraph: a 256-token SmolLM2 trace with gradients takes a few seconds on 2 cores (docs/models.md); the
# layer x token heatmap stays readable when zoomed.
MAX_TOKENS = 256
DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog."
ALLOWED_CONTROL = "\n\t"  # paragraphs, code and Sun et al. 2024's "\n" outliers; other control characters refused


def printable(text: str) -> str:
    """A text a model may read: not blank, no control characters but newline and tab."""
    if not text.strip():
        raise ValueError(f"text: is empty | allowed: a text of 1 to {MAX_TEXT_CHARS} characters")
    if any(unicodedata.category(c) == "Cc" and c not in ALLOWED_CONTROL for c in text):
        raise ValueError(
            "text: contains control characters | allowed: printable text; newline and tab are the only control "
            "characters allowed"
        )
    return text


class RealTraceRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field("minilm", min_length=1, max_length=200, description="a model from GET /api/real_models")
    text: str = Field(
        DEFAULT_TEXT,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        description=f"the sentence or paragraph (English, Chinese, ...; newlines and tabs allowed), at most "
        f"{MAX_TOKENS} tokens",
    )
    gradients: bool = Field(default=True, description="causal models: the gradient of the next-token loss per block")
    attention: bool = Field(
        default=True, description="the attention mass on the first token per block and head (the attention sink)"
    )
    special_tokens: bool = Field(
        default=False,
        description="read special-token text typed in the sentence ([MASK], <|im_start|>) as the model's special "
        "tokens; by default it is plain text",
    )

    @field_validator("text")
    @classmethod
    def _printable(cls, text: str) -> str:
        return printable(text)

    def cache_key(self, digest: str) -> str:
        """(the digest of the model's files, text, options): the trace is a function of these alone."""
        body = self.model_dump_json()
        return "real_trace:" + hashlib.sha256(f"{digest}\n{body}".encode()).hexdigest()
