"""The new variants through the API: accepted on every endpoint that takes a model, refused with a 4xx naming
the field when GroupNorm's groups do not divide the width."""

from __future__ import annotations

import pytest

from tests.conftest import strict_json
from tests.grids import choices

BAD_GROUPS = {"norm": "groupnorm", "d_model": 12, "n_heads": 4, "norm_groups": 5}


def assert_names_groups(response, field: str) -> None:
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["field"] == field
    assert error["allowed"] == "1, 2, 3, 4, 6"  # the divisors of 12 that leave 2 or more channels a group
    assert "must divide d_model (12)" in error["message"]


def test_trace_refuses_groups_that_do_not_divide_the_width(client):
    assert_names_groups(client.post("/api/trace", json=BAD_GROUPS), "norm_groups")
    query = "&".join(f"{k}={v}" for k, v in BAD_GROUPS.items())
    assert_names_groups(client.get(f"/api/trace?{query}"), "norm_groups")


def test_train_and_sweep_refuse_them_too(client):
    assert_names_groups(client.post("/api/train", json={"runs": [BAD_GROUPS]}), "runs.0.norm_groups")
    assert_names_groups(
        client.post("/api/sweep?stream=false", json={"config": BAD_GROUPS, "depths": [1, 2]}), "config.norm_groups"
    )


@pytest.mark.parametrize("groups", [0, 257, 2.5, "four"])
def test_groups_out_of_range_name_their_bounds(client, groups):
    response = client.post("/api/trace", json={"norm": "groupnorm", "norm_groups": groups})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "norm_groups"


def test_schema_offers_every_new_value(client):
    properties = client.get("/api/schema").json()["properties"]
    assert properties["block"]["enum"] == list(choices("block")) and "parallel" in properties["block"]["enum"]
    assert {"batchnorm", "groupnorm"} <= set(properties["norm"]["enum"])
    assert "dense" in properties["residual"]["enum"]
    assert properties["norm_groups"]["minimum"] == 1 and properties["norm_groups"]["default"] == 8


@pytest.mark.parametrize("norm", ["batchnorm", "groupnorm"])
def test_the_new_variants_trace_through_the_query_string(client, norm):
    response = client.get(f"/api/trace?norm={norm}&block=parallel&residual=dense&depth=6&norm_groups=4")
    assert response.status_code == 200
    body = strict_json(response.text)
    assert body["config"]["block"] == "parallel" and body["config"]["residual"] == "dense"
    assert [s["sublayer"] for s in body["sublayers"]] == ["parallel"] * 6


def test_a_dense_sweep_streams_every_depth(client):
    response = client.post(
        "/api/sweep", json={"config": {"residual": "dense", "block": "parallel", "d_model": 32}, "depths": [1, 4, 8]}
    )
    assert response.status_code == 200
    rows = [strict_json(line) for line in response.text.splitlines() if line.strip()]
    depth_rows = [row for row in rows if row["type"] == "depth"]
    assert sorted(row["depth"] for row in depth_rows) == [1, 4, 8] and rows[-1]["type"] == "done"
    assert all(len(row["grad_norm"]) == row["depth"] and not row["nonfinite"] for row in depth_rows)


def test_a_trace_reports_what_the_variant_costs(client):
    """DenseFormer's extra weights and the highway gates show in the trace's own parameter count and multiply-adds."""
    base = {"depth": 12, "d_model": 32, "n_heads": 2, "seq_len": 8, "batch": 2}
    summaries = {
        r: strict_json(client.post("/api/trace", json={**base, "residual": r}).text)["summary"]
        for r in ("identity", "dense", "highway")
    }
    assert summaries["dense"]["parameters"] - summaries["identity"]["parameters"] == 12 * 15 // 2
    assert summaries["dense"]["forward_macs"] - summaries["identity"]["forward_macs"] == 16 * 32 * 90
    assert summaries["highway"]["parameters"] - summaries["identity"]["parameters"] == 12 * 2 * (32 * 32 + 32)
