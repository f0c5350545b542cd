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


def test_every_container_is_checked_and_numbers_parse_back_exactly():
    import numpy as np

    value = {1: (0.1, [2.5e-38, {"deep": [math.nan]}]), "n": np.float32(0.25), "tiny": 5e-324, "big": 1.7e308}
    body = json.loads(strict_dumps(value))
    assert body["1"] == [0.1, [2.5e-38, {"deep": [None]}]]
    assert body["nonfinite_fields"] == ["1[1][1].deep[0]"] and body["nonfinite_count"] == 1
    assert body["n"] == 0.25 and body["tiny"] == 5e-324 and body["big"] == 1.7e308
    finite = {"x": [0.1 * k for k in range(1000)], "y": [math.pi**-k for k in range(300)]}
    assert json.loads(strict_dumps(finite)) == finite  # shortest round-trip floats, bit for bit


def test_what_orjson_refuses_is_still_written():
    """An integer beyond 64 bits (a client's junk, echoed in a 422) is written by the standard library."""
    body = json.loads(strict_dumps({"input": 2**64, "loss": math.inf}))
    assert body["input"] == 2**64 and body["loss"] is None and body["nonfinite_fields"] == ["loss"]


def test_float32_decimals_name_the_same_float32_in_fewer_digits():
    import numpy as np

    from app.jsonsafe import float32_decimals

    rng = np.random.default_rng(0)
    values = (rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000)).astype(np.float32).astype(float).tolist()
    short = float32_decimals(values)
    assert np.array_equal(np.asarray(short, dtype=np.float32), np.asarray(values, dtype=np.float32))  # same float32
    assert all(len(repr(s)) <= len(repr(v)) for s, v in zip(short, values, strict=True))
    assert sum(map(len, map(repr, short))) < 0.75 * sum(map(len, map(repr, values)))
    assert float32_decimals([8.000000953674316, 0.10000000149011612]) == [8.000001, 0.1]


def test_float32_decimals_keep_what_a_float32_cannot_hold():
    from app.jsonsafe import float32_decimals

    kept = [math.nan, math.inf, -math.inf, 1e-50, 1e-40, 5e38, -1e300, 0.0, -0.0]
    out = float32_decimals(kept)
    assert math.isnan(out[0]) and out[1:] == kept[1:]  # float64 fallbacks and subnormal ratios stay exact
