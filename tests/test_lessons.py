"""The lesson endpoints: worked numbers recomputed here with Python's own math, physics checks, bad input."""

from __future__ import annotations

import math
import random
import struct
import typing
from itertools import pairwise

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api import lessons
from app.assets import static_url
from app.errors import install_error_handlers
from app.experiments.lessons.layernorm import LayerNormRequest
from tests.conftest import layernorm_by_hand, page_data, strict


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(lessons.router)
    return TestClient(app)


def assert_names_field(response, field: str) -> None:
    assert 400 <= response.status_code < 500, response.text
    body = strict(response)
    assert body["errors"][0]["field"].split(".")[0] == field, body
    assert body["errors"][0]["allowed"], body


# --- the chain product -------------------------------------------------------------------------


@pytest.mark.parametrize("g, depth, product", [(0.9, 96, "plain"), (1.1, 96, "plain"), (0.01, 96, "residual")])
def test_worked_cases_are_exact_powers(client, g, depth, product):
    body = strict(client.get("/api/chain", params={"derivative": g, "depth": depth}))
    assert body["plain_final"] == pytest.approx(g**depth, rel=1e-12)
    assert body["residual_final"] == pytest.approx((1 + g) ** depth, rel=1e-12)
    case = next(c for c in body["worked_cases"] if c["derivative"] == g and c["depth"] == depth)
    expected = g**depth if product == "plain" else (1 + g) ** depth
    assert case["product"] == product and case["value"] == pytest.approx(expected, rel=1e-12)
    assert case["caption"] and case["caption_zh"]


def test_worked_cases_are_not_the_loose_retellings(client):
    cases = {c["key"]: c["value"] for c in strict(client.get("/api/chain"))["worked_cases"]}
    assert 4.0e-5 < cases["vanish"] < 4.1e-5  # not "0.6e-4"
    assert 9.3e3 < cases["explode"] < 9.5e3  # not "12000"
    assert 2.5 < cases["shortcut"] < 2.7


@pytest.mark.parametrize("g", [0.0, 0.5, 1.0, 1.7])
def test_every_layer_is_a_power(client, g):
    body = strict(client.get("/api/chain", params={"derivative": g, "depth": 40}))
    assert body["layers"] == list(range(1, 41))
    for l, plain, residual in zip(body["layers"], body["plain"], body["residual"], strict=True):
        assert plain == pytest.approx(g**l, rel=1e-12, abs=0.0)
        assert residual == pytest.approx((1 + g) ** l, rel=1e-12)
    # the shortcut's product never shrinks: every factor 1 + g >= 1
    assert all(b >= a for a, b in pairwise(body["residual"]))
    assert all(r >= p for p, r in zip(body["plain"], body["residual"], strict=True))


def test_overflowing_product_is_null_and_flagged_but_its_log_is_finite(client):
    body = strict(client.get("/api/chain", params={"derivative": 10, "depth": 1000}))
    assert body["residual_final"] is None and "residual_final" in body["nonfinite_fields"]
    assert body["residual_log10"][-1] == pytest.approx(1000 * math.log10(11), rel=1e-12)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"derivative": "abc"}, "derivative"),
        ({"derivative": -0.5}, "derivative"),
        ({"derivative": "nan"}, "derivative"),
        ({"depth": 0}, "depth"),
        ({"depth": 10**9}, "depth"),
        ({"depth": 2.5}, "depth"),
        ({"layers": 3}, "layers"),
    ],
)
def test_chain_bad_input_names_the_field(client, params, field):
    assert_names_field(client.get("/api/chain", params=params), field)


def test_chain_depth_error_states_the_lesson_range(client):
    body = strict(client.get("/api/chain", params={"depth": 5000}))
    assert body["errors"][0]["allowed"] == "[1, 1000]"


# --- LayerNorm and RMSNorm by hand ---------------------------------------------------------------


def test_layernorm_default_is_the_worked_example(client):
    body = strict(client.post("/api/layernorm", json={}))
    x = [8.0, 2.0, 2.0, 4.0]
    mean, variance, output = layernorm_by_hand(x)
    assert body["mean"] == pytest.approx(mean) and body["variance"] == pytest.approx(variance)
    assert body["std"] == pytest.approx(math.sqrt(variance))
    assert body["rms"] == pytest.approx(math.sqrt(sum(v * v for v in x) / 4))
    assert body["normalized"] == pytest.approx(output, rel=1e-12)
    assert [round(v, 3) for v in body["normalized"]] == [1.633, -0.816, -0.816, 0.0]
    assert body["torch_check"]["op"].endswith("layer_norm") and body["torch_check"]["max_abs_difference"] < 1e-12


def test_layernorm_steps_come_in_order_with_formulas(client):
    body = strict(client.post("/api/layernorm", json={"x": [8, 2, 2, 4]}))
    assert [s["key"] for s in body["steps"]] == ["mean", "centred", "variance", "std", "normalized", "output"]
    for step in body["steps"]:
        assert step["label"] and step["label_zh"] and step["formula"] and step["formula_zh"]
        assert "\\" not in step["formula"] and "$" not in step["formula"]  # plain unicode, no LaTeX
    assert body["steps"][0]["worked"] == "(8 + 2 + 2 + 4) / 4 = 4"
    assert body["steps"][-1]["value"] == pytest.approx(body["output"])


def test_gamma_and_beta_scale_and_shift(client):
    x, gamma, beta = [1.0, -3.0, 0.5, 7.0, 2.0], [2.0, 0.5, 1.0, -1.0, 3.0], [0.1, 0.2, -0.3, 0.0, 1.0]
    body = strict(client.post("/api/layernorm", json={"x": x, "gamma": gamma, "beta": beta, "eps": 1e-3}))
    assert body["output"] == pytest.approx(layernorm_by_hand(x, 1e-3, gamma, beta)[2], rel=1e-12)
    assert body["torch_check"]["max_abs_difference"] < 1e-12


def test_rmsnorm_divides_by_the_root_mean_square_without_centring(client):
    x, gamma = [3.0, 1.0, -2.0, 6.0], [1.0, 2.0, 1.0, 0.5]
    body = strict(client.post("/api/layernorm", json={"x": x, "kind": "rmsnorm", "gamma": gamma}))
    rms = math.sqrt(sum(v * v for v in x) / len(x) + 1e-5)
    assert body["output"] == pytest.approx([g * v / rms for v, g in zip(x, gamma, strict=True)], rel=1e-12)
    assert [s["key"] for s in body["steps"]] == ["mean_square", "rms", "normalized", "output"]
    assert body["torch_check"]["op"].endswith("rms_norm") and body["torch_check"]["max_abs_difference"] < 1e-12
    assert body["normalized_mean"] != pytest.approx(0.0, abs=1e-3)  # RMSNorm does not centre


@pytest.mark.parametrize("kind", typing.get_args(LayerNormRequest.model_fields["kind"].annotation))
def test_normalized_vector_has_unit_rms_and_ignores_scale(client, kind):
    rng = random.Random(4)
    x = [rng.gauss(3.0, 5.0) for _ in range(64)]
    base = strict(client.post("/api/layernorm", json={"x": x, "kind": kind, "eps": 1e-12}))
    scaled = strict(client.post("/api/layernorm", json={"x": [37.0 * v for v in x], "kind": kind, "eps": 1e-12}))
    assert base["normalized_rms"] == pytest.approx(1.0, rel=1e-9)
    assert scaled["normalized"] == pytest.approx(base["normalized"], rel=1e-9)  # both undo a scale
    shifted = strict(client.post("/api/layernorm", json={"x": [v + 100.0 for v in x], "kind": kind, "eps": 1e-12}))
    same = shifted["normalized"] == pytest.approx(base["normalized"], rel=1e-9, abs=1e-9)
    assert same is (kind == "layernorm")  # only LayerNorm undoes a shift
    if kind == "layernorm":
        assert base["normalized_mean"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_constant_vector_is_saved_by_eps(client, eps):
    """σ² = 0: without ε LayerNorm would divide 0 by 0; with it every output is exactly β."""
    body = strict(client.post("/api/layernorm", json={"x": [3.0] * 6, "beta": [0.5] * 6, "eps": eps}))
    assert body["variance"] == 0.0 and body["std"] == 0.0
    assert body["std_eps"] == pytest.approx(math.sqrt(eps))
    assert body["output"] == [0.5] * 6


def test_layernorm_huge_values_are_strict_json_and_flagged(client):
    response = client.post("/api/layernorm", json={"x": [1e300, -1e300, 0.0]})
    body = strict(response)
    assert response.status_code == 200 and body["variance"] is None and "variance" in body["nonfinite_fields"]


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"x": []}, "x"),
        ({"x": [1.0]}, "x"),
        ({"x": [1, "a"]}, "x"),
        ({"x": [1, None]}, "x"),
        ({"x": [True, 2]}, "x"),
        ({"x": [0.5] * 4097}, "x"),
        ({"x": "1,2,3"}, "x"),
        ({"x": [1, 2, 3], "gamma": [1, 2]}, "gamma"),
        ({"x": [1, 2], "beta": [0, 0, 0]}, "beta"),
        ({"x": [1, 2], "eps": -1e-5}, "eps"),
        ({"x": [1, 2], "eps": 0}, "eps"),
        ({"x": [1, 2], "kind": "groupnorm"}, "kind"),
        ({"x": [1, 2], "kind": "rmsnorm", "beta": [0, 0]}, "beta"),
        ({"x": [1, 2], "mu": 3}, "mu"),
    ],
)
def test_layernorm_bad_input_names_the_field(client, payload, field):
    assert_names_field(client.post("/api/layernorm", json=payload), field)


@pytest.mark.parametrize("raw", [b'{"x": [1, NaN]}', b'{"x": [1, Infinity]}', b'{"x": [1,', b"[1, 2]", b'"x"'])
def test_layernorm_malformed_or_nonfinite_json_is_refused(client, raw):
    response = client.post("/api/layernorm", content=raw, headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500 and strict(response)["errors"][0]["field"] in ("x.1", "body")


# --- softmax saturation ---------------------------------------------------------------------------


def python_softmax(z, s):
    top = max(s * v for v in z)
    e = [math.exp(s * v - top) for v in z]
    return [v / sum(e) for v in e]


def test_softmax_matches_python_and_autograd(client):
    z, s = [2.0, 1.0, 0.5, 0.0, -1.0], 1.7
    body = strict(client.post("/api/softmax", json={"logits": z, "scale": s}))
    p = python_softmax(z, s)
    assert body["probs"] == pytest.approx(p, rel=1e-12) and sum(body["probs"]) == pytest.approx(1.0)
    assert body["entropy"] == pytest.approx(-sum(v * math.log(v) for v in p), rel=1e-12)
    assert body["max_prob"] == pytest.approx(max(p)) and body["argmax"] == 0
    assert body["jacobian_norm_kind"] == "spectral"
    assert body["jacobian_check"]["max_abs_difference"] < 1e-12
    assert body["jacobian_norm"] <= body["jacobian_frobenius"] + 1e-15


def test_two_logit_jacobian_norm_is_2p_1_minus_p(client):
    body = strict(client.post("/api/softmax", json={"logits": [0.3, -0.9], "scale": 2.0}))
    p = python_softmax([0.3, -0.9], 2.0)[0]
    assert body["jacobian_norm"] == pytest.approx(2 * p * (1 - p), rel=1e-12)  # J = p(1−p)·[[1,−1],[−1,1]]


def test_scale_zero_is_uniform(client):
    n = 7
    body = strict(client.post("/api/softmax", json={"logits": [float(i) for i in range(n)], "scale": 0.0}))
    assert body["probs"] == pytest.approx([1 / n] * n)
    assert body["entropy"] == pytest.approx(math.log(n)) and body["jacobian_norm"] == pytest.approx(1 / n)


def test_sweeping_the_scale_collapses_to_one_hot_and_kills_the_gradient(client):
    scales = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 1000.0]
    body = strict(client.post("/api/softmax", json={"logits": [1.0, 0.8, 0.1, -0.4], "scales": scales}))
    rows = body["sweep"]
    assert [r["scale"] for r in rows] == scales
    entropies, tops = [r["entropy"] for r in rows], [r["max_prob"] for r in rows]
    assert all(b < a for a, b in pairwise(entropies))
    assert all(b > a for a, b in pairwise(tops))
    # past the peak the Jacobian only shrinks, and at s = 1000 it has vanished
    norms = [r["jacobian_norm"] for r in rows]
    assert all(b < a for a, b in pairwise(norms[3:]))
    assert norms[-1] < 1e-50 and tops[-1] == pytest.approx(1.0)


def test_softmax_overflowing_logits_are_strict_json(client):
    response = client.post("/api/softmax", json={"logits": [1e306, 0.0, -1e306], "scale": 1e4})
    body = strict(response)
    assert response.status_code == 200 and body.get("nonfinite_count", 0) > 0


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"logits": [1.0]}, "logits"),
        ({"logits": [0.0] * 257}, "logits"),
        ({"logits": ["x", 1]}, "logits"),
        ({"scale": -1}, "scale"),
        ({"scale": 1e9}, "scale"),
        ({"scales": []}, "scales"),
        ({"scales": [1, -2]}, "scales"),
        ({"scales": [1.0] * 65}, "scales"),
        ({"temperature": 2}, "temperature"),
    ],
)
def test_softmax_bad_input_names_the_field(client, payload, field):
    assert_names_field(client.post("/api/softmax", json=payload), field)


# --- floating-point precision ---------------------------------------------------------------------

FRACTION_BITS = {"float32": 23, "bfloat16": 7, "float16": 10}
EXPONENT_BITS = {"float32": 8, "bfloat16": 8, "float16": 5}


@pytest.fixture(scope="module")
def precision(client) -> dict:
    return strict(client.get("/api/precision"))


def test_format_limits_follow_from_the_bit_layout(precision):
    for row in precision["formats"]:
        fraction, exponent = FRACTION_BITS[row["dtype"]], EXPONENT_BITS[row["dtype"]]
        bias = 2 ** (exponent - 1) - 1
        assert row["eps"] == 2.0**-fraction
        assert row["max"] == (2 - 2.0**-fraction) * 2.0**bias
        assert row["tiny"] == 2.0 ** (1 - bias)
        assert row["fraction_bits"] == fraction


def test_ten_thousand_plus_a_thousandth(precision):
    rows = {r["dtype"]: r for r in precision["formats"]}
    for name, row in rows.items():
        step = 2.0 ** (math.floor(math.log2(10000)) - FRACTION_BITS[name])
        assert row["spacing_at_big"] == step
        assert row["stored_big"] == round(10000 / step) * step
    assert rows["float32"]["sum"] == struct.unpack("f", struct.pack("f", 10000.001))[0] != 10000.0
    assert rows["float16"]["sum"] == 10000.0 and rows["float16"]["update_lost"]
    assert (
        rows["bfloat16"]["stored_big"] == 9984.0 and rows["bfloat16"]["sum"] == 9984.0
    )  # 10000 itself is not representable
    assert not rows["float32"]["update_lost"]


def test_float16_overflow_depth_comes_from_a_real_trace(precision):
    snow = precision["snowball"]
    layer = snow["overflow_layer"]
    assert snow["config"]["dtype"] == "float16" and 2 <= layer <= snow["config"]["depth"]
    finite = snow["float16_max_abs"][: layer - 1]
    assert all(v is not None and v <= snow["float16_max"] for v in finite)
    assert all(v is None for v in snow["float16_max_abs"][layer - 1 :])  # once inf, never finite again
    # the same stack in float32 passes float16's largest value at (about) the same block
    assert abs(snow["float32_exceeds_float16_max_at"] - layer) <= 2
    assert all(v is not None for v in snow["float32_max_abs"])
    assert snow["overflow_sublayer"].startswith(f"{layer}.")
    assert snow["float16_loss"] is None and "snowball.float16_loss" in precision["nonfinite_fields"]


def test_a_normalized_stack_does_not_overflow(client):
    body = strict(client.get("/api/precision", params={"norm": "layernorm", "norm_position": "pre", "depth": 24}))
    assert body["snowball"]["overflow_layer"] is None and body["snowball"]["float16_loss"] is not None


def test_a_big_number_overflows_float16_and_is_flagged(client):
    body = strict(client.get("/api/precision", params={"big": 1e5, "depth": 4}))
    rows = {r["dtype"]: r for r in body["formats"]}
    assert rows["float16"]["stored_big"] is None and rows["float16"]["overflowed"]
    assert "formats[2].stored_big" in body["nonfinite_fields"]
    assert rows["float32"]["stored_big"] == 1e5


@pytest.mark.parametrize(
    "params, field",
    [
        ({"big": "abc"}, "big"),
        ({"small": "inf"}, "small"),
        ({"depth": 999}, "depth"),
        ({"depth": 0}, "depth"),
        ({"dtype": "float32"}, "dtype"),
        ({"norm": "weightnorm"}, "norm"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_precision_bad_input_names_the_field(client, params, field):
    assert_names_field(client.get("/api/precision", params=params), field)


# --- the four pages (routes, both languages) --------------------------------------------------------

PAGES_AND_CHARTS = {
    "/chain": ("chain",),
    "/layernorm": ("layernorm", "layernorm-geometry", "norm-speed"),
    "/softmax": ("softmax-probs", "softmax-sweep"),
    "/precision": ("precision-overflow",),
    "/batchnorm": ("batch-dependence", "batch-padding"),
}


@pytest.fixture(scope="module")
def site() -> TestClient:
    from app.main import app

    return TestClient(app)


@pytest.mark.parametrize("path", PAGES_AND_CHARTS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lesson_page_renders_in_both_languages(site, path, lang):
    from markupsafe import escape

    from app.pages import get_registry

    t = get_registry().t

    response = site.get(path, params={"lang": lang})
    assert response.status_code == 200
    html = response.text
    data = page_data(html)
    key = path.strip("/")
    assert data["page"] == key and data["lang"] == lang and data["model_controls"] is False
    assert str(escape(t(f"{key}.title", lang))) in html and str(escape(t(f"{key}.intro", lang))) in html
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in html
    for chart in PAGES_AND_CHARTS[path]:
        assert f'data-chart="{chart}"' in html
    assert f'src="{static_url(f"js/pages/{key}.js")}"' in html and static_url("css/lessons.css") in html
    if lang == "zh":  # no English sentence of the page leaks into the Chinese one
        assert str(escape(t(f"{key}.intro", "en"))) not in html


@pytest.mark.parametrize(
    "path, model_name",
    [
        ("/chain", "ChainRequest"),
        ("/layernorm", "LayerNormRequest"),
        ("/softmax", "SoftmaxRequest"),
        ("/precision", "PrecisionRequest"),
        ("/batchnorm", "BatchDependenceRequest"),
    ],
)
def test_page_controls_come_from_the_request_model(site, path, model_name):
    from app.api import lessons as router_module
    from app.pages import get_registry

    t = get_registry().t

    model = getattr(router_module, model_name)
    data = page_data(site.get(path).text)
    assert data["extra"]["schema"] == model.model_json_schema()["properties"]
    key = path.strip("/")
    for name, prop in model.model_json_schema()["properties"].items():
        assert t(f"{key}.field.{name}", "zh") == prop["label_zh"] and t(f"{key}.field.{name}", "en") == prop["label"]


def test_chain_page_offers_the_worked_cases_as_buttons(site):
    html = site.get("/chain", params={"lang": "zh"}).text
    for key, g in (("vanish", 0.9), ("explode", 1.1), ("shortcut", 0.01)):
        assert f'id="case-{key}"' in html and f'data-derivative="{g}"' in html and 'data-depth="96"' in html


def test_precision_page_stack_defaults_are_the_snowballing_stack(site):
    from app.experiments.lessons.precision import SNOWBALL_DEFAULTS

    stack = page_data(site.get("/precision").text)["extra"]["stack"]
    for name, value in SNOWBALL_DEFAULTS.items():
        assert stack[name]["default"] == value


@pytest.mark.parametrize("chart", [c for charts in PAGES_AND_CHARTS.values() for c in charts])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lesson_chart_embeds(site, chart, lang):
    response = site.get(f"/embed/{chart}", params={"lang": lang})
    assert response.status_code == 200
    html = response.text
    assert html.count("data-chart=") == 1 and f'data-chart="{chart}"' in html and "<nav" not in html


def test_lesson_pages_have_no_inline_code_or_remote_hosts(site):
    import re

    for path in PAGES_AND_CHARTS:
        html = site.get(path).text
        for attrs, _body in re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S):
            assert "src=" in attrs or 'type="application/json"' in attrs, (path, attrs)
        assert not re.search(r"\son[a-z]+=", html), path
        assert not re.search(r"(src|href)=\"(https?:)?//", html), path


def test_precision_traces_are_cached(client):
    first = strict(client.get("/api/precision", params={"depth": 5, "seed": 7}))
    again = strict(client.get("/api/precision", params={"depth": 5, "seed": 7}))
    assert again["cached"] is True and again["snowball"] == first["snowball"]
