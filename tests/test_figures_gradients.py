"""/gradients' profile, built in Python (app/figures/gradients.py): verdicts stated only where every seed of the band
gives them, on synthetic answers and on the real API."""

from __future__ import annotations

import copy
import math
from typing import Any

import plotly.graph_objects as go
import pytest

from app.config import TraceConfig
from app.experiments.grad_profile import BAND, GradProfile, counterpart, seeds_of
from app.figures import apply_patch, build
from app.figures.gradients import survival, verdict
from app.numbers import fmt

from .grids import all_pairs, case_id


def fake_trace(grads: list[float | None], residual: str = "identity", seed: int = 0) -> dict[str, Any]:
    """A trace answer with these per-layer gradients (layer 1 first), the embedding's equal to layer 1's."""
    depth = len(grads)
    return {
        "config": {**TraceConfig(depth=depth, seed=seed).model_dump(), "residual": residual},
        "embedding": {"grad_norm": grads[0], "act_norm": 1.0},
        "layers": [{"layer": k + 1, "grad_norm": g, "act_norm": 1.0} for k, g in enumerate(grads)],
    }


def answer(with_grads: list[list[float | None]], without_grads: list[list[float | None]]) -> dict[str, Any]:
    depth = len(with_grads[0])
    return {
        "config": TraceConfig(depth=depth).model_dump(),
        "seeds": list(range(len(with_grads))),
        "with": [fake_trace(g, "identity", s) for s, g in enumerate(with_grads)],
        "without": [fake_trace(g, "none", s) for s, g in enumerate(without_grads)],
    }


def geometric(first_over_last: float, depth: int = 8) -> list[float | None]:
    """Gradients from layer 1 to the last with layer 1 / last = first_over_last."""
    return [first_over_last ** (1 - k / (depth - 1)) for k in range(depth)]


@pytest.mark.parametrize(
    ("ratio", "word"),
    [(None, "overflowed"), (0.0, "underflowed"), (1e4, "exploded"), (50.0, "grew"), (0.01, "faded"), (2.0, "kept"),
     (0.1, "kept"), (10.0, "kept")],
)  # fmt: skip
def test_the_verdict_is_a_function_of_the_ratio(ratio, word):
    assert verdict(ratio) == word


def test_a_verdict_every_seed_gives_is_stated_with_the_range():
    chart = build(
        "gradients", answer([geometric(2.0)] * 2 + [geometric(3.0)] * 2, [geometric(1e-3), geometric(1e-2)] * 2)
    )
    assert chart.claim["with"]["verdict"] == "kept" and chart.claim["without"]["verdict"] == "faded"
    assert "2–3 × the last layer's gradient on seeds 0–3: kept" in chart.caption
    assert "0.001–0.01 on seeds 0–3: faded on every seed" in chart.caption
    assert "so the product fades with depth" in chart.caption and not chart.claim["pending"]


def test_seeds_that_disagree_get_no_verdict_and_no_explanation():
    """The reference model without the shortcut: 0.0149 on seed 0, kept on 1-3 (issue 24): no 'fades' sentence."""
    chart = build(
        "gradients",
        answer([geometric(5.0)] * 4, [geometric(0.0149), geometric(1.15), geometric(6.24), geometric(0.296)]),
    )
    assert chart.claim["without"]["verdict"] is None
    assert chart.claim["without"]["verdicts"] == ["faded", "kept", "kept", "kept"]
    text = chart.caption
    assert "depends on the seed: 0.0149, 1.15, 6.24, 0.296 on seeds 0, 1, 2, 3" in text
    assert "faded on seed 0; kept (within ×10 of 1) on seeds 1–3" in text and "no verdict holds" in text
    assert "fades with depth" not in text and "stays within ×10" not in text  # no explanation of a split verdict
    zh = build(
        "gradients",
        answer([geometric(5.0)] * 4, [geometric(0.0149), geometric(1.15), geometric(6.24), geometric(0.296)]),
        "zh",
    )
    assert "取决于种子" in zh.caption and "种子 0：衰减" in zh.caption


def test_one_seed_is_pending_until_the_band_is_in():
    chart = build("gradients", answer([geometric(2.0)], [geometric(1e-3)]))
    assert chart.claim["pending"] and chart.claim["band"] == BAND
    assert chart.caption.endswith("Seed 0; seeds 1–3 pending.") and "faded" in chart.caption


def test_overflow_and_underflow_are_named_not_computed_with():
    overflow = [None, *geometric(2.0)[1:]]
    chart = build("gradients", answer([overflow] * 4, [[0.0, *geometric(1e-3)[1:]]] * 4))
    assert chart.claim["with"]["verdicts"] == ["overflowed"] * 4 and chart.claim["without"]["verdict"] == "underflowed"
    assert "inf/NaN (overflow)" in chart.caption and "rounded to exactly 0" in chart.caption
    notes = [a["text"].replace("<br>", " ") for a in chart.figure["layout"]["annotations"]]  # long labels: 2 lines
    assert notes == ["✕ With residual (identity shortcut): overflow (inf/NaN): layers 0–1"]  # where it is missing


def test_one_block_has_no_trip_back():
    chart = build("gradients", answer([[1.0]] * 4, [[1.0]] * 4))
    assert chart.caption.startswith("With one block there is no trip back")


def test_the_figure_draws_the_chosen_seed_bold_and_the_band_thin():
    chart = build("gradients", answer([geometric(2.0), geometric(3.0)], [geometric(0.1), geometric(0.2)]))
    data = chart.figure["data"]
    assert [t["showlegend"] for t in data[2:]] == [True, False]  # one legend entry for the band
    assert data[2]["line"]["width"] < data[0]["line"]["width"] and data[2]["name"] == "Seeds 1 (thin)"
    go.Figure(chart.figure)  # valid Plotly
    slide = apply_patch(copy.deepcopy(chart.figure), chart.patches["slide"])
    assert slide["layout"]["font"]["size"] > chart.figure["layout"]["font"]["size"]
    assert apply_patch(copy.deepcopy(chart.figure), chart.patches["linear"])["layout"]["yaxis"]["type"] == "linear"


def test_the_endpoint_states_what_the_trace_api_measures(client):
    """Seed 0 at once, then seeds 0-3; every ratio the caption gives is layer 1 ÷ the last layer of /api/trace."""
    cfg = TraceConfig(depth=12, norm="none")
    first = client.post("/api/figure/gradients?lang=en", json={"config": cfg.model_dump(), "seeds": 1}).json()
    band = client.post("/api/figure/gradients?lang=en", json={"config": cfg.model_dump(), "seeds": BAND}).json()
    assert first["claim"]["pending"] and not band["claim"]["pending"]
    assert band["claim"]["seeds"] == seeds_of(cfg, BAND) == [0, 1, 2, 3]
    for k, seed in enumerate(band["claim"]["seeds"]):
        model = cfg.model_copy(update={"seed": seed})
        for side, config in (("with", model), ("without", counterpart(model))):
            trace = client.post("/api/trace", json=config.model_dump()).json()
            assert band["claim"][side]["ratios"][k] == pytest.approx(survival(trace), rel=1e-12)
    plain = band["claim"]["without"]["ratios"]
    assert f"{fmt(min(plain))}–{fmt(max(plain))} on seeds 0–3: faded on every seed" in band["caption"]
    assert first["figure"]["data"][:2] == band["figure"]["data"][:2]  # seed 0 drawn the same before and after
    assert {row["seed"] for row in band["rows"]} == {0, 1, 2, 3} and len(band["rows"]) == 4 * 2 * 13
    zh = client.post("/api/figure/gradients?lang=zh", json={"config": cfg.model_dump(), "seeds": BAND}).json()
    assert "每个种子都衰减" in zh["caption"]


def test_the_endpoint_refuses_bad_requests_by_name(client):
    bad = client.post("/api/figure/gradients", json={"seeds": 9}).json()
    assert bad["errors"][0]["field"] == "seeds"
    bad = client.post("/api/figure/gradients", json={"config": {"depth": 0}}).json()
    assert bad["errors"][0]["field"] == "config.depth"
    assert client.post("/api/figure/gradients", json={"colour": 1}).status_code == 422


def test_a_seed_at_the_top_of_the_range_counts_down():
    assert seeds_of(TraceConfig(seed=2**31 - 2), BAND) == [2**31 - 2, 2**31 - 1, 2**31 - 3, 2**31 - 4]
    assert GradProfile().seeds == 1


COVERING_AXES = ("norm", "norm_position", "residual", "activation", "dtype")
SMALL = {"d_model": 16, "n_heads": 2, "seq_len": 8, "batch": 2, "depth": 12}


@pytest.mark.parametrize("setting", all_pairs(COVERING_AXES), ids=case_id)
def test_the_profile_states_a_verdict_only_where_every_seed_gives_it(setting):
    """Over the covering array of the architecture (every pair of values in one of ~40 settings), seeds 0-3: the
    ratio the caption names for each side is layer 1 ÷ the last layer of that seed's trace, worked out here, and a
    verdict word appears as 'on every seed' only when all four give it."""
    from app.experiments.requests import answer_in_process

    request = GradProfile(config=TraceConfig(**SMALL, **setting), seeds=BAND)
    answer = answer_in_process("grad_profile", request)
    chart = build("gradients", answer, "en")
    for side in ("with", "without"):
        ratios = []
        for trace in answer[side]:
            g = [layer["grad_norm"] for layer in trace["layers"]]
            ok = all(v is not None and math.isfinite(v) for v in (g[0], g[-1])) and g[-1] != 0
            ratios.append(g[0] / g[-1] if ok else None)
        words = {verdict(r) for r in ratios}
        stated = chart.claim[side]["verdict"]
        assert (stated is not None) == (len(words) == 1), (side, ratios, chart.caption)
        if stated is None:
            assert "no verdict holds" in chart.caption, chart.caption
        else:
            assert stated == words.pop()


def test_the_heatmap_row_counts_only_blocks_with_a_finite_gradient():
    """The model's heatmap row says how many blocks get under a tenth of the last block's gradient: a block that
    overflowed is counted in neither the faint blocks nor the blocks (the issue's 'counts layers over NaNs')."""
    grads = [0.001, None, 0.05, 0.5, 1.0]
    chart = build("gradients", answer([grads] * 4, [geometric(0.5, 5)] * 4))
    assert chart.claim["with"]["faint"] == [2] * 4 and chart.claim["with"]["finite_blocks"] == [4] * 4


@pytest.mark.parametrize(("seeds", "lang"), [(1, "zh"), (BAND, "en")])
def test_the_notebook_gradient_figure_is_the_pages_json(client, seeds, lang):
    """rx.trace(...).figure(kind="gradients") is the profile POST /api/figure/gradients hands the page, to the key."""
    import app as rx
    from tests.test_figures_norms import plain

    fields = {"depth": 6, "d_model": 16, "n_heads": 2, "seq_len": 8, "batch": 2}
    page = client.post(f"/api/figure/gradients?lang={lang}", json={"config": fields, "seeds": seeds}).json()
    trace = rx.trace(**fields)  # type: ignore[arg-type]
    assert plain(trace.figure(kind="gradients", lang=lang, seeds=seeds)) == page["figure"]
    slide = trace.figure(kind="gradients", lang=lang, seeds=seeds, theme="slide", log=False)
    assert plain(slide) == apply_patch(apply_patch(page["figure"], page["patches"]["slide"]), page["patches"]["linear"])
