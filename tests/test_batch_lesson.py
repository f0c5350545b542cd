"""POST /api/batch_dependence (why NLP avoids BatchNorm) and GET /api/norm_speed: numbers redone by hand,
trends a reader would check, bad input named. The speed test checks the shape of a measurement, never a time."""

from __future__ import annotations

from itertools import pairwise

import pytest
import torch
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api import lessons
from app.errors import install_error_handlers
from app.experiments.lessons import norm_speed
from app.experiments.lessons.batch import (
    BATCH_SWEEP,
    BatchDependenceRequest,
    TokenSource,
    batch_dependence_lesson,
    relative_change,
)
from tests.conftest import strict

PER_TOKEN = ["layernorm", "rmsnorm", "groupnorm"]


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(lessons.router)
    return TestClient(app)


@pytest.fixture(scope="module")
def answers(client) -> dict[str, dict]:
    return {
        norm: strict(client.post("/api/batch_dependence", json={"norm": norm})) for norm in ("batchnorm", *PER_TOKEN)
    }


def test_batchnorm_output_depends_on_the_batch_and_the_per_token_norms_do_not(answers):
    assert answers["batchnorm"]["same_sequence_change"] > 0.1
    for norm in PER_TOKEN:
        assert all(row["same_sequence_change_max"] <= 1e-12 for row in answers[norm]["by_batch"]), norm


def test_only_batchnorm_has_a_train_eval_gap(answers):
    assert answers["batchnorm"]["train_eval_change"] > 0.05
    for norm in PER_TOKEN:
        assert answers[norm]["train_eval_change"] is None
        assert all(row["train_eval_change"] is None for row in answers[norm]["by_batch"])


def test_a_bigger_batch_shrinks_batchnorms_dependence_but_not_to_zero(answers):
    rows = answers["batchnorm"]["by_batch"]
    assert [row["batch"] for row in rows] == list(BATCH_SWEEP)
    changes = [row["same_sequence_change"] for row in rows]
    assert all(a > b for a, b in pairwise(changes))
    assert changes[-1] > 0.05 and changes[0] > 2 * changes[-1]


def test_same_sequence_change_redone_by_hand():
    """Batch of 2, one replacement: regenerate the same tokens and normalize with the textbook formula."""
    req = BatchDependenceRequest(norm="batchnorm", batch=2, trials=1, d_model=8, seq_len=4)
    source = TokenSource(req)
    fixed = source.sequences(1)
    first, second = (torch.cat([fixed, source.sequences(1)]) for _ in range(2))

    def batch_norm(x):
        flat = x.reshape(-1, 8)
        return ((flat - flat.mean(0)) / torch.sqrt(flat.var(0, correction=0) + 1e-5)).view_as(x)[0]

    by_hand = (batch_norm(second) - batch_norm(first)).pow(2).mean().sqrt() / batch_norm(first).pow(2).mean().sqrt()
    answer = batch_dependence_lesson(req)
    assert answer["same_sequence_change"] == pytest.approx(by_hand.item(), rel=1e-9)
    assert relative_change(batch_norm(first), batch_norm(first)) == 0.0


def test_padding_moves_batchnorms_statistics_and_the_unpadded_sequence(answers):
    points = answers["batchnorm"]["padding"]
    assert points[0]["pad_fraction"] == 0.0 and points[0]["output_change"] < 1e-12 and points[0]["mean_shift"] < 1e-12
    fractions = [p["pad_fraction"] for p in points]
    assert all(a < b for a, b in pairwise(fractions)) and fractions[-1] > 0.6
    for field in ("output_change", "mean_shift"):
        values = [p[field] for p in points]
        assert all(a < b for a, b in pairwise(values)), field
    assert points[-1]["std_ratio"] < 0.9  # zero pads pull the channel spread in
    for norm in PER_TOKEN:
        assert all(p["output_change"] <= 1e-12 and p["mean_shift"] is None for p in answers[norm]["padding"])


def test_every_layer_agrees_with_torch_functional(answers):
    for norm, answer in answers.items():
        assert answer["torch_check"]["op"].endswith(norm.replace("norm", "_norm"))
        assert answer["torch_check"]["max_abs_difference"] < 1e-12


def test_answers_are_cached(client):
    body = {"norm": "groupnorm", "groups": 2, "batch": 4, "trials": 2}
    first, again = (strict(client.post("/api/batch_dependence", json=body)) for _ in range(2))
    assert first["cached"] is False and again["cached"] is True and again["by_batch"] == first["by_batch"]


@pytest.mark.parametrize(
    "body, field, allowed",
    [
        ({"groups": 5}, "groups", "1, 2, 4, 8"),
        ({"d_model": 12, "groups": 8}, "groups", "1, 2, 3, 4, 6"),
        ({"norm": "dyt"}, "norm", "one of: batchnorm, layernorm, rmsnorm, groupnorm"),
        ({"batch": 1}, "batch", "[2, 64]"),
        ({"d_model": 1024}, "d_model", "[4, 64]"),
        ({"trials": 0}, "trials", "[1, 16]"),
        ({"colour": "red"}, "colour", "known fields"),
    ],
)
def test_bad_input_names_the_field_and_what_it_allows(client, body, field, allowed):
    response = client.post("/api/batch_dependence", json=body)
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["field"] == field and allowed in error["allowed"], error


def test_norm_speed_reports_medians_with_their_spread():
    answer = norm_speed.measure_norm_speed(budget_s=0.0, widths=(64, 256))  # the minimum number of repeats
    assert answer["repeats"] == norm_speed.MIN_REPEATS and [row["width"] for row in answer["rows"]] == [64, 256]
    for row in answer["rows"]:
        for kind in norm_speed.KERNELS:
            spread = row[kind]
            assert (
                0 < spread["min_us"] <= spread["p25_us"] <= spread["median_us"] <= spread["p75_us"] <= spread["max_us"]
            )
        assert row["ratio"] == pytest.approx(row["rmsnorm"]["median_us"] / row["layernorm"]["median_us"])
        assert row["ns_per_number"]["layernorm"] == pytest.approx(
            row["layernorm"]["median_us"] * 1e3 / (256 * row["width"])
        )


def test_norm_speed_is_measured_once_per_server(monkeypatch, client):
    monkeypatch.setattr(norm_speed, "BUDGET_S", 0.0)
    monkeypatch.setattr(norm_speed, "WIDTHS", (64,))
    first, again = (strict(client.get("/api/norm_speed")) for _ in range(2))
    assert again["cached"] is True and again["rows"] == first["rows"] and again["kernels"] == norm_speed.KERNELS
