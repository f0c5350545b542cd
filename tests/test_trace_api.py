"""The trace API: contract, strict JSON, clear 4xx answers, cache and coalescing."""

from __future__ import annotations

import asyncio
import json
import math

import httpx
import numpy as np
import pytest

from app.config import PRESETS, TraceConfig, preset_config

LAYER_KEYS = {
    "layer",
    "act_norm",
    "act_rms",
    "act_max_abs",
    "branch_norm",
    "grad_norm",
    "param_grad_norm",
    "attn_param_grad_norm",
    "ffn_param_grad_norm",
    "token_cosine",
}


def test_health(client):
    body = client.get("/api/health").json()
    assert body["status"] == "ok"


def test_default_trace_has_the_documented_shape(client):
    response = client.post("/api/trace", json={})
    assert response.status_code == 200
    body = response.json()
    assert body["config"] == TraceConfig().model_dump()
    assert set(body["embedding"]) >= {"act_norm", "grad_norm"}
    assert [layer["layer"] for layer in body["layers"]] == list(range(1, 13))
    assert all(set(layer) >= LAYER_KEYS for layer in body["layers"])
    assert [(s["layer"], s["sublayer"]) for s in body["sublayers"][:2]] == [(1, "attn"), (1, "ffn")]
    summary = body["summary"]
    layers = body["layers"]
    assert summary["grad_survival"] == pytest.approx(layers[0]["grad_norm"] / layers[-1]["grad_norm"])
    assert summary["norm_growth"] == pytest.approx(layers[-1]["act_norm"] / layers[0]["act_norm"])
    assert summary["nonfinite"] is False and summary["elapsed_ms"] > 0
    assert math.isfinite(body["loss"]) and body["loss"] == pytest.approx(math.log(128), rel=0.2)  # random tokens


def test_block_parameter_gradient_splits_into_attention_and_ffn(client):
    for layer in client.post("/api/trace", json={"depth": 3}).json()["layers"]:
        both = math.hypot(layer["attn_param_grad_norm"], layer["ffn_param_grad_norm"])
        assert layer["param_grad_norm"] == pytest.approx(both, rel=1e-6)


def test_get_with_query_keys_equals_post(client):
    posted = client.post("/api/trace", json={"depth": 6, "norm_position": "post", "final_norm": False}).json()
    got = client.get("/api/trace?depth=6&norm_position=post&final_norm=false").json()
    assert got["layers"] == posted["layers"] and got["config"] == posted["config"]


def test_mlp_trace_has_one_sublayer_per_block(client):
    body = client.post("/api/trace", json={"arch": "mlp", "depth": 5}).json()
    assert len(body["sublayers"]) == 5 and {s["sublayer"] for s in body["sublayers"]} == {"mlp"}


def test_float16_overflow_is_strict_json_with_flags(client):
    response = client.post(
        "/api/trace", json={"depth": 24, "dtype": "float16", "norm": "none", "init": "torch", "residual_scale": 4.0}
    )
    assert response.status_code == 200
    assert "NaN" not in response.text and "Infinity" not in response.text
    body = json.loads(response.text)
    assert body["summary"]["nonfinite"] is True and body["nonfinite_count"] > 0
    assert any(path.startswith("layers[") for path in body["nonfinite_fields"])


@pytest.mark.parametrize(
    "body,field,allowed",
    [
        ({"depth": 0}, "depth", "[1, 128]"),
        ({"depth": 500}, "depth", "[1, 128]"),
        ({"depth": "deep"}, "depth", "[1, 128]"),
        ({"norm": "weightnorm"}, "norm", "layernorm"),
        ({"norm_position": "middle"}, "norm_position", "sandwich"),
        ({"residual_scale": -1}, "residual_scale", "(0.0, 16.0]"),
        ({"d_model": 66}, "n_heads", "divisors of d_model"),
        ({"dtype": "float64"}, "dtype", "float16"),
        ({"colour": "red"}, "colour", "known fields"),
        ({"depth": 128, "d_model": 512}, "d_model", "d_model <= 120 (or depth <= 7)"),  # the smallest cut
        ({"depth": 128, "d_model": 256, "seq_len": 256, "batch": 64}, "depth", "lower two or more sizes"),
    ],
)
def test_bad_input_names_the_field_and_its_range(client, body, field, allowed):
    response = client.post("/api/trace", json=body)
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["field"] == field and allowed in error["allowed"]


def test_malformed_json_and_wrong_body_type(client):
    response = client.post("/api/trace", content=b"{depth: 3", headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "body"  # not JSON at all
    assert client.post("/api/trace", json=[1, 2]).status_code == 422  # JSON, but not a request


def test_bad_query_key_gets_a_4xx(client):
    response = client.get("/api/trace?depth=129")
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "depth"
    assert client.get("/api/trace?nonsense=1").status_code == 422


def test_identical_requests_are_answered_from_the_cache(client):
    first = client.post("/api/trace", json={"depth": 7, "seed": 11}).json()
    second = client.post("/api/trace", json={"depth": 7, "seed": 11}).json()
    assert second["summary"]["cached"] is True and second["layers"] == first["layers"]


def test_concurrent_identical_requests_compute_once():
    from app.main import app
    from app.services.compute import ComputePool, get_pool

    async def fire() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            return await asyncio.gather(*(http.post("/api/trace", json={"depth": 9, "seed": 1234}) for _ in range(6)))

    pool: ComputePool = get_pool()
    before = pool.computed
    responses = asyncio.run(fire())
    assert all(r.status_code == 200 for r in responses)
    assert pool.computed - before == 1
    assert sum(not r.json()["summary"]["cached"] for r in responses) == 1


def test_routes_compute_on_the_pool_their_dependency_gives(client, monkeypatch):
    """A test hands the routes a pool of its own through the dependency: traces, lessons and charts land there."""
    from app.api.deps import compute_pool
    from app.services.compute import ComputePool, get_pool

    own = ComputePool(1, 16, 30.0, 1)
    monkeypatch.setitem(client.app.dependency_overrides, compute_pool, lambda: own)
    body = {"depth": 2, "seed": 4321, "d_model": 8, "n_heads": 2}
    before = get_pool().computed
    assert client.post("/api/trace", json=body).json()["summary"]["source"] == "computed"
    assert client.post("/api/figure/norms?lang=en", json=body).headers["X-Resnorm-Cache"] == "memory"  # own's copy
    assert client.get("/api/chain?derivative=0.37&depth=3").status_code == 200
    assert own.computed == 2 and get_pool().computed == before
    assert client.get("/api/health").json()["compute"]["computed"] == 2


def test_presets_are_bilingual_and_valid(client):
    body = client.get("/api/presets?depth=48").json()
    keys = [p["key"] for p in body["presets"]]
    assert keys == list(PRESETS)
    for preset in body["presets"]:
        assert preset["name"] and preset["name_zh"] and preset["description"] and preset["description_zh"]
        TraceConfig(**{**TraceConfig(depth=48).model_dump(), **preset["config"]})
    deepnorm = next(p for p in body["presets"] if p["key"] == "deepnorm")
    assert deepnorm["config"]["final_norm"] is True and deepnorm["config"]["depth_scaled_norm"] is False
    assert deepnorm["config"]["residual_scale"] == pytest.approx((2 * 48) ** 0.25, rel=1e-5)


def test_a_preset_applied_as_the_pages_apply_it_is_the_python_preset(client):
    """static/js/presets.js resets every field a preset's config names, then applies it: from a state with the
    final norm off and depth-scaled norms on, that must give preset_config's model, not keep those two."""
    state = TraceConfig(depth=24, final_norm=False, depth_scaled_norm=True, d_model=32, seed=3)
    presets = client.get("/api/presets?depth=24").json()["presets"]
    fields = {field for preset in presets for field in preset["config"]}
    defaults = {field: TraceConfig.model_fields[field].default for field in fields}
    for preset in presets:
        applied = TraceConfig(**{**state.model_dump(), **defaults, **preset["config"]})
        assert applied == preset_config(preset["key"], state), preset["key"]


def test_schema_carries_bounds_and_both_languages(client):
    props = client.get("/api/schema").json()["properties"]
    assert props["depth"]["maximum"] == 128 and props["depth"]["default"] == 12
    assert all(
        p.get("label") and p.get("label_zh") and p.get("description") and p.get("help_zh") for p in props.values()
    )


def test_unknown_addresses_answer_json_for_the_api_and_a_bilingual_page_for_browsers(client):
    api = client.get("/api/nope", headers={"accept": "text/html"})
    assert api.status_code == 404 and api.json()["status"] == 404
    page = client.get("/no-such-page", headers={"accept": "text/html,application/xhtml+xml"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "Page not found" in page.text and "页面不存在" in page.text and 'href="/"' in page.text
    assert client.get("/no-such-page").json()["status"] == 404  # no Accept: JSON


def test_the_laws_of_a_trace_come_from_the_same_cached_trace(client):
    """POST /api/laws fits the growth laws to /api/trace's stream on the server (app/experiments/laws.py): the values
    are the trace's norms, each fit starts at ‖x₀‖, and a float16 overflow leaves no law at all (strict JSON)."""
    body = {"depth": 12, "norm_position": "pre"}
    trace = client.post("/api/trace", json=body).json()
    response = client.post("/api/laws", json=body)
    assert response.status_code == 200 and response.headers["X-Resnorm-Cache"] != "computed"  # the trace's cache
    laws = response.json()
    assert laws["values"] == [trace["embedding"]["act_norm"], *(layer["act_norm"] for layer in trace["layers"])]
    assert set(laws["fits"]) == {"sqrt", "line", "exp", "power"} and laws["layers"] == list(range(13))
    for fit in [*laws["fits"].values(), laws["independent"]]:
        assert len(fit["curve"]) == 13 and fit["curve"][0] == pytest.approx(laws["values"][0])
    overflowed = client.post("/api/laws", json={"depth": 48, "norm": "none", "dtype": "float16"}).json()
    assert overflowed["fits"] == {} and overflowed["law"] is None and overflowed["independent"] is None
    assert None in overflowed["values"]


def test_the_laws_endpoint_refuses_bad_input_by_field(client):
    response = client.post("/api/laws", json={"depth": 0})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "depth"


def test_a_depth_scan_reads_the_last_blocks_ffn_gradient_of_each_trace(client):
    body = {"presets": ["pre_ln_2017"], "depths": [4, 8, 16], "seeds": [0]}
    scan = client.post("/api/depth_scan", json=body).json()
    assert scan["layers"] == [4, 8, 16] and len(scan["pre_ln_2017"]["seeds"]) == 1
    for depth, value in zip(scan["layers"], scan["pre_ln_2017"]["seeds"][0], strict=True):
        cfg = preset_config("pre_ln_2017", TraceConfig(depth=depth))
        trace = client.post("/api/trace", json=cfg.model_dump()).json()
        assert value == trace["layers"][-1]["ffn_param_grad_norm"]
    xs = [math.log(d) for d in scan["layers"]]
    ys = [math.log(v) for v in scan["pre_ln_2017"]["seeds"][0]]
    slope = np.polyfit(xs, ys, 1)[0]
    assert scan["pre_ln_2017"]["exponents"][0] == pytest.approx(slope, rel=1e-9)


@pytest.mark.parametrize(
    ("body", "field"),
    [({"presets": ["nope"]}, "presets"), ({"depths": [6, 12, 500]}, "depths.2"), ({"seeds": [0, 1, 2, 3, 4]}, "seeds")],
)
def test_a_depth_scan_refuses_what_would_cost_too_much_by_field(client, body, field):
    response = client.post("/api/depth_scan", json=body)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == field
