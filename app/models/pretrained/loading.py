"""Load a pretrained model and its tokenizer from a ModelSource, offline unless the operator allowed downloads.

safetensors only (`use_safetensors=True`: transformers then refuses pickled weights), or a GGUF file dequantised
once to float32 safetensors (gguf_cache.py). Every parameter is frozen: the explorer only reads the model, and
gradients are taken with respect to the stream, never the weights.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gguf_cache import ensure_converted
from .layout import Family, Layout, find_layout
from .sources import ModelSource, source_revision


@dataclass
class LoadedModel:
    source: ModelSource
    model: Any  # a transformers PreTrainedModel
    tokenizer: Any
    layout: Layout
    causal: bool
    model_type: str
    d_model: int
    revision: str  # changes when the weights change: part of every cache key
    memory_mb: float  # parameters and buffers (memory-mapped pages may be shared with other processes)
    load_s: float

    @property
    def family(self) -> Family:
        return self.layout.family

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
            "memory_mb": round(self.memory_mb, 1),
            "load_s": round(self.load_s, 2),
        }


def _quiet_offline(allow_downloads: bool) -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    if not allow_downloads:  # nothing may wait on a network that is not there
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"


DECODER_TYPES = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo", "smollm3")


def _is_causal(config: Any) -> bool:
    names = getattr(config, "architectures", None) or []
    if getattr(config, "is_encoder_decoder", False):
        return False
    return config.model_type in DECODER_TYPES or any(n.endswith(("ForCausalLM", "LMHeadModel")) for n in names)


def load_model(source: ModelSource, models_dir: Path, allow_downloads: bool = False) -> LoadedModel:
    """The model and tokenizer of `source`, frozen, in float32, in evaluation mode."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer

    _quiet_offline(allow_downloads)
    started = time.perf_counter()
    location = source.location
    if source.gguf_file:
        location = str(ensure_converted(models_dir, Path(source.location) / source.gguf_file))
    config = AutoConfig.from_pretrained(location)
    causal = _is_causal(config)
    loader = AutoModelForCausalLM if causal else AutoModel
    model = loader.from_pretrained(location, use_safetensors=True, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(location)
    loaded = wrap_model(model, tokenizer, source, causal)
    loaded.revision, loaded.load_s = source_revision(source), time.perf_counter() - started
    return loaded


def wrap_model(model: Any, tokenizer: Any, source: ModelSource, causal: bool) -> LoadedModel:
    """A model already in memory (loaded above, or built from a config in a test), frozen and described."""
    model.eval().requires_grad_(False)
    config = model.config
    tensors = list(model.parameters()) + list(model.buffers())
    memory = sum(t.numel() * t.element_size() for t in tensors) / 2**20
    d_model = int(getattr(config, "hidden_size", 0) or getattr(config, "n_embd", 0))
    layout = find_layout(model, config.model_type)
    return LoadedModel(source, model, tokenizer, layout, causal, config.model_type, d_model, "", memory, 0.0)
