"""Server settings: one pydantic-settings model read from RESNORM_* environment variables, once per process.

Each field's default, bounds and description live here and nowhere else: `python -m app --help` (and
`resnorm-explorer --help`) builds its options from this model, and the command writes the options it was
given into the same variables before uvicorn starts, so every worker process reads one consistent set.
Defaults suit a laptop; the Docker image sets host 0.0.0.0 and workers 0 (one per core).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, ValidationError, field_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "RESNORM_"
# scheme://host[:port]: what a browser sends as Origin (RFC 6454), so listed origins compare as strings
ORIGIN = re.compile(r"https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?")
MAX_AUTO_WORKERS = 8  # each worker holds its own torch (~300 MB) and cache: more rarely helps a room
Language = Literal["en", "zh"]


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def auto_workers() -> int:
    return max(1, min(_cpu_count(), MAX_AUTO_WORKERS))


class Settings(BaseSettings):
    # env_ignore_empty: `RESNORM_PORT=` means "not set", as a blank line in a compose file would
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="ignore", env_ignore_empty=True, validate_default=True
    )

    host: str = Field(
        "127.0.0.1",
        description="address to bind (0.0.0.0 inside Docker; 127.0.0.1 keeps the server private to this machine)",
    )
    port: int = Field(8000, ge=1, le=65535, description="TCP port")
    workers: int = Field(1, ge=0, description="uvicorn worker processes (0 = one per core, at most 8)")
    torch_threads: int = Field(
        0, ge=0, description="torch threads per model run (0 = cores / (workers x compute slots), at least 1)"
    )
    compute_slots: int = Field(2, ge=1, description="model runs at once in each worker")
    queue_timeout_s: float = Field(
        10.0, ge=0.0, description="seconds a request waits for a compute slot before 503 + Retry-After"
    )
    cache_size: int = Field(256, ge=0, description="results kept in each worker's memory, in front of the disk cache")
    max_train_runs: int = Field(1, ge=1, description="training streams at once per worker; more get 429")
    # 4096 long decimals fit in the default
    max_body_bytes: int = Field(
        262144, ge=1024, description="largest accepted request body in bytes; larger ones get 413"
    )
    default_lang: Language = Field("en", description="page language when the browser states none (en or zh)")
    public_url: str | None = Field(
        None,
        description="address students' phones should open, e.g. "
        "http://192.168.1.20:8000; set it inside Docker where the container cannot "
        "see the host's address",
    )
    cors_origins: str = Field(
        "",
        description="origins whose pages may call this server's API, separated by commas, e.g. https://me.github.io: a "
        "static copy built with `resnorm-explorer site --server URL` and hosted there (default: none)",
    )
    cache_dir: str = Field(
        "", description="folder of the result cache shared by this server's workers (default: the user's cache folder)"
    )
    cache_size_mb: int = Field(
        512, ge=1, description="largest size of the disk cache in MB; the least recently stored results leave first"
    )
    redis_url: str = Field(
        "", description="redis://host:port/db: a result cache shared by several servers (default: none)"
    )
    warm: bool = Field(True, description="compute every page's default view in the background at start (0 = off)")
    compute_processes: bool = Field(
        True,
        description="run models in child processes, one per compute slot, so "
        "they use every core (0 = in threads of the worker)",
    )
    compute_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="how much lower than the web process model runs are scheduled (nice; compute processes and "
        "the pretrained models' process), so pages and scripts are answered while every slot computes (0 = same)",
    )

    # Pretrained models (/models, POST /api/real_trace; docs/models.md)
    models: str = Field(
        "",
        description="extra pretrained models besides the packaged minilm and smollm2: comma-separated local "
        "Hugging Face folders, or hub ids such as gpt2 (hub ids only with RESNORM_MODELS_DOWNLOAD=1)",
    )
    models_download: bool = Field(
        False, description="let the hub ids listed in RESNORM_MODELS be downloaded on first use (default: offline)"
    )
    models_dir: str = Field(
        "",
        description="folder of the packaged models (the fetch command unpacks them into it) and of converted model "
        "weights (default: models/ in the user's cache folder)",
    )
    models_memory_mb: int = Field(
        1536,
        ge=64,
        description="memory for loaded pretrained models (the server's models process); least recently "
        "used unload first",
    )
    models_batch: int = Field(
        16,
        ge=1,
        description="sentences of one pretrained model traced together in one padded batch (1 = one at a time)",
    )
    models_batch_tokens: int = Field(
        512,
        ge=256,
        description="largest padded batch of pretrained-model sentences, in tokens (sentences x the longest); "
        "bounds the memory of one batch",
    )

    @field_validator("workers")
    @classmethod
    def _resolve_auto_workers(cls, workers: int) -> int:
        return workers or auto_workers()  # 0 resolved here, once, so every worker process agrees

    @field_validator("public_url")
    @classmethod
    def _full_address(cls, url: str | None) -> str | None:
        if url is None or not url.strip():
            return None
        url = url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
            raise ValueError(f"must be a full address such as http://192.168.1.20:8000, got {url!r}")
        return url

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, text: str) -> str:
        origins = [part.strip().rstrip("/").lower() for part in text.split(",") if part.strip()]
        for origin in origins:
            if not ORIGIN.fullmatch(origin):
                raise ValueError(
                    f"each must be an origin such as https://me.github.io or http://192.168.1.20:8080 (scheme, host, "
                    f"optional port; no path, no *), got {origin!r}"
                )
        return ",".join(dict.fromkeys(origins))

    def cors_origin_list(self) -> list[str]:
        return [origin for origin in self.cors_origins.split(",") if origin]

    @field_validator("redis_url")
    @classmethod
    def _redis_address(cls, url: str) -> str:
        url = url.strip()
        if url and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"must look like redis://host:6379/0, got {url!r}")
        return url

    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir.strip() else default_cache_dir()

    def resolved_models_dir(self) -> Path:
        return Path(self.models_dir).expanduser() if self.models_dir.strip() else default_cache_dir() / "models"

    def threads_per_run(self) -> int:
        if self.torch_threads > 0:
            return self.torch_threads
        return max(1, _cpu_count() // max(1, self.workers * self.compute_slots))

    def train_parallel(self) -> int:
        """Runs of one training request stepped at once: a training slot's share of the cores (2 on a 2-core laptop
        with one worker: a slide's Post-LN and Pre-LN runs side by side; 1 with two workers)."""
        return max(1, _cpu_count() // max(1, self.workers * self.max_train_runs))


def default_cache_dir(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> Path:
    """The user's cache folder by each platform's convention, with a folder of our own inside."""
    if platform.startswith("win"):
        base = environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "resnorm-explorer" / "Cache"
    if platform == "darwin":
        return Path.home() / "Library" / "Caches" / "resnorm-explorer"
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "resnorm-explorer"


def env_name(field: str) -> str:
    return ENV_PREFIX + field.upper()


def choices(field: str) -> tuple[str, ...]:
    """The allowed values of a Literal field (empty for any other field)."""
    annotation = Settings.model_fields[field].annotation
    return get_args(annotation) if getattr(annotation, "__origin__", None) is Literal else ()


def _problem(field: str, error: ErrorDetails) -> str:
    """One pydantic error as the sentence a lecturer reads: what the setting allows and what it got."""
    kind, ctx, got = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}, got {got}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}, got {got}"
    if kind == "literal_error":
        return f"must be one of {', '.join(choices(field))}, got {got!r}"
    if kind.endswith("_parsing") or kind.endswith("_type"):
        return f"expected {kind.split('_')[0]}, got {got!r}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return f"{error['msg']}, got {got!r}"


def describe(exc: ValidationError) -> str:
    """'RESNORM_PORT: must be <= 65535, got 70000; ...' for every field that failed."""
    return "; ".join(f"{env_name(str(e['loc'][0]))}: {_problem(str(e['loc'][0]), e)}" for e in exc.errors())


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment, `overrides` (command-line options) winning; ValueError names the variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ValueError(describe(exc)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
