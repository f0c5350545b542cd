"""The variant table (app/config/variants.py) is the one list of norms, norm positions, residuals and blocks: every
row has its class in the models' registries and the other way round, its labels in both languages, its line in
docs/variants.md, and its physics holds for the real class."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from app.config import VARIANTS, TraceConfig
from app.i18n import client_table
from app.models.norms import NORMS, LayerNormNoBias
from app.models.residuals import RESIDUALS
from app.models.stack import BLOCKS
from app.models.units import UNITS, block_position
from app.pages import get_registry

REGISTRIES: dict[str, typing.Mapping[str, object]] = {
    "norm": NORMS,
    "norm_position": UNITS,
    "residual": RESIDUALS,
    "block": BLOCKS,
}
DOCS = Path(__file__).resolve().parent.parent / "docs"
DOC = (DOCS / "variants.md").read_text(encoding="utf-8")
API_DOC = (DOCS / "api.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("axis", sorted(VARIANTS))
def test_every_variant_has_its_class_and_every_class_its_variant(axis):
    if axis == "norm_position":  # a schedule (mix) picks one of the units per block
        used = {key: {block_position(key, layer, 8) for layer in range(1, 9)} for key in VARIANTS[axis]}
        assert all(units <= set(UNITS) for units in used.values()) and set(UNITS) <= set(VARIANTS[axis])
        return
    assert list(VARIANTS[axis]) == list(REGISTRIES[axis]), f"{axis}: table and models registry differ"


@pytest.mark.parametrize("axis", sorted(VARIANTS))
def test_the_request_model_allows_exactly_the_table(axis):
    assert typing.get_args(TraceConfig.model_fields[axis].annotation) == tuple(VARIANTS[axis])


@pytest.mark.parametrize("axis", sorted(VARIANTS))
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_variant_has_a_label_in_both_languages(axis, lang):
    get_registry()  # its table is the one client_table reads
    strings = client_table(lang)
    assert all(strings.get(f"enum.{axis}.{key}") for key in VARIANTS[axis])


@pytest.mark.parametrize("axis", sorted(VARIANTS))
def test_every_variant_is_in_the_docs_table(axis):
    row = re.search(rf"^\| `{axis}`[^|]*\| ([^|]+) \|", DOC, re.M)
    assert row, f"docs/variants.md has no row for {axis}"
    assert [v.strip() for v in row.group(1).split(",")] == list(VARIANTS[axis])


@pytest.mark.parametrize("axis", sorted(VARIANTS))
def test_every_variant_is_in_the_api_field_table(axis):
    row = re.search(rf"^\| `{axis}` \| `[^`]*` \| ([^|]+) \|", API_DOC, re.M)
    assert row, f"docs/api.md has no row for {axis}"
    assert [v.strip() for v in row.group(1).split(",")] == list(VARIANTS[axis])


@pytest.mark.parametrize("norm", list(VARIANTS["norm"]))
def test_every_norm_has_its_equation_row_in_the_docs(norm):
    assert re.search(rf"^\| {norm} \|", DOC, re.M), f"docs/variants.md: no equation row for {norm}"


def test_the_norm_help_names_every_norm():
    schema = TraceConfig.model_json_schema()["properties"]["norm"]
    for variant in VARIANTS["norm"].values():
        assert (variant.name or variant.label) in schema["description"]
        assert (variant.name_zh or variant.label_zh) in schema["help_zh"]


def test_layernorm_without_bias_matches_torch_and_has_no_bias():
    torch.manual_seed(0)
    layer = LayerNormNoBias(16)
    with torch.no_grad():
        layer.weight.uniform_(0.5, 1.5)
    x = torch.randn(3, 5, 16, dtype=torch.float64)
    layer = layer.double()
    mean, var = x.mean(-1, keepdim=True), x.var(-1, correction=0, keepdim=True)
    by_hand = (x - mean) / torch.sqrt(var + 1e-5) * layer.weight
    assert torch.allclose(layer(x), by_hand, atol=1e-12)
    assert torch.allclose(layer(x), F.layer_norm(x, (16,), layer.weight, None, 1e-5), atol=1e-12)
    assert layer.bias is None and sum(p.numel() for p in layer.parameters()) == 16
