"""A GGUF model (4-bit weights) dequantised once into a plain Hugging Face folder of float32 safetensors.

transformers dequantises GGUF weights on every load (SmolLM2: minutes on one core); the float32 copy loads in
seconds. A file lock makes the
conversion happen once even when several worker processes ask for the model at the same moment.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DONE = "converted.ok"  # written last: a folder without it is a conversion that did not finish


def converted_folder(models_dir: Path, gguf_path: Path, digest: str) -> Path:
    """The cache folder for this GGUF file, named by the sha256 of its content (weights.py): new weights under the
    same name, size and modification time still get a conversion of their own."""
    return models_dir / f"{gguf_path.stem}-{digest[:16]}"


def is_converted(folder: Path) -> bool:
    return (folder / DONE).is_file()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the handle closes, also when the process dies
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_converted(models_dir: Path, gguf_path: Path, digest: str, causal: bool = True) -> Path:
    """The float32 folder for `gguf_path` (whose content has `digest`), converting it first if no process has yet."""
    folder = converted_folder(models_dir, gguf_path, digest)
    if is_converted(folder):
        return folder
    with _locked(folder.with_name(folder.name + ".lock")):
        if is_converted(folder):  # another process converted it while this one waited
            return folder
        _convert(gguf_path, folder, causal)
    return folder


def _convert(gguf_path: Path, folder: Path, causal: bool) -> None:
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    loader = AutoModelForCausalLM if causal else AutoModel
    model = loader.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    # save_pretrained refuses a model loaded from GGUF: write the dequantised tensors and a plain config instead
    from safetensors.torch import save_file

    partial.mkdir(parents=True)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(model).__name__]
    config.save_pretrained(str(partial))
    state = {name: tensor.contiguous() for name, tensor in model.state_dict().items()}
    if getattr(config, "tie_word_embeddings", False):
        state.pop("lm_head.weight", None)  # the head is the input embedding, tied again on load
    save_file(state, str(partial / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(str(partial))
    (partial / DONE).write_text(f"dequantised from {gguf_path.name} to float32\n")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)
