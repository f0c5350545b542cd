"""The unrolled residual stack (app/experiments/paths.py): the scalar chain's C(L, k)·gᵏ in exact arithmetic, and a
model's gradient split by path length, checked against every one of its 2ᴸ paths enumerated by hand and against
autograd; Veit et al.'s sampled paths are single paths of that enumeration."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import torch

from app.config import TraceConfig
from app.experiments.lessons.chain import ChainRequest, chain_lesson
from app.experiments.paths import PathsRequest, Unrolled, _size, length_quantile, unrolled_paths

TINY = {"depth": 2, "d_model": 8, "n_heads": 2, "seq_len": 4, "batch": 2, "vocab_size": 16}


@pytest.mark.parametrize(("g", "depth"), [(0.01, 24), (0.9, 96), (1.1, 96), (0.0, 5), (1.0, 4), (10.0, 1000)])
def test_the_chain_unrolled_adds_up_to_its_own_product(g, depth):
    answer = chain_lesson(ChainRequest(derivative=g, depth=depth))
    paths = answer["paths"]
    assert paths["count"] == [float(math.comb(depth, k)) for k in range(depth + 1)]
    assert math.fsum(paths["share"]) == pytest.approx(1.0, rel=1e-12)
    exact = [Fraction(math.comb(depth, k)) * Fraction(g) ** k for k in range(depth + 1)]
    for k in (0, 1, depth // 2, depth):
        expected = float(exact[k]) if exact[k] < 2**1023 else None
        assert paths["carried"][k] == expected
        if exact[k]:
            log10 = math.log10(exact[k].numerator) - math.log10(exact[k].denominator)
            assert paths["carried_log10"][k] == pytest.approx(log10, abs=1e-9)
    if answer["residual_final"] is not None and math.isfinite(answer["residual_final"]):
        assert paths["total"] == pytest.approx(answer["residual_final"], rel=1e-12)  # Σ C(L,k)gᵏ = (1 + g)ᴸ
    summary = paths["summary"]
    assert summary["count_peak"] == depth // 2
    if g:
        assert summary["peak"] == max(range(depth + 1), key=exact.__getitem__)
        assert summary["half"] <= summary["most"]


def test_the_shortcut_slides_chain_rides_on_short_paths():
    summary = chain_lesson(ChainRequest(derivative=0.01, depth=24))["paths"]["summary"]
    assert summary == {"peak": 0, "half": 0, "most": 1, "count_peak": 12}  # 1 + 0.24 of 1.2697 is 97.6%


def test_length_quantile():
    assert length_quantile([1, 1, 1, 1], 0.5) == 1 and length_quantile([1, 1, 1, 1], 0.9) == 3
    assert length_quantile([0, 0, 5], 0.5) == 2 and length_quantile([1, None], 0.5) is None
    assert length_quantile([0, 0], 0.5) is None


@pytest.mark.parametrize("arch", ["transformer", "mlp"])
@pytest.mark.parametrize("norm", ["layernorm", "none"])
def test_every_path_enumerated_adds_up_to_each_length_and_to_autograd(arch, norm):
    """A tiny model: 2ᴸ paths, each sent back through its branches alone; the paths of length k summed are G_k, and
    every length summed is autograd's gradient at x₀."""
    cfg = TraceConfig(**TINY, arch=arch, norm=norm, activation="tanh", init="xavier")
    unrolled = Unrolled(cfg)
    units = len(unrolled.units)
    by_length = unrolled.by_length()
    assert len(by_length) == units + 1
    for k in range(units + 1):
        summed = torch.stack([unrolled.along(set(path)) for path in itertools.combinations(range(units), k)]).sum(0)
        assert torch.allclose(by_length[k], summed, rtol=1e-4, atol=1e-9), k
    assert torch.allclose(torch.stack(by_length).sum(0), unrolled.whole, rtol=1e-4, atol=1e-9)
    assert torch.equal(by_length[0], unrolled.top)  # length 0: the shortcut alone


def test_the_answer_reports_the_exact_split_and_veits_sampled_paths():
    cfg = TraceConfig(**{**TINY, "depth": 3}, activation="tanh", init="xavier")
    answer = unrolled_paths(PathsRequest(model=cfg, samples=3))
    units = answer["units"]
    assert units == 6 and answer["paths"] == [float(math.comb(6, k)) for k in range(7)]
    assert answer["paths_total"] == 64.0 and answer["sum_error"] < 1e-5
    assert answer["exact_ratio"][0] == pytest.approx(1.0) and answer["exact"][0] == answer["top"]
    sampled = answer["sampled"]
    assert sampled["drawn"] == [1, 3, 3, 3, 3, 3, 1] and sampled["fewest"] == 3
    unrolled = Unrolled(cfg)
    assert sampled["mean"][units] == pytest.approx(_size(unrolled.along(set(range(units)))), rel=1e-6)
    for k in range(units + 1):  # Veit's total: paths of length k × their mean size, ÷ the top's
        assert sampled["total_ratio"][k] == pytest.approx(math.comb(units, k) * sampled["mean"][k] / answer["top"])
        assert sampled["low"][k] <= sampled["mean"][k] <= sampled["high"][k]
    # the sampled paths are single paths: their sizes lie among the sizes of the enumerated paths of that length
    sizes = {k: [_size(unrolled.along(set(p))) for p in itertools.combinations(range(units), k)] for k in (2, 3)}
    for k, found in sizes.items():
        assert min(found) * (1 - 1e-5) <= sampled["low"][k] and sampled["high"][k] <= max(found) * (1 + 1e-5)
    assert answer["summary"]["count_peak"] == 3


@pytest.mark.parametrize(
    "change",
    [{"residual": "none"}, {"residual": "rezero"}, {"norm_position": "post"}, {"residual_scale": 2.0}, {"depth": 25},
     {"dtype": "float16"}],
)  # fmt: skip
def test_a_model_that_does_not_unroll_is_refused_naming_the_field(client, change):
    body = {"model": {**TINY, **change}}
    response = client.post("/api/paths", json=body)
    assert response.status_code == 422, response.text
    assert "model" in response.text and "allowed" in response.text


def test_the_api_answers_what_the_function_computes(client):
    body = PathsRequest(model=TraceConfig(**TINY), samples=2).model_dump()
    first = client.post("/api/paths", json=body)
    assert first.status_code == 200
    direct = unrolled_paths(PathsRequest(**body))
    got = first.json()
    assert got["exact"] == pytest.approx(direct["exact"], rel=1e-6) and got["summary"] == direct["summary"]
    assert got["sampled"]["drawn"] == direct["sampled"]["drawn"]
