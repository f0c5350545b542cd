"""Hostile and edge-case input: every bad request gets a strict-JSON 4xx naming the field and what it allows.

Regression tests for what a fuzzing pass found (JSON nested 50,000 deep was a 500 on the lesson endpoints;
type errors on /api/sweep, /api/train and /api/presets named no allowed range; a non-JSON Content-Type
got pydantic's "valid dictionary" riddle; 20,000 unknown keys took 50 s to answer; a float16 sweep took ~3.5 min; highway gates were missing from the parameter budget; a deep
stack of tiny blocks passed the training budget yet trained for most of an hour).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.config import MAX_PARAMETERS, TraceConfig, parameter_count
from app.experiments.train import MAX_TRAIN_MACS, TrainRequest, training_macs
from app.models.init import build_model
from tests.conftest import strict
from tests.grids import choices

TINY = {"depth": 1, "d_model": 8, "n_heads": 2, "seq_len": 4, "batch": 1, "vocab_size": 8}
DEEP_NEST = b"[" * 50_000 + b"]" * 50_000  # under the body limit, far over Python's recursion limit
HUGE_INT = b'{"depth": ' + b"9" * 5000 + b"}"  # past Python's 4300-digit int parsing limit
JSON = {"content-type": "application/json"}


def assert_names_field(response, field: str | None = None, allowed: str = "") -> dict:
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    errors = strict(response)["errors"]
    assert errors and all(e["field"] and e["allowed"] for e in errors), errors
    if field is not None:
        assert errors[0]["field"] == field, errors
    assert allowed in errors[0]["allowed"], errors
    return errors[0]


def json_endpoints() -> list[str]:
    """Every POST endpoint of the API (a new one is covered by itself)."""
    from app.main import app

    paths = app.openapi()["paths"].items()
    return sorted(p for p, item in paths if p.startswith("/api/") and "requestBody" in item.get("post", {}))


# a model and a sentence (the /models charts too): junk checks in test_real_trace_api.py and test_real_figures_api.py
TEXT_ONLY = {"/api/real_trace", "/api/real_tokens"} | {
    p for p in json_endpoints() if p.startswith("/api/figure/models-")
}
# numbers only inside nested objects: checked in test_booleans_are_not_numbers_in_nested_configs_either
NESTED_ONLY = {"/api/figure/compare"}
NO_INPUT = {"/api/figure/norm-speed"}  # measured on this server once an hour: nothing to send (an unknown key is 422)


def number_fields(url: str) -> list[tuple[str, bool]]:
    """(name, is a list) of the top-level fields of an endpoint's body that hold numbers or lists of numbers."""
    from app.main import app

    schema = app.openapi()["paths"][url]["post"]["requestBody"]["content"]["application/json"]["schema"]
    numeric = {"integer", "number"}
    out = []
    for name, prop in schema.get("properties", {}).items():
        options = [prop, *prop.get("anyOf", [])]
        if any(o.get("type") in numeric for o in options):
            out.append((name, False))
        elif any(o.get("type") == "array" and o.get("items", {}).get("type") in numeric for o in options):
            out.append((name, True))
    return out


def test_every_json_endpoint_is_listed():
    assert {"/api/trace", "/api/sweep", "/api/train", "/api/layernorm", "/api/softmax"} <= set(json_endpoints())


@pytest.mark.parametrize("url", json_endpoints())
@pytest.mark.parametrize(
    "raw",
    [DEEP_NEST, HUGE_INT, b"{", b"\xff\xfe", b'{"depth": NaN', b"{depth: 3}"],
    ids=["deep", "huge-int", "cut", "not-utf8", "nan-cut", "unquoted"],
)
def test_unparseable_json_is_400_about_the_body_on_every_endpoint(client, url, raw):
    response = client.post(url, content=raw, headers=JSON)
    assert response.status_code == 400, (url, response.text[:200])
    assert_names_field(response, "body", "JSON")


@pytest.mark.parametrize("url", json_endpoints())
@pytest.mark.parametrize("raw", [b"null", b"[]", b"3", b'"text"', b"true"])
def test_a_body_that_is_json_but_not_an_object_is_422_about_the_body(client, url, raw):
    response = client.post(url, content=raw, headers=JSON)
    assert response.status_code == 422, (url, raw, response.text[:200])
    assert_names_field(response, "body", "a JSON object")


@pytest.mark.parametrize("url", json_endpoints())
def test_a_boolean_or_a_string_where_a_number_belongs_is_422_naming_the_field(client, url):
    fields = number_fields(url)
    assert fields or url in TEXT_ONLY | NESTED_ONLY | NO_INPUT, url  # every endpoint takes a number, or is listed above
    for name, is_list in fields:
        for value in (True, False, "12"):
            response = client.post(url, json={name: [value, value] if is_list else value})
            assert response.status_code == 422, (url, name, value, response.text[:200])
            assert_names_field(response, f"{name}.0" if is_list else name)


@pytest.mark.parametrize(
    "body,field", [({"depth": True}, "depth"), ({"seed": False}, "seed"), ({"residual_scale": True}, "residual_scale")]
)
def test_booleans_are_not_numbers_in_nested_configs_either(client, body, field):
    assert_names_field(client.post("/api/trace", json=body), field)
    assert_names_field(client.post("/api/sweep", json={"config": body}), f"config.{field}")
    assert_names_field(client.post("/api/train", json={"runs": [body]}), f"runs.0.{field}")
    variants = {"variants": [{"key": "custom", "config": body}] * 2}
    assert_names_field(client.post("/api/figure/compare", json=variants), f"variants.0.config.{field}")
    assert_names_field(client.post("/api/figure/gradients", json={"config": body}), f"config.{field}")


@pytest.mark.parametrize(
    "url, field, allowed",
    [
        ("/api/lecture/slide/no-such-slide/train", "slide", "train-shortcut"),
        ("/api/lecture/slide/chain/train", "slide_id", "train-shortcut"),  # a slide that trains nothing
        ("/api/lecture/slide/train-shortcut/train?option=9", "option", ""),
    ],
)
def test_training_a_slide_that_trains_nothing_is_a_404_naming_the_ones_that_do(client, url, field, allowed):
    response = client.post(url)
    assert response.status_code == 404
    assert_names_field(response, field, allowed)


@pytest.mark.parametrize("url", json_endpoints())
def test_a_json_body_sent_as_another_type_is_415_saying_which_header(client, url):
    response = client.post(url, content=b"{}", headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert "Content-Type: application/json" in assert_names_field(response, "body")["allowed"]


@pytest.mark.parametrize("url", ["/api/trace", "/api/sweep", "/api/train"])
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_json_without_a_json_content_type_says_which_header_to_send(client, url, content_type):
    headers = {"content-type": content_type} if content_type else {}
    error = assert_names_field(client.post(url, content=b'{"depth": 2}', headers=headers), "body")
    assert "Content-Type: application/json" in error["allowed"]


@pytest.mark.parametrize(
    "method,url,body,field,allowed",
    [
        ("GET", "/api/presets?depth=x", None, "depth", "[1, 128]"),
        ("GET", "/api/presets?depth=129", None, "depth", "[1, 128]"),
        ("POST", "/api/sweep?stream=maybe", {"depths": [1]}, "stream", "true or false"),
        ("POST", "/api/sweep", {"depths": None}, "depths", "a list of 1 to 128 items"),
        ("POST", "/api/sweep", {"depths": []}, "depths", "a list of 1 to 128 items"),
        ("POST", "/api/sweep", {"depths": [1.5]}, "depths.0", "an integer"),
        ("POST", "/api/sweep", {"depths": [[1]]}, "depths.0", "an integer"),
        ("POST", "/api/sweep", {"zzz": 1}, "zzz", "known fields: config, depths"),
        ("POST", "/api/sweep", {"config": None}, "config", "a JSON object"),
        ("POST", "/api/sweep", {"config": {"zzz": 1}}, "config.zzz", "known fields: arch, depth"),
        ("POST", "/api/sweep", {"config": {"depth": "x"}}, "config.depth", "[1, 128]"),
        ("POST", "/api/train", {"steps": None}, "steps", "[1, 2000]"),
        ("POST", "/api/train", {"steps": 1.5}, "steps", "[1, 2000]"),
        ("POST", "/api/train", {"steps": 1e308}, "steps", "[1, 2000]"),
        ("POST", "/api/train", {"lr": "x"}, "lr", "(0.0, 10.0]"),
        ("POST", "/api/train", {"clip": "x"}, "clip", "(0.0, 1000.0] or null"),
        ("POST", "/api/train", {"seed": None}, "seed", "[0, 2147483647]"),
        ("POST", "/api/train", {"runs": None}, "runs", "a list of 1 to 4 items"),
        ("POST", "/api/train", {"runs": [TINY] * 5}, "runs", "a list of 1 to 4 items"),
        ("POST", "/api/train", {"runs": ["x"]}, "runs.0", "a JSON object"),
        ("POST", "/api/train", {"runs": [{"zzz": 1}]}, "runs.0.zzz", "known fields: arch, depth"),
        ("POST", "/api/train", {"runs": [{"dtype": "float64"}]}, "runs.0.dtype", "one of: float32"),
        ("POST", "/api/train", {"depth": 2}, "depth", "known fields: runs, task"),
        ("POST", "/api/trace", [], "body", "a JSON object"),
        ("POST", "/api/trace", {"residual_scale": None}, "residual_scale", "(0.0, 16.0]"),
    ],
)
def test_type_errors_name_the_field_and_what_it_allows(client, method, url, body, field, allowed):
    response = client.request(method, url, json=body) if body is not None else client.request(method, url)
    assert_names_field(response, field, allowed)


# Bodies are validated in strict JSON mode: true is not 1 and "12" is not 12 (only the GET forms convert text).
JUNK: list[Any] = [
    None,
    "",
    "12",
    True,
    "🙂",
    "\u0000",
    [],
    {},
    [[[[]]]],
    {"a": {"b": 1}},
    -1,
    2**64,
    1e308,
    -1e308,
    0.5,
]


@pytest.mark.parametrize("name", list(TraceConfig.model_fields))
def test_every_trace_field_refuses_junk_with_a_strict_4xx(client, name):
    for value in JUNK:
        if (value is True and name in ("final_norm", "depth_scaled_norm")) or (
            value == 0.5 and name == "residual_scale"
        ):
            continue  # valid values of these fields
        assert_names_field(client.post("/api/trace", json={**TINY, name: value}), name)


@pytest.mark.parametrize(
    "url,name",
    [
        ("/api/layernorm", "x"),
        ("/api/layernorm", "gamma"),
        ("/api/layernorm", "eps"),
        ("/api/softmax", "logits"),
        ("/api/softmax", "scale"),
        ("/api/softmax", "scales"),
    ],
)
def test_every_lesson_field_refuses_junk_with_a_strict_4xx(client, url, name):
    for value in [*JUNK, [1.0, "2"], [1.0, None], [1e308] * 5000]:
        if (value is None and name in ("gamma", "scales")) or (value == 0.5 and name in ("eps", "scale")):
            continue  # valid: null means "the default" for these
        error = assert_names_field(client.post(url, json={name: value}))
        assert error["field"].split(".")[0] == name, error  # x.1 names the bad element


def test_nan_and_infinity_tokens_in_a_request_are_refused(client):
    for raw in (b'{"residual_scale": NaN}', b'{"residual_scale": Infinity}', b'{"residual_scale": -Infinity}'):
        assert_names_field(client.post("/api/trace", content=raw, headers=JSON), "residual_scale")
    for url, raw in (("/api/layernorm", b'{"x": [1, NaN]}'), ("/api/softmax", b'{"logits": [Infinity, 1]}')):
        assert_names_field(client.post(url, content=raw, headers=JSON))


@pytest.mark.parametrize("arch", choices("arch"))
@pytest.mark.parametrize("residual", choices("residual"))
@pytest.mark.parametrize("block", choices("block"))
def test_parameter_budget_counts_every_parameter(arch, residual, block):
    """The estimate behind MAX_PARAMETERS is within 2% of the real model's count, highway gates and dense weights included."""
    cfg = TraceConfig(arch=arch, residual=residual, block=block, depth=4, d_model=64)
    real = sum(p.numel() for p in build_model(cfg).parameters())
    assert parameter_count(cfg) == pytest.approx(real, rel=0.02)


def test_a_highway_mlp_over_the_parameter_budget_is_refused(client):
    body = {"arch": "mlp", "residual": "highway", "d_model": 512, "depth": 128, "seq_len": 4, "batch": 1}
    assert parameter_count(TraceConfig.model_construct(**{**TraceConfig().model_dump(), **body})) > MAX_PARAMETERS
    assert_names_field(client.post("/api/trace", json=body), "d_model", "d_model <= 394")  # the smallest cut


def test_many_tiny_blocks_cannot_train_for_an_hour(client):
    """Four 128-block width-4 runs for 2000 steps are only ~6e9 multiply-adds, but each block costs kernel and
    autograd overhead whatever its width: the budget counts a block as at least BLOCK_OVERHEAD_MACS."""
    tiny_deep = {"depth": 128, "d_model": 4, "n_heads": 1, "seq_len": 8, "batch": 1, "vocab_size": 8}
    assert training_macs(TraceConfig(**tiny_deep), 2000) * 4 > MAX_TRAIN_MACS
    assert_names_field(client.post("/api/train", json={"runs": [tiny_deep] * 4, "steps": 2000}), "steps")
    assert TrainRequest(runs=[TraceConfig(**tiny_deep)], steps=100)  # a short run of the same stack is fine


def test_a_float16_sweep_is_budgeted_for_the_cpus_slow_float16(client):
    """float16 matmuls ran 5-10x slower than float32 on the CPU: a sweep the float32 budget admits took ~3.5 min."""
    from app.experiments.sweep import SweepRequest

    wide = {"d_model": 128, "seq_len": 32, "batch": 2}
    assert SweepRequest(config=TraceConfig(**wide), depths=list(range(1, 129)))  # float32: fine
    response = client.post("/api/sweep", json={"config": {**wide, "dtype": "float16"}, "depths": list(range(1, 129))})
    assert_names_field(response, "depths", "float16")
    assert SweepRequest(config=TraceConfig(dtype="float16"))  # the default 1..96 sweep still runs in float16


@pytest.mark.parametrize("url,wrap", [("/api/trace", None), ("/api/sweep", "config"), ("/api/train", "runs")])
def test_thousands_of_unknown_keys_get_a_short_answer(client, url, wrap):
    """Each listed error costs a schema lookup and bytes: a 256 kB body of unknown keys once took 50 s on the
    event loop and answered 6 MB. Only the first MAX_LISTED_ERRORS are listed, with the count of the rest."""
    from app.errors import MAX_LISTED_ERRORS

    keys = {f"k{i}": 0 for i in range(2000)}
    body = {"config": keys} if wrap == "config" else {"runs": [keys]} if wrap == "runs" else keys
    response = client.post(url, json=body)
    assert_names_field(response, "config.k0" if wrap == "config" else "runs.0.k0" if wrap else "k0", "known fields")
    answer = strict(response)
    assert len(answer["errors"]) == MAX_LISTED_ERRORS and answer["errors_omitted"] == 2000 - MAX_LISTED_ERRORS


@pytest.mark.parametrize("query", ["depth=1&depth=2", "depth=2&foo=1&lang=zh", "%ff=1", "depth=%F0%9F%99%82"])
def test_odd_query_strings_get_json_answers(client, query):
    response = client.get(f"/api/chain?{query}")
    assert response.status_code < 500
    strict(response)


def test_the_server_still_answers_after_the_attacks(client):
    assert strict(client.get("/api/health"))["status"] == "ok"
