"""Load a pretrained model and its tokenizer from a ModelSource, offline unless the operator allowed downloads.

safetensors only (`use_safetensors=True`: transformers then refuses pickled weights), or a GGUF file dequantised
once to float32 safetensors (gguf_cache.py). Every parameter is frozen: the explorer only reads the model, and
gradients are taken with respect to the stream, never the weights.

After loading, every parameter and buffer is copied into the process's own (anonymous) memory: a memory-mapped
file that is truncated in place (`cp new old`, `rsync --inplace`) would otherwise kill the process with SIGBUS at
the next forward pass. The price is that processes no longer share the weights' pages (docs/models.md).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gguf_cache import ensure_converted
from .layout import Family, Layout, find_layout
from .sources import ModelSource
from .weights import DIGESTS, WeightsChanged

OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@dataclass
class LoadedModel:
    source: ModelSource
    model: Any  # a transformers PreTrainedModel
    tokenizer: Any
    layout: Layout
    causal: bool
    model_type: str
    d_model: int
    digest: str  # sha256 of the files the weights were loaded from (weights.py): part of every cache key
    memory_mb: float  # parameters and buffers, in this process's own memory
    load_s: float

    @property
    def family(self) -> Family:
        return self.layout.family

    @property
    def revision(self) -> str:
        return self.digest[:12]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.source.name,
            "label": self.source.label,
            "kind": self.source.kind,
            "family": self.family,
            "model_type": self.model_type,
            "causal": self.causal,
            "layers": len(self.layout.blocks),
            "d_model": self.d_model,
            "quantised": self.source.quantised,
            "revision": self.revision,
            "weights_sha256": self.digest,
            **library_versions(),
            "memory_mb": round(self.memory_mb, 1),
            "load_s": round(self.load_s, 2),
        }


@functools.cache
def library_versions() -> dict[str, str]:
    """The versions of the libraries that compute a trace, read from their installed metadata (nothing imported):
    in every answer beside the weights' digest, and in its cache key."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("transformers", "torch"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


_switching = threading.RLock()  # one load at a time changes the switches, so each gives back what it found


@contextmanager
def offline(allow_downloads: bool) -> Iterator[None]:
    """Nothing may wait on a network that is not there: the Hugging Face offline switches for the duration of a
    load, put back as they were afterwards (a notebook's later downloads must still work).

    huggingface_hub reads HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE once, when it is imported, into
    `huggingface_hub.constants.HF_HUB_OFFLINE`, which `is_offline_mode()` (and transformers 5 through it) consults
    on every request: so both are switched, huggingface_hub imported first with the caller's environment, so the
    value it keeps is the caller's own and not this load's."""
    import huggingface_hub.constants as hub
    import transformers  # noqa: F401  (imported, with huggingface_hub, before any switch is changed)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    with _switching:
        before = {name: os.environ.get(name) for name in OFFLINE_VARIABLES}
        hub_before = hub.HF_HUB_OFFLINE
        if not allow_downloads:
            os.environ.update(dict.fromkeys(OFFLINE_VARIABLES, "1"))
            hub.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            hub.HF_HUB_OFFLINE = hub_before
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


DECODER_TYPES = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo", "smollm3")


def _is_causal(config: Any) -> bool:
    names = getattr(config, "architectures", None) or []
    if getattr(config, "is_encoder_decoder", False):
        return False
    return config.model_type in DECODER_TYPES or any(n.endswith(("ForCausalLM", "LMHeadModel")) for n in names)


def folder_of(source: ModelSource, models_dir: Path, digest: str) -> str:
    """Where transformers reads the model from: the source's folder, or a GGUF file's float32 copy."""
    if source.gguf_file:
        return str(ensure_converted(models_dir, Path(source.location) / source.gguf_file, digest))
    return source.location


def load_tokenizer(source: ModelSource, models_dir: Path, digest: str, allow_downloads: bool = False) -> Any:
    """The tokenizer alone (to count a text's tokens before any weights are loaded or converted)."""
    from transformers import AutoTokenizer

    with offline(allow_downloads):
        if source.gguf_file:
            from .gguf_cache import converted_folder, is_converted

            folder = converted_folder(models_dir, Path(source.location) / source.gguf_file, digest)
            if is_converted(folder):
                return AutoTokenizer.from_pretrained(str(folder))
            return AutoTokenizer.from_pretrained(source.location, gguf_file=source.gguf_file)
        return AutoTokenizer.from_pretrained(source.location)


def load_model(source: ModelSource, models_dir: Path, allow_downloads: bool = False) -> LoadedModel:
    """The model and tokenizer of `source`, frozen, in float32, in evaluation mode, in this process's memory, with
    eager attention (its weights can be returned); tagged with the digest of the files it was read from."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    signature, digest = DIGESTS.current(source)
    with offline(allow_downloads):
        location = folder_of(source, models_dir, digest)
        config = AutoConfig.from_pretrained(location)
        causal = _is_causal(config)
        loader = AutoModelForCausalLM if causal else AutoModel
        model = loader.from_pretrained(location, use_safetensors=True, dtype=torch.float32, attn_implementation="eager")
        tokenizer = AutoTokenizer.from_pretrained(location)
    to_own_memory(model)
    if not DIGESTS.unchanged_since(source, signature):  # written to while loading: the weights match no digest
        raise WeightsChanged(f"the weight files of {source.name} changed while they were loaded")
    loaded = wrap_model(model, tokenizer, source, causal)
    loaded.digest, loaded.load_s = digest, time.perf_counter() - started
    return loaded


def to_own_memory(model: Any) -> None:
    """Copy every parameter and buffer out of the file mapping into anonymous memory (tied weights stay tied:
    `parameters()` lists a shared tensor once, and its one Parameter object gets the copy)."""
    import torch

    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            tensor.data = tensor.data.clone()


def wrap_model(model: Any, tokenizer: Any, source: ModelSource, causal: bool) -> LoadedModel:
    """A model already in memory (loaded above, or built from a config in a test), frozen and described."""
    model.eval().requires_grad_(False)
    return describe_model(model, tokenizer, source, causal)


def describe_model(model: Any, tokenizer: Any, source: ModelSource, causal: bool, digest: str = "") -> LoadedModel:
    """The LoadedModel around `model`, changing nothing in it (the notebook traces a user's model this way)."""
    config = model.config
    tensors = list(model.parameters()) + list(model.buffers())
    memory = sum(t.numel() * t.element_size() for t in tensors) / 2**20
    d_model = int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0))
    layout = find_layout(model, config.model_type)
    return LoadedModel(source, model, tokenizer, layout, causal, config.model_type, d_model, digest, memory, 0.0)
