"""The lesson charts built in Python (app/figures/softmax.py, precision.py, batchnorm.py, layernorm.py): every
caption and table cell read from the numbers under it, on the defaults and off them, in both languages."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import plotly.graph_objects as go
import pytest

import app as rx
from app.experiments.lessons.softmax import SWEEP_SCALES
from app.figures import build
from app.figures import layernorm as layernorm_chart
from app.figures.chart import apply_patch
from app.figures.precision import exact
from app.jsonsafe import strict_dumps

SWEEP = [0.1, 1.0, 10.0, 100.0, 316.2]


def chart(client, key: str, body: dict, lang: str = "en") -> dict:
    response = client.post(f"/api/figure/{key}?lang={lang}", json=body)
    assert response.status_code == 200, response.text
    out = response.json()
    go.Figure(out["figure"])  # valid Plotly
    return out


# --- /softmax ---


def test_softmax_bars_are_the_softmax_of_the_scaled_logits(client):
    z, s = [2.0, 1.0, 0.5, 0.0, -1.0], 2.0
    out = chart(client, "softmax-probs", {"logits": z, "scale": s, "scales": SWEEP})
    total = sum(math.exp(s * v) for v in z)
    assert out["figure"]["data"][0]["y"] == pytest.approx([math.exp(s * v) / total for v in z], rel=1e-12)
    assert out["claim"]["argmax"] == 1 and [r["position"] for r in out["rows"]] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_tied_top_scores_are_never_called_one_hot(client, lang):
    """Logits 5, 5, 5: p = 1/3 at every scale, and the Jacobian keeps its norm 1/3."""
    out = chart(client, "softmax-sweep", {"logits": [5, 5, 5], "scale": 316, "scales": SWEEP}, lang)
    assert out["claim"]["why"] == "tied" and out["claim"]["end_max_prob"] == pytest.approx(1 / 3)
    assert ("tied" if lang == "en" else "相等") in out["caption"]
    assert ("almost no gradient" if lang == "en" else "几乎没有梯度") not in out["caption"]


def test_one_hot_only_where_the_largest_probability_is(client):
    spread = chart(client, "softmax-sweep", {"logits": [2, 1, 0.5, 0, -1], "scale": 1, "scales": SWEEP})
    assert spread["claim"]["why"] == "one_hot" and spread["claim"]["end_max_prob"] >= 0.99
    close = chart(client, "softmax-sweep", {"logits": [0.001, 0], "scale": 1, "scales": SWEEP})
    assert close["claim"]["why"] == "not_yet" and close["claim"]["end_max_prob"] < 0.99
    assert "not one-hot yet" in close["caption"] and "almost no gradient" not in close["caption"]


def test_the_chosen_scale_and_the_sweeps_end_are_named_once_when_they_print_alike(client):
    """s = 316 and the sweep's last scale 316.2 both print as "316": one sentence, not two "At s = 316"."""
    same = chart(client, "softmax-sweep", {"logits": [2, 1, 0.5, 0, -1], "scale": 316, "scales": SWEEP})
    assert same["caption"].count("s = 316") == 1 and same["claim"]["last_scale"] is None
    apart = chart(client, "softmax-sweep", {"logits": [2, 1, 0.5, 0, -1], "scale": 1, "scales": SWEEP})
    assert apart["claim"]["last_scale"] == 316.2 and "At s = 316 it is" in apart["caption"]


def test_the_sweep_chart_without_a_sweep_is_refused_naming_scales(client):
    response = client.post("/api/figure/softmax-sweep", json={"logits": [1, 2]})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "scales"


# --- /precision ---


def test_precision_caption_names_the_first_block_float16_cannot_hold(client):
    out = chart(client, "precision-overflow", {})
    float16 = out["figure"]["data"][1]["y"]
    first_gap = next(i for i, v in enumerate(float16) if v is None) + 1
    assert out["claim"]["overflow_layer"] == first_gap and f"block {first_gap} " in out["caption"]
    assert all(v is None for v in float16[first_gap - 1 :])


def test_precision_table_reads_each_formats_sum(client):
    """10000 + 0.001: float32 keeps b (rounded), bfloat16 and float16 swallow it: every digit of the stored sums."""
    out = chart(client, "precision-overflow", {"big": 10000, "small": 0.001}, "zh")
    table = out["tables"]["formats"]
    cells = {row[0]["text"]: [c["text"] for c in row[1:]] for row in table["rows"]}
    assert cells["float32"][5] == "10000.0009765625" and cells["float16"][5] == "10000"
    assert cells["bfloat16"][3] == "9984" and cells["float16"][4] == "8"
    assert out["claim"]["verdicts"] == {"float32": "rounded", "bfloat16": "lost", "float16": "lost"}
    assert [row[-1].get("lost", False) for row in table["rows"]] == [True, True, True]
    assert "10000.001" in table["caption"]


def test_a_stack_that_stays_finite_says_so_with_its_peak(client):
    out = chart(client, "precision-overflow", {"norm": "layernorm", "depth": 12})
    peak = max(out["figure"]["data"][1]["y"])
    assert out["claim"]["overflow_layer"] is None and out["claim"]["float16_peak"] == peak
    assert "stays finite through all 12 blocks" in out["caption"]
    assert "shapes" not in out["figure"]["layout"] or all(
        s["type"] != "rect" for s in out["figure"]["layout"]["shapes"]
    )


def test_precision_refuses_another_dtype_and_out_of_range_fields(client):
    for body, field in (({"dtype": "float32"}, "dtype"), ({"depth": 0}, "depth"), ({"big": True}, "big")):
        response = client.post("/api/figure/precision-overflow", json=body)
        assert response.status_code == 422 and response.json()["errors"][0]["field"] == field, body


@pytest.mark.parametrize(
    "value, text",
    [(10000.0, "10000"), (1e16, "10000000000000000"), (-1e-7, "−0.0000001"), (0.1, "0.1"), (None, "overflow")],
)
def test_exact_writes_every_digit_without_an_exponent(value, text):
    assert exact(value, "en").startswith(text)


# --- /batchnorm ---


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_batchnorm_captions_and_table_read_the_four_answers(client, lang):
    dependence = chart(client, "batch-dependence", {}, lang)
    facts = dependence["claim"]
    by_batch = [r for r in dependence["rows"] if r["norm"] == "batchnorm"]
    assert facts["same"] == next(r["same_sequence_change"] for r in by_batch if r["batch"] == 8)
    assert facts["big_same"] == by_batch[-1]["same_sequence_change"] and facts["shrinks"]
    assert (
        facts["per_token_max"]
        == 0
        == max(r["same_sequence_change"] for r in dependence["rows"] if r["norm"] != "batchnorm")
    )
    table = dependence["tables"]["batch-table"]["rows"]
    assert table[0][0]["text"] == "BatchNorm" and table[0][0]["header"] and len(table) == 4
    assert [row[1].get("lost", False) for row in table] == [True, False, False, False]
    padding = chart(client, "batch-padding", {}, lang)
    assert abs(padding["claim"]["pad_fraction"] - 0.5) <= min(abs(r["pad_fraction"] - 0.5) for r in padding["rows"])


def test_no_bigger_batch_sentence_at_the_largest_batch(client):
    out = chart(client, "batch-dependence", {"batch": 64})
    assert (
        not out["claim"]["shrinks"]
        and "bigger batch" not in out["caption"]
        and "B = 64 sequences" not in out["caption"]
    )


def test_a_bigger_batch_that_does_not_shrink_the_change_is_not_said_to(client):
    answers = client.post("/api/figure/batch-dependence", json={}).json()  # warm the cache, then a synthetic copy
    four = {norm: client.post("/api/batch_dependence", json={"norm": norm}).json() for norm in
            ("batchnorm", "layernorm", "rmsnorm", "groupnorm")}  # fmt: skip
    grown = copy.deepcopy(four)
    grown["batchnorm"]["by_batch"][-1]["same_sequence_change"] = 2 * four["batchnorm"]["same_sequence_change"]
    built = build("batch-dependence", grown)
    assert answers["claim"]["shrinks"] and not built.claim["shrinks"]
    assert "no smaller than at B = 8" in built.caption and "shrinks" not in built.caption


def test_batchnorm_groups_that_do_not_divide_the_width_are_refused_by_name(client):
    response = client.post("/api/figure/batch-padding", json={"d_model": 16, "groups": 3})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "groups"


# --- /layernorm ---


@pytest.mark.parametrize("x", [[8, 2, 2, 4], [8, 8, 8, 8], [1, -1, 3]])
def test_layernorm_caption_states_the_statistics_of_x(client, x):
    out = chart(client, "layernorm", {"x": x, "gamma": 1.5, "beta": 0.5})
    mean = sum(x) / len(x)
    variance = sum((v - mean) ** 2 for v in x) / len(x)
    assert out["claim"]["mean"] == pytest.approx(mean) and out["claim"]["variance"] == pytest.approx(variance)
    rms = out["figure"]["data"][2]["y"]
    assert out["claim"]["rms_mean"] == pytest.approx(sum(rms) / len(rms))
    ln = out["figure"]["data"][1]["y"]
    assert sum(ln) / len(ln) == pytest.approx(0.5)  # centred on β, as the caption says
    steps = out["tables"]["steps-layernorm"]
    assert len(steps["rows"]) == 6 and "layer_norm" in steps["caption"]


def test_an_overflowed_rms_gives_no_mean_for_rmsnorm(client):
    out = chart(client, "layernorm", {"x": [1e300, 1e300]})
    assert out["claim"]["rms_mean"] is None and "overflow" in out["caption"]


def speed_answer(ratios: list[float], composed: list[float], ops: dict[str, int], spread: float = 0.1) -> dict:
    """A norm_speed answer with the given ratios (RMSNorm ÷ LayerNorm) at three widths."""

    def timing(median: float) -> dict:
        return {"median_us": median, "p25_us": median * (1 - spread / 2), "p75_us": median * (1 + spread / 2)}

    rows = [
        {"width": w, "layernorm": timing(100.0), "rmsnorm": timing(100.0 * r), "layernorm_composed": timing(100.0 * r * c),
         "ratio": r, "composed_ratio": c}
        for w, r, c in zip((64, 256, 1024), ratios, composed, strict=True)
    ]  # fmt: skip
    return {"rows": rows, "tokens": 256, "repeats": 25, "operator_calls": ops, "threads": 1, "torch": "2",
            "kernels": {"layernorm": "a", "rmsnorm": "b", "layernorm_composed": "c"}, "measured_at": "now"}  # fmt: skip


@pytest.mark.parametrize(
    "ratios, ops, verdict, why",
    [
        ([1.2, 1.5, 2.0], {"layernorm": 5, "rmsnorm": 26}, "slower", "slower"),
        ([1.2, 1.5, 2.0], {"layernorm": 5, "rmsnorm": 5}, "slower", "mixed"),  # no fused-vs-chain story to tell
        ([0.5, 0.6, 0.9], {"layernorm": 5, "rmsnorm": 3}, "faster", "faster"),
        ([0.9, 1.0, 1.2], {"layernorm": 5, "rmsnorm": 26}, "mixed", "mixed"),
    ],
)
def test_the_speed_verdict_follows_the_measured_ratios(ratios, ops, verdict, why):
    built = layernorm_chart.build_speed(speed_answer(ratios, [1.2, 1.3, 1.4], {**ops, "layernorm_composed": 37}))
    assert built.claim["verdict"] == verdict and built.claim["why"] == why
    assert f"RMSNorm took {min(ratios):.2g}× to {max(ratios):.2g}×" in built.caption
    assert ("fused kernel" in built.caption) == (why == "slower") and "bars are wide" not in built.caption
    noisy = layernorm_chart.build_speed(speed_answer(ratios, [1.2, 1.3, 1.4], ops, spread=0.8))
    assert noisy.claim["noisy"] and "bars are wide" in noisy.caption


# --- the notebook: rx.lesson(...) shows what the page receives ---

PAGE_BODIES: dict[str, dict[str, Any]] = {
    "chain": {"derivative": 0.9, "depth": 96},
    "softmax-probs": {"logits": [5, 5, 5], "scale": 3, "scales": list(SWEEP_SCALES)},
    "softmax-sweep": {"logits": [2, 1, 0.5, 0, -1], "scale": 316, "scales": list(SWEEP_SCALES)},
    "precision-overflow": {"big": 10000, "small": 0.001, "depth": 24},
    "layernorm": {"x": [8, 2, 2, 4], "gamma": 1.5, "beta": 0.5, "eps": 1e-5},
    "batch-dependence": {"batch": 16},
    "batch-padding": {},
}


@pytest.mark.parametrize("key", PAGE_BODIES)
@pytest.mark.parametrize("theme", ["normal", "slide"])
def test_the_notebooks_lesson_figure_is_the_pages_json(client, key, theme):
    page = client.post(f"/api/figure/{key}?lang=zh", json=PAGE_BODIES[key]).json()
    lesson = rx.lesson(key, lang="zh", **PAGE_BODIES[key])
    shown = apply_patch(copy.deepcopy(page["figure"]), page["patches"]["slide"]) if theme == "slide" else page["figure"]
    data = lesson.figure(theme=theme).to_plotly_json()
    for trace in data["data"]:
        trace.pop("uid", None)
    rows = json.loads(strict_dumps(lesson.rows))  # NaN in process, null on the wire
    assert data == shown and lesson.caption == page["caption"] and rows == page["rows"]


def test_rx_lesson_refuses_what_the_endpoint_refuses():
    with pytest.raises(ValueError, match="chart: one of"):
        rx.lesson("norms")
    with pytest.raises(TypeError, match="did you mean 'depth'"):
        rx.lesson("chain", dpeth=3)
    with pytest.raises(ValueError, match="derivative"):
        rx.lesson("chain", derivative=True)
