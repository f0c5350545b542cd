"""Budget errors that help (issue 18, item 6): the size to blame, the largest value of it that fits, and each
size's limit given the others (POST /api/budget) for the controls. Today's answer blamed depth for d_model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.config import TraceConfig
from app.config.limits import SIZE_FIELDS, budget_report
from tests.test_robustness import assert_names_field, strict

DEEP_AND_WIDE = {"depth": 128, "d_model": 512}  # both within the controls' ranges, together 17x over the budget


def test_deep_and_wide_blames_d_model_and_names_the_largest_that_fits(client):
    """d_model needs the smaller cut (512 -> 120, x0.23) than depth (128 -> 7, x0.05)."""
    errors = assert_names_field(client.post("/api/trace", json=DEEP_AND_WIDE), "d_model", "d_model <= 120")
    assert "depth <= 7" in errors["allowed"]
    assert TraceConfig(depth=128, d_model=120)
    with pytest.raises(ValidationError):
        TraceConfig(depth=128, d_model=124)  # the next width n_heads = 4 divides


def test_the_budget_endpoint_reports_cause_and_limits_of_a_model_over_budget(client):
    report = strict(client.post("/api/budget", json=DEEP_AND_WIDE))
    assert report["fits"] is False and report["cause"] == "d_model"
    assert report["limits"]["d_model"] == {"value": 512, "min": 4, "max": 120}
    assert report["limits"]["depth"]["max"] == 7
    assert report["costs"]["forward_multiply_adds"]["value"] > report["costs"]["forward_multiply_adds"]["limit"]


@pytest.mark.parametrize("field", SIZE_FIELDS)
def test_each_limit_fits_and_the_values_above_it_do_not(field):
    """The limit of every size at the reference model's other settings is accepted; the next 8 values are not
    (or the limit is the field's own maximum)."""
    cfg = TraceConfig(depth=96, activation="tanh")
    limit = budget_report(cfg)["limits"][field]["max"]
    maximum = TraceConfig.model_json_schema()["properties"][field]["maximum"]
    assert TraceConfig(**{**cfg.model_dump(), field: limit})
    for above in range(limit + 1, min(limit + 9, maximum + 1)):
        with pytest.raises(ValidationError):
            TraceConfig(**{**cfg.model_dump(), field: above})


def test_the_budget_endpoint_still_refuses_what_is_not_a_size(client):
    assert_names_field(client.post("/api/budget", json={"d_model": "wide"}), "d_model")
    assert_names_field(client.post("/api/budget", json={"d_model": 64, "n_heads": 5}), "n_heads")
