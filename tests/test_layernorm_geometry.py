"""LayerNorm as geometry: the lesson's `geometry` block checked by hand (numpy, not torch), its chart and caption on
the /layernorm page, and the deck's slide with its typed "try it" numbers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from app.experiments.lecture import SLIDES, shown
from app.experiments.lecture.claims import evaluate, failures, statement
from app.experiments.lecture.slides_geometry import CONSTANT, INSIDE, STATEMENT, key_of
from app.experiments.lessons.layernorm import LayerNormPage, LayerNormRequest, layernorm_lesson, page_answer
from app.figures import layernorm_geometry as geo

VECTORS = [[8.0, 2.0, 2.0], [3.0, 1.0, -1.0], [-700.0, 0.5, 999.0], [8.0, 2.0, 2.0, 4.0], [1.0, -2.0, 0.5, 7.0, 3.0]]
EPS = 1e-5


def lesson(x, kind="layernorm", eps=EPS):
    return layernorm_lesson(LayerNormRequest(x=x, kind=kind, eps=eps))


def page(x, gamma=1.0, beta=0.0):
    view = LayerNormPage(x=x, gamma=gamma, beta=beta)
    ln, rms = (layernorm_lesson(req) for req in view.requests())
    return page_answer(view, ln, rms)


@pytest.mark.parametrize("x", VECTORS)
def test_centring_is_the_projection_and_dividing_lands_on_the_sphere(x):
    """By hand: along = x·1/√n = μ√n, across = ‖x − μ‖ = √n·σ, ‖x̂‖ = √n·σ/√(σ² + ε), equal to torch's LayerNorm."""
    v = np.array(x)
    n, mu, sigma = len(x), v.mean(), v.std()
    g = lesson(x)["geometry"]
    points = g["points"]
    assert g["radius"] == pytest.approx(math.sqrt(n), rel=1e-15)
    assert points["input"]["along"] == pytest.approx(mu * math.sqrt(n), rel=1e-12, abs=1e-12)
    assert points["input"]["across"] == pytest.approx(math.sqrt(n) * sigma, rel=1e-12)
    assert abs(points["centred"]["along"]) < 1e-12 * max(1, abs(v).max())  # in the plane ⊥ (1, …, 1)
    assert points["centred"]["across"] == pytest.approx(points["input"]["across"], rel=1e-12)
    length = math.sqrt(n) * sigma / math.sqrt(sigma**2 + EPS)
    assert points["normalized"]["length"] == pytest.approx(length, rel=1e-12)
    torch_length = float(F.layer_norm(torch.tensor(x, dtype=torch.float64), (n,), eps=EPS).norm())
    assert points["normalized"]["length"] == pytest.approx(torch_length, rel=1e-12)
    assert g["radius_ratio"] == pytest.approx(length / math.sqrt(n), rel=1e-12)
    assert g["spread"] == v.max() - v.min()


@pytest.mark.parametrize("x", [x for x in VECTORS if len(x) == 3])
def test_the_view_along_one_one_one_is_an_orthonormal_basis_of_the_plane(x):
    g = lesson(x)["geometry"]
    basis = np.array(g["basis"])
    assert np.allclose(basis @ basis.T, np.eye(2), atol=1e-15) and np.allclose(basis @ np.ones(3), 0, atol=1e-15)
    centred = np.array(x) - np.mean(x)
    a, b = g["points"]["centred"]["plane"]
    assert np.allclose(a * basis[0] + b * basis[1], centred, atol=1e-12)  # the two numbers rebuild x − μ
    assert g["points"]["input"]["plane"] == pytest.approx([a, b], abs=1e-12)  # x falls on x − μ seen along (1,1,1)
    assert np.allclose(np.array(g["axes"]), basis.T)  # where e₁, e₂, e₃ point in that view


def test_rmsnorm_keeps_the_direction_and_leaves_the_plane():
    g = lesson([8.0, 2.0, 2.0], kind="rmsnorm")
    rms = math.sqrt((64 + 4 + 4) / 3 + EPS)
    inp, out = g["geometry"]["points"]["input"], g["geometry"]["points"]["normalized"]
    assert "centred" not in g["geometry"]["points"]
    assert out["along"] == pytest.approx(inp["along"] / rms) and out["across"] == pytest.approx(inp["across"] / rms)
    assert out["sum"] == pytest.approx(12 / rms)


@pytest.mark.parametrize(
    ("x", "case"),
    [([8.0, 2.0, 2.0], "sphere"), ([2.0, 2.0, 2.001], "inside"), ([2.0, 2.0, 2.0], "constant"),
     ([0.1, 0.1, 0.1], "constant"), ([8.0, 2.0, 2.0, 4.0], "sphere")],
)  # fmt: skip
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_caption_says_what_the_numbers_show(x, case, lang):
    answer = page(x)
    chart = geo.build(answer, lang)
    facts = chart.claim
    assert facts["case"] == case
    ln = answer["layernorm"]
    text = chart.caption
    assert geo.number(ln["geometry"]["points"]["normalized"]["length"], lang) in text
    if case == "sphere":
        assert geo.number(1 - ln["geometry"]["radius_ratio"], lang, 3) in text  # ε's shortfall, as measured
        assert ("ε" in text) and (("sphere" in text) if lang == "en" else ("球面上" in text))
    if case == "inside":
        assert ln["geometry"]["radius_ratio"] < geo.ON_SPHERE and ("inside" in text or "以内" in text)
    if case == "constant":
        assert ("0/0" in text) and geo.number(ln["std"], lang, 3) in text
    assert ("3 components" in text or "3 个分量" in text) == (len(x) != 3)
    assert (len(chart.figure["layout"].get("xaxis2", {})) > 0) == (len(x) == 3)  # the plane view only for 3


@pytest.mark.parametrize("x", [[1e308, -1e308, 0.0], [1.7e308, 1.7e308, -1.7e308], [1e200, 1e200, 3e200, 0.0]])
def test_numbers_past_float64_are_said_not_drawn(client, x):
    """A mean or variance that overflows float64 is no point: the caption says so (no "inside the sphere"), and an
    RMS that overflowed gives RMSNorm no point and no sentence."""
    for lang, word in (("en", "float64's range"), ("zh", "float64 的范围")):
        response = client.post(f"/api/figure/layernorm-geometry?lang={lang}", json={"x": x})
        assert response.status_code == 200, response.text
        chart = response.json()
        assert chart["claim"]["case"] == "overflow" and word in chart["caption"]
        assert "rmsnorm" not in chart["claim"] and "RMSNorm" not in chart["caption"]
        assert all(p["point"] != "rmsnorm" for p in chart["rows"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figure_draws_the_answers_points_on_equal_scales(lang):
    answer = page([3.0, 1.0, -1.0], gamma=2.0, beta=0.5)
    chart = geo.build(answer, lang)
    fig = chart.figure
    assert fig["layout"]["yaxis"]["scaleanchor"] == "x" and fig["layout"]["yaxis2"]["scaleanchor"] == "x2"
    circle = fig["data"][0]
    assert all(math.hypot(a, b) == pytest.approx(math.sqrt(3)) for a, b in zip(circle["x"], circle["y"], strict=True))
    normalized = answer["layernorm"]["geometry"]["points"]["normalized"]
    ends = {(t["x"][-1], t["y"][-1]) for t in fig["data"] if t.get("xaxis") == "x2"}
    assert (normalized["across"], normalized["along"]) in ends
    assert "γ = 2" in chart.caption  # drawn before the gain and shift, and said so
    assert {row["point"] for row in chart.rows} == {"input", "centred", "normalized", "rmsnorm"}


def test_the_page_serves_the_chart_and_refuses_bad_input(client):
    body = {"x": [8, 2, 2], "gamma": 1, "beta": 0, "eps": EPS}
    chart = client.post("/api/figure/layernorm-geometry?lang=zh", json=body).json()
    assert chart["caption"] == geo.build(page([8.0, 2.0, 2.0]), "zh").caption and "slide" in chart["patches"]
    refused = client.post("/api/figure/layernorm-geometry", json={**body, "x": [1]})
    assert refused.status_code == 422 and "x" in refused.text
    html = client.get("/layernorm?lang=zh").text
    assert 'data-chart="layernorm-geometry"' in html and "LayerNorm 的几何意义" in html


# ---- The deck's slide: listed and typed vectors, the words chosen by the numbers ----------------------------------


def test_the_slide_cases_name_the_same_numbers_in_both_languages():
    claim = SLIDES["layernorm-geometry"]["claim"]
    for pair in (STATEMENT, INSIDE, CONSTANT):
        en, zh = (sorted(set(re.findall(r"\{(\w+)", text))) for text in pair)
        assert en == zh and set(en) <= set(claim["values"])
    assert [case["statement"]["en"] for case in claim["cases"]] == [CONSTANT[0], INSIDE[0]]


@pytest.mark.parametrize(
    ("key", "words"), [("8,2,2", "on the circle"), ("2,2,2.001", "inside the circle"), ("2,2,2", "0/0"),
                       ("3,1,-1", "on the circle"), ("-1000,0.5,1000", "on the circle"), ("80,20,20", "on the circle")],
)  # fmt: skip
def test_a_typed_vector_is_checked_like_a_listed_option(client, key, words):
    slide = shown("layernorm-geometry", key)
    answers = [client.post("/api/layernorm", json=s["body"]).json() for s in slide["chart"]["sources"]]
    measured = evaluate(slide["claim"], answers)
    assert not failures(slide["claim"], measured)
    view = client.get(f"/api/lecture/slide/layernorm-geometry?lang=en&option={key}").json()
    assert view["caption"] == statement(slide["claim"], measured, "en") and words in view["caption"]
    assert view["claim"]["failed"] == [] and view["claim"]["verdict"]
    assert slide["chart"]["explorer"] == f"/layernorm?x={key_of(tuple(float(v) for v in key.split(',')))}"


@pytest.mark.parametrize("key", ["1,2", "1,2,3,4", "a,b,c", "1001,0,0", "nan,1,2", "inf,1,2", ""])
def test_typed_numbers_outside_the_control_are_refused_naming_the_option(client, key):
    response = client.get(f"/api/lecture/slide/layernorm-geometry?option={key}")
    assert response.status_code == 404
    assert "option" in response.text and "1000" in response.text
    with pytest.raises(KeyError, match="option"):
        shown("layernorm-geometry", key)
