"""What a slide asks the API for: one "source" per request, written the way the browser sends it.

A source is {"api": name, "body"/"query": ...} for one of POST /api/trace, POST /api/laws, GET /api/chain, POST /api/layernorm,
POST /api/softmax, GET /api/precision, POST /api/batch_dependence, POST /api/paths or POST /api/train. Every config is validated here, when the deck is built,
by the same request models the API uses, so a slide cannot ask for something the API would refuse.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ...config import PRESETS, TraceConfig, preset_config
from ...config.presets import ARCH_FIELDS
from ..depth_scan import DepthScan
from ..lessons.batch import BatchDependenceRequest
from ..lessons.chain import ChainRequest
from ..lessons.layernorm import LayerNormRequest
from ..lessons.precision import PrecisionRequest
from ..lessons.softmax import SoftmaxRequest
from ..lr_warmup import RecordedRequest
from ..paths import PathsRequest
from ..train import TrainRequest
from ..train_presets import DEEP, SETTINGS, kind_config

TRACE_DEFAULTS = TraceConfig()


def model(preset: str | None = None, **fields: Any) -> TraceConfig:
    """A TraceConfig: a preset (app.config.PRESETS) resolved at the given depth and sizes, then `fields` on top."""
    sizes = {k: v for k, v in fields.items() if k not in ARCH_FIELDS}
    base = TraceConfig(**sizes)
    cfg = preset_config(preset, base) if preset else base
    return TraceConfig(**{**cfg.model_dump(), **fields})


def trace(cfg: TraceConfig) -> dict[str, Any]:
    return {"api": "trace", "body": cfg.model_dump()}


def laws(cfg: TraceConfig) -> dict[str, Any]:
    """POST /api/laws: the growth laws fitted to this trace's stream, computed on the server (app/experiments/laws.py)."""
    return {"api": "laws", "body": cfg.model_dump()}


def depth_scan() -> dict[str, Any]:
    """POST /api/depth_scan: Post-LN and Pre-LN (2017 recipe) at depths 6-96, seeds 0-3 (app/experiments/depth_scan.py)."""
    return {"api": "depth_scan", "body": DepthScan().model_dump()}


def paths(cfg: TraceConfig, samples: int = 8) -> dict[str, Any]:
    """POST /api/paths: Veit et al.'s unrolled view of a Pre-norm model (app/experiments/paths.py)."""
    return {"api": "paths", "body": PathsRequest(model=cfg, samples=samples).model_dump()}


def chain(derivative: float, depth: int) -> dict[str, Any]:
    return {"api": "chain", "query": ChainRequest(derivative=derivative, depth=depth).model_dump()}


def layernorm(**fields: Any) -> dict[str, Any]:
    LayerNormRequest(**fields)
    return {"api": "layernorm", "body": fields}


def softmax(**fields: Any) -> dict[str, Any]:
    SoftmaxRequest(**fields)
    return {"api": "softmax", "body": fields}


def batch(**fields: Any) -> dict[str, Any]:
    """POST /api/batch_dependence: one fixed sequence among new batch mates, for one norm (the /batchnorm lesson)."""
    BatchDependenceRequest(**fields)
    return {"api": "batch_dependence", "body": fields}


def norm_speed() -> dict[str, Any]:
    """GET /api/norm_speed: LayerNorm against RMSNorm, timed on this server (the /layernorm lesson's measurement)."""
    return {"api": "norm_speed", "query": {}}


def recorded(name: str) -> dict[str, Any]:
    """GET /api/recorded?name=: a result a development tool recorded into the package (app/experiments/lr_warmup.py)."""
    RecordedRequest(name=name)
    return {"api": "recorded", "query": {"name": name}}


def precision(**fields: Any) -> dict[str, Any]:
    """GET /api/precision: the a + b table and the float16 snowball stack (its TraceConfig fields as query keys)."""
    PrecisionRequest(**{k: v for k, v in fields.items() if k in PrecisionRequest.model_fields})
    return {"api": "precision", "query": fields}


def train(kinds: list[str], base: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    """POST /api/train with run kinds of app.experiments.train_presets (the /train page's names) on DEEP's sizes."""
    sizes = TraceConfig(**{**DEEP, **(base or {})})
    request = TrainRequest(runs=[kind_config(kind, sizes) for kind in kinds], **{**SETTINGS, **settings})
    return {"api": "train", "body": request.model_dump(), "kinds": kinds}


# ---- "Open in explorer": the full page with the same settings ------------------------------------------------


def trace_link(page: str, cfg: TraceConfig, **extra: Any) -> str:
    """/gradients?depth=96&norm=none...: only the fields that differ from the defaults, like the pages write them."""
    changed = {k: v for k, v in cfg.model_dump().items() if v != getattr(TRACE_DEFAULTS, k)}
    return _link(page, {**changed, **extra})


def compare_link(presets: list[str], depth: int, **extra: Any) -> str:
    return _link("/compare", {"variants": ",".join(presets), "depth": depth, **extra})


def train_link(kinds: list[str], **settings: Any) -> str:
    return _link("/train", {"runs": ",".join(kinds), **settings})


def _link(page: str, params: dict[str, Any]) -> str:
    text = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}
    query = urlencode(text).replace("%2C", ",")
    return f"{page}?{query}" if query else page


# ---- The alternatives slide: every variant the engine builds, found in the registries ------------------------

# Variants beyond the presets, on top of GPT-2's Pre-LN (each must build: tests/test_lecture.py checks it).
EXTRA_ALTERNATIVES: dict[str, dict[str, Any]] = {
    "highway": {"residual": "highway"},
    "dense": {"residual": "dense"},
    "parallel": {"block": "parallel"},
    "scalenorm": {"norm": "scalenorm"},
    "batchnorm": {"norm": "batchnorm"},
    "groupnorm": {"norm": "groupnorm"},
}
ALTERNATIVES_BASE = "pre_ln"
# The axes along which a new enum value is a new alternative by itself (e.g. a new norm or residual kind).
ALTERNATIVE_AXES = ("norm", "norm_position", "residual", "block")


def alternatives(depth: int) -> list[dict[str, Any]]:
    """[{key, config, preset?, patch?}] for every preset, every extra above the model accepts, and every value of an
    architecture axis that neither covers (so a norm added to the enum later appears here by itself)."""
    base = TraceConfig(depth=depth)
    found = [{"key": key, "preset": key, "config": preset_config(key, base)} for key in PRESETS]
    for key, patch in {**EXTRA_ALTERNATIVES, **_uncovered_axis_values(found)}.items():
        if all(item["key"] != key for item in found):
            found.append({"key": key, "patch": patch, "config": model(ALTERNATIVES_BASE, depth=depth, **patch)})
    return found


def _uncovered_axis_values(found: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    schema = TraceConfig.model_json_schema()["properties"]
    covered = {(axis, getattr(item["config"], axis, None)) for item in found for axis in ALTERNATIVE_AXES}
    covered |= {(axis, value) for patch in EXTRA_ALTERNATIVES.values() for axis, value in patch.items()}
    out = {}
    for axis in ALTERNATIVE_AXES:
        for value in schema.get(axis, {}).get("enum", []):
            if (axis, value) not in covered:
                out[f"{axis}-{value}"] = {axis: value}
    return out
