"""Strict JSON: inf and NaN become null and are listed; finite answers come out as plain compact JSON."""
from __future__ import annotations

import json
import math

from app.jsonsafe import strict_dumps


def test_finite_values_are_plain_compact_json():
    value = {"layers": [{"act_norm": 1.5, "name": "层"}, {"act_norm": 1e-300}], "loss": 4.85, "ok": True, "n": None}
    assert strict_dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_non_finite_values_become_null_and_are_listed_by_path():
    value = {"layers": [{"act_norm": 1.5}, {"act_norm": math.inf, "grad": [0.0, -math.inf]}], "loss": math.nan}
    body = json.loads(strict_dumps(value))
    assert body["layers"][1] == {"act_norm": None, "grad": [0.0, None]} and body["loss"] is None
    assert body["nonfinite_fields"] == ["layers[1].act_norm", "layers[1].grad[1]", "loss"]
    assert body["nonfinite_count"] == 3 and body["layers"][0] == {"act_norm": 1.5}
    assert "nonfinite_fields" not in value  # the caller's value is left as it was
