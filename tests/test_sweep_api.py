"""The depth sweep: streamed progress, one row per depth, the same numbers as single traces."""

from __future__ import annotations

import pytest

from tests.conftest import strict_json, strict_lines


def test_sweep_streams_start_progress_and_done(client):
    response = client.post("/api/sweep", json={"config": {"d_model": 32, "seq_len": 8}, "depths": [3, 1, 2]})
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    events = strict_lines(response.text)
    assert events[0]["type"] == "start" and events[0]["depths"] == [1, 2, 3]
    rows = [e for e in events if e["type"] == "depth"]
    assert [r["index"] for r in rows] == [1, 2, 3] and all(r["total"] == 3 for r in rows)
    rows.sort(key=lambda r: r["depth"])  # two depths run at once: rows arrive in completion order
    assert [len(r["grad_norm"]) for r in rows] == [1, 2, 3] == [len(r["act_norm"]) for r in rows]
    assert events[-1]["type"] == "done"


def test_sweep_rows_equal_single_traces(client):
    rows = client.post("/api/sweep?stream=false", json={"config": {"norm_position": "post"}, "depths": [4, 8]}).json()[
        "results"
    ]
    for row in rows:
        trace = client.post("/api/trace", json={"norm_position": "post", "depth": row["depth"]}).json()
        assert row["grad_norm"] == [layer["grad_norm"] for layer in trace["layers"]]


def test_post_ln_sweep_shows_early_layers_losing_signal_with_depth(client):
    rows = client.post("/api/sweep?stream=false", json={"config": {"norm_position": "post"}, "depths": [2, 24]}).json()[
        "results"
    ]
    shallow, deep = rows
    assert deep["grad_norm"][0] / deep["grad_norm"][-1] < shallow["grad_norm"][0] / shallow["grad_norm"][-1]


def test_default_sweep_is_1_to_96_and_within_budget():
    from app.experiments.sweep import SweepRequest

    assert SweepRequest().depths == list(range(1, 97))


@pytest.mark.parametrize(
    "body,field",
    [
        ({"depths": []}, "depths"),
        ({"depths": [0, 5]}, "depths"),
        ({"depths": [200]}, "depths"),
        ({"depths": list(range(1, 129)), "config": {"d_model": 128, "seq_len": 128}}, "depths"),
        ({"config": {"depth": 500}}, "config.depth"),
        ({"config": {"d_model": 66}}, "config.n_heads"),
        ({"depths": "all"}, "depths"),
    ],
)
def test_bad_sweeps_get_a_4xx_naming_the_field(client, body, field):
    response = client.post("/api/sweep", json=body)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


def test_a_client_that_leaves_stops_the_sweep(server_url):
    import time

    import httpx

    def compute() -> dict:
        return httpx.get(f"{server_url}/api/health").json()["compute"]

    body = {"config": {"seed": 987_654}, "depths": list(range(1, 97))}
    before = compute()["computed"]
    with httpx.Client(timeout=60) as http, http.stream("POST", f"{server_url}/api/sweep", json=body) as response:
        lines = response.iter_lines()
        assert strict_json(next(lines))["type"] == "start"
        assert strict_json(next(lines))["type"] == "depth"
    deadline = time.monotonic() + 30
    while compute()["active"] and time.monotonic() < deadline:
        time.sleep(0.1)
    settled = compute()["computed"]
    time.sleep(1.0)  # an observation window: nothing may start after the last depth in flight finished
    assert compute()["computed"] == settled and compute()["active"] == 0
    assert (
        settled - before < 60
    )  # of 96 depths: the sweep stopped soon after the client left (slack for a busy machine)
