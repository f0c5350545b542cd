"""/openapi.json describes every JSON answer, and each endpoint's real answer is what its model says.

The model a request is checked against is read from /openapi.json itself (the 200 answer's `$ref`, a stream's
`itemSchema`), then found among app/api/responses' models by name: the test checks the published description, not
a copy of it. Validation is strict and refuses keys a model does not list, so a key added to an answer without its
model (or a model field the answer never sends as required) fails here.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from app.api import responses
from tests.conftest import strict_json

SMALL = {"depth": 3, "d_model": 16, "n_heads": 2, "seq_len": 4, "batch": 2, "vocab_size": 16, "seed": 7}

# (method, path, body): every JSON endpoint at least once, at small sizes; the overflow and error answers too.
REQUESTS: list[tuple[str, str, Any]] = [
    ("GET", "/api/health", None),
    ("GET", "/api/presets?depth=5", None),
    ("POST", "/api/budget", {**SMALL, "depth": 128, "d_model": 512}),
    ("POST", "/api/trace", SMALL),
    ("POST", "/api/trace", {**SMALL, "arch": "mlp", "residual": "dense"}),
    ("POST", "/api/trace", {**SMALL, "depth": 24, "norm": "none", "residual_scale": 16, "dtype": "float16"}),
    ("GET", "/api/trace?depth=2&block=parallel&d_model=16&n_heads=2", None),
    ("POST", "/api/laws", SMALL),
    ("POST", "/api/laws", {**SMALL, "depth": 24, "norm": "none", "residual_scale": 16, "dtype": "float16"}),
    ("POST", "/api/paths", {"model": {**SMALL, "depth": 2}, "samples": 2}),
    ("POST", "/api/depth_scan", {"presets": ["post_ln"], "depths": [2, 3, 4], "seeds": [0]}),
    ("POST", "/api/sweep?stream=false", {"config": SMALL, "depths": [1, 2]}),
    ("GET", "/api/chain?derivative=1.5&depth=1000", None),
    ("POST", "/api/layernorm", {"x": [1, 2, 3, 5], "kind": "rmsnorm"}),
    ("POST", "/api/layernorm", {"x": [8, 2, 2]}),
    ("POST", "/api/softmax", {"logits": [1, 2, 3], "scales": [1, 100]}),
    ("GET", "/api/precision?depth=8", None),
    ("POST", "/api/batch_dependence", {"norm": "batchnorm"}),
    ("GET", "/api/norm_speed", None),
    ("GET", "/api/recorded?name=lr_warmup", None),
    ("POST", "/api/figure/norms?lang=zh", SMALL),
    ("POST", "/api/figure/gradients?lang=en", {"config": SMALL}),
    ("POST", "/api/figure/grad-heatmap?lang=en", {"config": SMALL, "depths": [1, 2]}),
    ("POST", "/api/figure/compare?lang=en", {"variants": [{"key": "post_ln", "config": SMALL}, {"key": "custom"}]}),
    ("POST", "/api/figure/layernorm?lang=en", {}),
    ("POST", "/api/figure/layernorm-geometry?lang=zh", {"x": [8, 2, 2]}),
    ("POST", "/api/figure/precision-overflow?lang=en", {"depth": 8}),
    ("POST", "/api/figure/batch-dependence?lang=zh", {}),
    ("POST", "/api/train/budget", {"steps": 2000}),
    ("GET", "/api/train/status", None),
    ("GET", "/api/train/presets", None),
    ("GET", "/api/lecture", None),
    ("GET", "/api/lecture/slide/chain?lang=zh", None),
    ("GET", "/api/lecture/slide/title?lang=en", None),
    ("GET", "/api/lecture/slide/layernorm-geometry?lang=en&option=1,2,4", None),
    ("GET", "/api/room", None),
    ("GET", "/api/real_models", None),
]
STREAMS: list[tuple[str, Any]] = [
    ("/api/sweep", {"config": SMALL, "depths": [1, 2]}),
    ("/api/sweep?rows=false", {"config": SMALL, "depths": [2, 3]}),
    ("/api/train", {"steps": 2, "runs": [{**SMALL, "depth": 2, "seq_len": 16, "vocab_size": 16}]}),
]


@pytest.fixture(scope="module")
def spec(client) -> dict[str, Any]:
    return client.get("/openapi.json").json()


def operation(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    route = path.split("?")[0]
    for template, ops in spec["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), route) and method.lower() in ops:
            return ops[method.lower()]
    raise AssertionError(f"{method} {route} is not in /openapi.json")


def model_of(reference: dict[str, Any]) -> type[BaseModel]:
    name = reference["$ref"].rsplit("/", 1)[-1]
    assert name in responses.MODELS, f"{name} is not an answer model of app/api/responses"
    return responses.MODELS[name]


def success(op: dict[str, Any]) -> dict[str, Any]:
    return next(op["responses"][code] for code in ("200", "201") if code in op["responses"])


@pytest.mark.parametrize("method, path, body", REQUESTS, ids=[f"{m} {p}" for m, p, _ in REQUESTS])
def test_an_answer_is_what_its_model_says(client, spec, method, path, body):
    response = client.request(method, path, json=body)
    assert response.status_code in (200, 201), response.text
    model = model_of(success(operation(spec, method, path))["content"]["application/json"]["schema"])
    model.model_validate_json(response.text, strict=True)


@pytest.mark.parametrize("path, body", STREAMS, ids=[p for p, _ in STREAMS])
def test_every_line_of_a_stream_is_what_its_line_model_says(client, spec, path, body):
    response = client.post(path, json=body)
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    line = model_of(success(operation(spec, "POST", path))["content"]["application/x-ndjson"]["itemSchema"])
    kinds = [line.model_validate_json(text, strict=True).root.type for text in response.text.splitlines()]  # type: ignore[attr-defined]
    assert kinds[0] == "start" and kinds[-1] in ("done", "end") and "error" not in kinds


def test_an_overflowed_answer_lists_its_nulls_where_the_model_says(client):
    body = {**SMALL, "depth": 24, "norm": "none", "residual_scale": 16, "dtype": "float16"}
    answer = responses.TraceAnswer.model_validate_json(client.post("/api/trace", json=body).text, strict=True)
    assert answer.nonfinite_count and answer.nonfinite_fields and answer.summary.nonfinite
    assert answer.summary.first_nonfinite_layer is not None and answer.layers[-1].act_max_abs is None


@pytest.mark.parametrize(
    "method, path, body, status",
    [
        ("POST", "/api/trace", {"depth": 500}, 422),
        ("POST", "/api/train", {"steps": 0}, 422),
        ("GET", "/api/lecture/slide/no-such-slide", None, 404),
        ("PUT", "/api/follow/abcdefgh", {"key": "k", "slide": 0}, 404),
    ],
)
def test_an_error_is_the_error_model_the_operation_names(client, spec, method, path, body, status):
    response = client.request(method, path, json=body)
    assert response.status_code == status
    content = operation(spec, method, path)["responses"][str(status)]["content"]["application/json"]
    assert model_of(content["schema"]) is responses.ErrorAnswer
    responses.ErrorAnswer.model_validate_json(response.text, strict=True)


def test_following_opens_moves_and_reads_as_described(client, spec):
    opened = client.post("/api/follow", json={"slide": 2})
    assert opened.status_code == 201
    room = responses.FollowOpened.model_validate_json(opened.text, strict=True)
    moved = client.put(f"/api/follow/{room.room}", json={"key": room.key, "slide": 3})
    state = client.get(f"/api/follow/{room.room}")
    for response, method in ((moved, "PUT"), (state, "GET")):
        op = operation(spec, method, f"/api/follow/{room.room}")
        model_of(success(op)["content"]["application/json"]["schema"]).model_validate_json(response.text, strict=True)
    assert state.json()["slide"] == 3 and state.json()["seq"] > room.seq


def test_every_json_answer_under_api_is_described(spec):
    """No operation under /api/ answers JSON without a model: the old `{}` or a bare object is not a description."""
    undescribed = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for code, answer in op["responses"].items():
                for media, content in answer.get("content", {}).items():
                    schema = content.get("itemSchema") or content.get("schema") or {}
                    described = "$ref" in schema or path == "/api/schema" or not media.endswith("json")
                    if path.startswith("/api/") and not described:
                        undescribed.append(f"{method.upper()} {path} {code} {media}")
    assert not undescribed, undescribed
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's 422 shape is not ours


def test_every_reference_in_the_schema_resolves(spec):
    text = json.dumps(spec)
    named = set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', text))
    assert named and named <= set(spec["components"]["schemas"]), named - set(spec["components"]["schemas"])


def test_the_schema_names_fields_a_reader_needs(spec):
    schemas = spec["components"]["schemas"]
    trace = schemas["TraceAnswer"]
    assert {"config", "embedding", "layers", "sublayers", "loss", "summary"} <= set(trace["required"])
    assert trace["additionalProperties"] is False
    assert {"type": "null"} in schemas["Layer"]["properties"]["act_norm"]["anyOf"]  # where it overflowed
    assert "written as null" in trace["properties"]["nonfinite_fields"]["description"]
    assert set(strict_json(json.dumps(schemas["SweepLine"]))["discriminator"]["mapping"]) == {
        "start",
        "depth",
        "error",
        "done",
    }
