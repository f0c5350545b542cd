"""/models' charts, built in Python (app/figures/real_*.py): every chart of every answer in both languages, the
captions' words against the numbers under them (on tiny random models and edited answers, so every branch is
reached), the gradient times the stream's norm by hand, and the packaged models' figures."""

from __future__ import annotations

import copy
import math
import re
from typing import Any

import plotly.graph_objects as go
import pytest
import torch

pytest.importorskip("transformers")

from app.experiments.real_sentences import SENTENCES, band, summarise
from app.experiments.real_set import set_answer
from app.experiments.real_trace import trace_real
from app.figures import real_charts
from app.figures.real_common import blocks_text
from app.jsonsafe import all_finite, strict_dumps
from tests.conftest import packaged_model
from tests.test_real_models import SENTENCE, tiny

KINDS = {kind.key: kind for kind in real_charts()}
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def tiny_answers() -> dict[str, dict[str, Any]]:
    """Per family (a random BERT, a random Llama) the answer of each request kind, as the server makes them."""
    out = {}
    for kind in ("bert", "llama"):
        loaded = tiny(kind)
        trace = trace_real(loaded, SENTENCE)
        the_set = set_answer(loaded)
        out[kind] = {
            "real_trace": trace,
            "real_pair": {"traces": [trace, {"failed": "other", "message": "could not be loaded"}]},
            "real_set": {**the_set, "own": summarise(trace), "own_intervention": None},
        }
    return out


def answer_for(answers: dict[str, Any], key: str) -> Any:
    return answers[KINDS[key].request]


@pytest.mark.parametrize("family", ["bert", "llama"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_chart_builds_valid_plotly_and_says_it_in_the_language(tiny_answers, family: str, lang: str):
    for key in KINDS:
        chart = KINDS[key].build(answer_for(tiny_answers[family], key), lang)
        strict_dumps(chart.to_json())
        assert all_finite(chart.figure), key  # a gap is null, never NaN
        go.Figure(chart.figure)  # plotly's own validation of every trace and layout key
        go.Figure(chart.view("slide"))
        assert chart.caption and "{" not in chart.caption, (key, chart.caption)
        assert bool(HAN.search(chart.caption)) == (lang == "zh"), (key, chart.caption)


def test_a_failed_model_is_named_and_the_other_still_drawn(tiny_answers):
    chart = KINDS["models-stream"].build(tiny_answers["llama"]["real_pair"], "en")
    assert "other could not be traced: could not be loaded" in chart.caption
    assert chart.figure["data"] and all("other" not in t["name"] for t in chart.figure["data"])
    assert chart.claim["models"][1] == {"model": "other", "failed": True}


def test_every_csv_row_names_the_weights_it_comes_from(tiny_answers):
    """A CSV export says which weights it holds, as the JSON does: each row of every chart carries its model's
    revision (the weights' digest); a pair's failed model has no rows to mark."""
    answers = copy.deepcopy(tiny_answers["llama"])
    revision = "0123abcd"  # a random model has no weights file to digest: its revision is ""
    for model in (
        answers["real_trace"]["model"],
        answers["real_pair"]["traces"][0]["model"],
        answers["real_set"]["model"],
    ):
        model["revision"] = revision
    with_rows = 0
    for key, kind in KINDS.items():
        rows = kind.build(answer_for(answers, key), "en").rows
        assert all(row.get("revision") == revision for row in rows), key
        with_rows += bool(rows)
    assert with_rows >= len(KINDS) - 2  # the heads' and the intervention's may be empty on a tiny random model


def test_pinned_is_said_only_of_the_blocks_whose_text_tokens_end_within_one_and_a_half(tiny_answers):
    trace = copy.deepcopy(tiny_answers["bert"]["real_trace"])  # a fresh BERT pins every token at √d
    caption = KINDS["models-stream"].build({"traces": [trace]}, "en").caption
    assert "within 1.5× of each other after the block's last norm in every block: pinned there" in caption
    post = trace["post_ln"]
    post["text_token_spread_after_norm"] = [1.2, 1.4, 2.5, 3.0]
    post["pinned"] = [True, True, False, False]
    caption = KINDS["models-stream"].build({"traces": [trace]}, "en").caption
    assert "in blocks 1–2: pinned there; not in blocks 3–4 (up to 3× apart)" in caption
    assert KINDS["models-stream"].build({"traces": [trace]}, "en").claim["models"][0]["unpinned_blocks"] == [3, 4]
    assert "0 of 44 tokens unknown" in caption  # [UNK] counted for every model drawn


def test_block_ranges_in_words():
    assert blocks_text([1, 2, 3, 5], "en") == "blocks 1–3, block 5"
    assert blocks_text([1, 2, 3, 4], "en", of=4) == "every block"
    assert blocks_text([], "zh") == "没有任何块"


def edited_sink(trace: dict[str, Any], ratios: list[float], mass: list[float], uniform: float) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    out["summary"]["first_token_ratio"] = [1.0, *ratios]
    out["attention"] = {"queries_from": 1, "mass": mass, "mass_per_head": [[m, m] for m in mass], "uniform": uniform}
    return out


def test_the_sink_caption_names_the_massive_activation_only_where_the_ratio_passes_100(tiny_answers):
    trace = tiny_answers["llama"]["real_trace"]
    massive = edited_sink(trace, [2, 150, 120, 9], [0.6, 0.1, 0.7, 0.8], 0.2)
    chart = KINDS["models-sink"].build(massive, "en")
    assert "above 100× the others' in blocks 2–3 (at most 150×)" in chart.caption
    assert (
        "At block 2, where it first is, the attention on the first token is 0.1, below the uniform 0.2" in chart.caption
    )
    assert "in blocks 3–4 it is 0.7–0.8" in chart.caption and chart.claim["sinks"] == 3
    quiet = edited_sink(trace, [2, 3, 2, 1], [0.6, 0.5, 0.7, 0.8], 0.2)
    assert "without a massive activation" in KINDS["models-sink"].build(quiet, "en").caption
    flat = edited_sink(trace, [2, 3, 2, 1], [0.2, 0.2, 0.2, 0.2], 0.2)
    caption = KINDS["models-sink"].build(flat, "en").caption
    assert "0 of 4 blocks" in caption and "massive" not in caption


def edited_gradient(trace: dict[str, Any], per_token: list[float], times_norm: list[float]) -> dict[str, Any]:
    out = copy.deepcopy(trace)
    out["gradient"]["per_token_mean"], out["gradient"]["times_norm"] = per_token, times_norm
    return out


@pytest.mark.parametrize(
    ("product", "verdict"),
    [([8.0, 9.0, 10.0, 12.0, 11.0], "follows"), ([1.0, 2.0, 5.0, 8.0, 9.0], "part"), ([1.0, 20.0, 5.0, 2, 3], "not")],
)
def test_the_gradient_is_said_to_follow_the_norm_only_where_the_product_varies_much_less(
    tiny_answers, product, verdict
):
    gradient = [1.6, 0.8, 0.4, 0.2, 0.1]  # ×16 over the layers
    chart = KINDS["models-gradient"].build(
        edited_gradient(tiny_answers["llama"]["real_trace"], gradient, product), "en"
    )
    assert chart.claim["follows_norm"] == verdict and chart.claim["g_spread"] == pytest.approx(16)
    assert ("Jacobian scales as 1/‖x‖" in chart.caption) == (verdict == "follows")
    assert "Block 1 gets 8× the gradient of block 4" in chart.caption


def test_the_gradient_times_the_norm_by_hand():
    """Per layer: the mean over tokens 2…T of ‖∂L/∂x_l‖ and of ‖∂L/∂x_l‖·‖x_l‖, from the trace's own columns."""
    trace = trace_real(tiny("llama"), SENTENCE)
    grads = torch.tensor(trace["gradient"]["per_token"], dtype=torch.float64)
    norms = torch.tensor(trace["stream"]["per_token"], dtype=torch.float64)
    for layer in range(grads.shape[0]):
        by_hand = sum(float(grads[layer, t] * norms[layer, t]) for t in range(1, grads.shape[1])) / (grads.shape[1] - 1)
        assert trace["gradient"]["times_norm"][layer] == pytest.approx(by_hand, rel=1e-12)
        assert trace["gradient"]["per_token_mean"][layer] == pytest.approx(float(grads[layer, 1:].mean()), rel=1e-12)
    assert grads[:, -1].abs().max() == 0  # the last token predicts nothing in the loss
    assert "exactly 0 (grey)" in KINDS["models-grad-tokens"].build(trace, "en").caption


def test_the_set_band_is_the_median_and_the_range_over_the_sentences():
    found = band([[1.0, 4.0, None], [3.0, 2.0, 5.0], [2.0, math.nan, 6.0]])
    assert found == {"median": [2.0, 3.0, 5.5], "low": [1.0, 2.0, 5.0], "high": [3.0, 4.0, 6.0]}
    assert len(SENTENCES["en"]) >= 8 and len(SENTENCES["zh"]) >= 8


def test_the_set_answer_of_a_random_model_has_every_sentence_and_no_intervention(tiny_answers):
    the_set = tiny_answers["llama"]["real_set"]
    assert len(the_set["rows"]) == len(SENTENCES["en"]) + len(SENTENCES["zh"])
    assert the_set["intervention"] is None and the_set["intervention_absent"] == "no_massive"
    assert tiny_answers["bert"]["real_set"]["intervention_absent"] == "encoder"
    for lang in ("en", "zh"):
        rows = [r for r in the_set["rows"] if r["lang"] == lang]
        stream = the_set["bands"][lang]["stream"]
        assert stream["low"][3] == min(r["stream"][3] for r in rows)
        assert stream["high"][3] == max(r["stream"][3] for r in rows)
    caption = KINDS["models-intervention"].build(the_set, "en").caption
    assert "No coordinate of" in caption and "nothing to set" in caption


def patch_answer(mean_change: float, zero_change: float) -> dict[str, Any]:
    rows = [
        {"lang": lang, "text": "x", "loss": 3.0, "tokens": [0],
         "change": {"mean": mean_change, "zero": zero_change, "others": zero_change}}
        for lang in ("en", "zh")
    ]  # fmt: skip
    median = {"mean": mean_change, "zero": zero_change, "others": zero_change}
    found = {"block": 12, "dimension": 507, "values": {"mean": 24000.0, "zero": 0.0, "others": 60.0},
             "patches": ["mean", "zero", "others"], "rows": rows, "median": median, "median_en": median,
             "median_zh": median}  # fmt: skip
    model = {"name": "smollm2", "family": "pre_norm", "layers": 30}
    return {"model": model, "intervention": found, "intervention_absent": None, "own_intervention": None}


@pytest.mark.parametrize(("mean", "zero", "like"), [(0.03, 14.0, True), (3.0, 14.0, False), (0.0, 0.5, False)])
def test_like_sun_et_al_only_where_the_mean_changes_little_and_zero_a_lot(mean, zero, like):
    chart = KINDS["models-intervention"].build(patch_answer(mean, zero), "en")
    assert chart.claim["like_paper"] is like
    assert ("As Sun et al. 2024 found" in chart.caption) is like
    assert ("Unlike what Sun et al. 2024 found" in chart.caption) is not like
    assert chart.figure["layout"]["xaxis"]["ticktext"] == ["set to its mean", "set to 0", "set to an ordinary token's"]
    assert [t["y"] for t in chart.figure["data"][::2]] == [[mean, zero, zero]] * 2  # each set's points, per patch


# --- the packaged models ----------------------------------------------------------------------------------------


def test_smollm2_gradient_follows_the_norm_while_it_varies_over_two_decades():
    """SmolLM2 on the default sentence: the gradient per token varies ×229 from the embedding to block 30, the
    gradient times the stream's norm stays within 7.08-18.5 (×2.6): the RMSNorm's Jacobian scales as 1/‖x‖."""
    trace = trace_real(packaged_model("smollm2"), SENTENCE)
    claim = KINDS["models-gradient"].build(trace, "en").claim
    assert claim["follows_norm"] == "follows"
    assert claim["p_low"] == pytest.approx(7.08, rel=0.02) and claim["p_high"] == pytest.approx(18.5, rel=0.02)
    assert claim["g_spread"] > 100 and claim["p_spread"] < 3


def test_minilm_unknown_tokens_sit_far_below_the_text_tokens():
    """The Chinese sentence through MiniLM: most characters are [UNK], counted, and they end far below the rest."""
    trace = trace_real(packaged_model("minilm"), SENTENCES["zh"][0])
    chart = KINDS["models-tokens"].build(trace, "en")
    assert trace["unknown_tokens"] == 29 and f"29 of {len(trace['tokens'])} tokens unknown" in chart.caption
    assert chart.claim["unknown_level"] < chart.claim["text_level"] / 3


def test_gemma_blocks_are_their_own_layout_each_branch_adding_its_closing_norms_output():
    """A random Gemma 3 (four norms a block: x + N_out(F(N_in(x))) around both branches): its family is peri_ln, not
    pre-norm, and each block's change of the stream is exactly what its two closing norms output."""
    import transformers

    from app.models.real.loading import wrap_model
    from app.models.real.sources import ModelSource
    from tests.test_real_models import CharTokenizer

    torch.manual_seed(0)
    config = transformers.Gemma3TextConfig(
        vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=8,
    )  # fmt: skip
    model = transformers.Gemma3ForCausalLM(config).double()
    loaded = wrap_model(model, CharTokenizer(), ModelSource("gemma", "local", "", "", "gemma"), causal=True)
    assert loaded.family == "peri_ln"
    from app.experiments.real_trace import run_watched

    encoded = loaded.tokenizer(SENTENCE)
    record, _ = run_watched(loaded, encoded, gradients=False)
    for block in range(3):
        step = record.streams[block + 1] - record.streams[block]
        assert torch.allclose(step, record.attention[block] + record.mlp[block], atol=1e-10)
    trace = trace_real(loaded, SENTENCE)
    assert trace["model"]["family"] == "peri_ln" and trace["theory"]["growth"] is not None
