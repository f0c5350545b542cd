"""/train's charts built in Python (app/figures/train.py, train_profile.py) and streamed while the runs train
(app/figures/train_stream.py): the stream's patches rebuild the very chart the events make, the words follow the
numbers (a run's end, a divergence, trained or replayed), the uniform guess sits under the curves, and the notebook's
figure is the page's."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import plotly.graph_objects as go
import pytest

import app as rx
from app.experiments.train_answer import TrainCharts, answer_of
from app.figures import build
from app.figures.chart import apply_patch
from app.figures.style import GREY
from app.figures.train_stream import assign, extend, stream_messages
from app.jsonsafe import strict_json
from app.notebook.fields import TraceFields
from tests.conftest import strict_lines
from tests.test_figures_norms import plain

TINY: TraceFields = {"depth": 2, "d_model": 16, "n_heads": 2, "seq_len": 8, "vocab_size": 8, "batch": 4}
REQUEST = TrainCharts(runs=[TINY, {**TINY, "norm_position": "post"}], steps=6, kinds=["pre_ln", "post_ln"])


def profile(step: int, scale: float) -> dict:
    return {"act_norm": [4.0 * scale, 5.0 * scale], "grad_norm": [0.2 * scale, 0.1], "param_grad_norm": [0.3, 0.4],
            "embedding_act_norm": 3.0, "embedding_grad_norm": 0.25 * scale}  # fmt: skip


def events(diverge_at: int | None = None, cached: bool = False) -> list[dict]:
    """What POST /api/train streams for REQUEST (made up, without training): run 1 diverges at `diverge_at`."""
    out: list[dict] = [{"type": "start", "steps": 6, **({"cached": True} if cached else {})}]
    for step in range(1, 7):
        for run in (0, 1):
            if run == 1 and diverge_at is not None and step > diverge_at:
                continue
            bad = run == 1 and step == diverge_at
            event: dict = {"type": "step", "run": run, "step": step, "grad_norm": 1.0, "lr": 1e-3,
                           "loss": math.inf if bad else 2.0 - 0.1 * step - run}  # fmt: skip
            if step % 3 == 0 or step == 1:
                event["layers"] = profile(step, 1 + run)
            out.append(event)
            if bad:
                out.append({"type": "done", "run": 1, "diverged": True, "diverged_step": step, "final_loss": math.inf,
                            "eval_loss": None, "accuracy": None, "sequence_accuracy": None})  # fmt: skip
    for run in (0, 1) if diverge_at is None else (0,):
        out.append({"type": "done", "run": run, "diverged": False, "diverged_step": None, "final_loss": 1.4 - run,
                    "eval_loss": 1.5, "accuracy": 0.5 + 0.25 * run, "sequence_accuracy": 0.125})  # fmt: skip
    return [*out, {"type": "end", "elapsed_ms": 2500.0, **({"cached": True} if cached else {})}]


def json_of(value: object) -> Any:
    """As the page reads it, less strict JSON's own note of which values were inf/NaN (each message carries its own)."""
    out = json.loads(strict_json(value))
    for item in out if isinstance(out, list) else [out]:
        for key in ("nonfinite_count", "nonfinite_fields"):
            item.pop(key, None)
    return out


def replayed(messages: list[dict], key: str) -> dict:
    """The chart `key` as a page holds it after these messages: its whole chart, patched by every message since."""
    chart: dict = {}
    for message in json_of(messages):
        if message["chart"] != key:
            continue
        if message["type"] == "chart":
            chart = {k: v for k, v in message.items() if k != "type"}
        else:
            (extend if message["type"] == "extend" else assign)(chart, message)
    return chart


def changed(messages: list[dict], key: str) -> list[dict]:
    """Each `set` message of chart `key`: its values by path."""
    return [
        {tuple(path): value for path, value in m["set"]} for m in messages if m["type"] == "set" and m["chart"] == key
    ]


@pytest.mark.parametrize("diverge_at", [None, 4])
def test_the_stream_rebuilds_the_chart_of_every_prefix_of_events(diverge_at):
    """After any event, the last whole loss chart extended by the patches since is the chart built from the events so
    far, to the key; so the page never needs the chart rebuilt while it trains."""
    made = events(diverge_at)
    for cut in range(1, len(made) + 1):
        expected = json_of(build("train-loss", answer_of(REQUEST, made[:cut]), "en").to_json())
        assert replayed(list(stream_messages(REQUEST, made[:cut])), "train-loss") == expected, made[cut - 1]
    final = json_of(build("train-profile", answer_of(REQUEST, made), "zh").to_json())
    assert replayed(list(stream_messages(REQUEST, made, "zh")), "train-profile") == final


def test_a_patch_is_one_step_and_the_rest_comes_as_the_values_that_changed():
    messages = list(stream_messages(REQUEST, events(diverge_at=4)))
    assert [m["chart"] for m in messages if m["type"] == "chart"] == ["train-loss", "train-profile"]  # once each
    steps = [m for m in messages if m["type"] == "extend"]
    assert len(steps) == 6 + 4 and all(len(p["rows"]) == 1 and len(p["x"][0]) == 1 for p in steps)
    loss = changed(messages, "train-loss")
    assert len(loss) == 2  # the divergence, the end: nothing else changes the loss chart's words
    assert loss[0][("claim", "runs", 1)]["diverged_step"] == 4 and "diverged at step 4" in loss[0][("caption",)]
    assert ("rows",) not in loss[1] and ("figure", "data") not in loss[1]  # the page holds them already
    title = ("figure", "layout", "title", "text")
    # every snapshot both runs reached (1, 3; at 6 only run 0 still trains); the end changes no title
    first, *later = changed(messages, "train-profile")  # the first snapshot replaces the empty chart's layout
    assert first[("figure", "layout")]["title"]["text"] == "Per layer at step 1"
    assert [c.get(title) for c in later] == ["Per layer at step 3", "Per layer at step 6"]


def test_a_replayed_run_sends_no_patches_and_says_it_was_replayed():
    messages = list(stream_messages(REQUEST, events(cached=True)))
    assert [m["type"] for m in messages] == ["chart", "chart", "set", "set"]
    chart = replayed(messages, "train-loss")
    assert chart == json_of(build("train-loss", answer_of(REQUEST, events(cached=True)), "en").to_json())
    assert "Replayed at once: this server had trained these runs before (6 steps in 2.5 s)." in chart["caption"]
    trained = build("train-loss", answer_of(REQUEST, events()), "en").caption
    assert "Trained here for 6 steps in 2.5 s." in trained and "Replayed" not in trained


def test_the_words_are_the_runs_own_numbers_and_only_once_they_are_known():
    made = events(diverge_at=4)
    running = build("train-loss", answer_of(REQUEST, made[:-3]), "en")
    assert "final loss" not in running.caption and "diverged at step 4" in running.caption
    assert "Trained here" not in running.caption and not running.claim["ended"]
    done = build("train-loss", answer_of(REQUEST, made), "zh")
    guess = math.log(7)
    assert done.claim["uniform_guess"] == guess and done.claim["runs"][0]["final_loss"] == 1.4
    assert "1. GPT-2（Pre-LN）：最终损失 1.4（均匀猜测为 1.95），留出集上逐词元准确率 50%" in done.caption
    assert "2. 原始 Transformer（Post-LN）：在第 4 步发散" in done.caption and "最终损失 ∞" not in done.caption
    mark = done.figure["data"][-1]  # where run 2 diverged: its last finite loss
    assert mark["x"] == [4] and mark["y"] == [2.0 - 0.3 - 1] and mark["marker"]["symbol"] == "x"


def test_the_uniform_guess_is_a_thin_grey_line_under_the_curves_named_in_the_legend():
    chart = build("train-loss", answer_of(REQUEST, events()), "en")
    guess, first, second = chart.figure["data"]
    assert guess["name"] == "uniform guess: ln 7 = 1.95" and guess["y"] == [math.log(7)] * 2 and guess["x"] == [0, 6]
    assert guess["line"]["color"] == GREY and guess["line"]["width"] < first["line"]["width"] / 2
    assert guess["hoverinfo"] == "skip" and "annotations" not in chart.figure["layout"]  # no label on the data
    assert first["name"] == "1. GPT-2 (Pre-LN)" and second["y"] == [2.0 - 0.1 * s - 1 for s in range(1, 7)]
    linear = apply_patch(copy.deepcopy(chart.figure), chart.patches["linear"])
    assert chart.figure["layout"]["yaxis"]["type"] == "log" and linear["layout"]["yaxis"]["type"] == "linear"
    assert [r["step"] for r in chart.rows[:4]] == [1, 1, 2, 2] and chart.rows[0]["kind"] == "pre_ln"
    go.Figure(chart.figure)  # valid Plotly


def test_before_any_event_the_charts_are_empty_and_say_what_to_do():
    for key in ("train-loss", "train-profile"):
        chart = build(key, answer_of(REQUEST, []), "en")
        assert chart.figure["data"] == [] and chart.rows == []
        assert "Not trained yet" in chart.figure["layout"]["annotations"][0]["text"]
        assert chart.figure["layout"]["yaxis"]["showticklabels"] is False


def test_the_per_layer_views_show_one_quantity_and_never_replace_a_column():
    chart = build("train-profile", answer_of(REQUEST, events()), "en")
    fig = chart.figure
    assert [t["visible"] for t in fig["data"]] == [True, True, False, False, False, False]
    assert fig["data"][0]["y"] == [0.25, 0.2, 0.1] and fig["data"][0]["x"] == [0, 1, 2]
    weights = apply_patch(copy.deepcopy(fig), chart.patches["param_grad_norm"])
    shown = [t for t in weights["data"] if t["visible"]]
    assert [t["y"] for t in shown] == [[0.3, 0.4]] * 2 and [t["x"] for t in shown] == [[1, 2]] * 2
    assert weights["layout"]["yaxis"]["title"]["text"] == "Weight gradient of block l"
    assert chart.claim["runs"][1]["survival"] == pytest.approx(4.0) and chart.claim["runs"][1]["verdict"] == "kept"
    assert "2. Original Transformer (Post-LN), step 6: layer 1 gets 4 × the last layer's gradient" in chart.caption


def test_a_chart_request_that_names_the_wrong_runs_is_refused_by_field(client):
    body = {"runs": [TINY], "steps": 2, "kinds": ["pre_ln", "post_ln"]}
    answer = client.post("/api/figure/train-loss", json=body).json()
    assert answer["errors"][0]["field"] == "kinds" and "one kind per run" in answer["errors"][0]["allowed"]
    over = client.post("/api/train/charts", json={"runs": [{"depth": 12}] * 4, "steps": 2000})
    assert over.status_code == 422 and over.json()["errors"][0]["field"] == "steps"  # refused: nothing streamed


def test_the_page_the_figure_endpoint_and_the_notebook_show_one_chart(client):
    """The stream's final charts are POST /api/figure/<chart>'s once the server recorded the run, and
    rx.train(...).figure() is that figure, to the key."""
    runs: list[TraceFields] = [TINY, {**TINY, "norm_position": "post"}]
    body = {"runs": runs, "steps": 3}
    before = client.post("/api/figure/train-loss?lang=zh", json=body)
    assert before.headers["X-Resnorm-Cache"] == "pending" and before.json()["figure"]["data"] == []
    streamed = strict_lines(client.post("/api/train/charts?lang=zh", json=body).text)
    notebook = rx.train(None, runs=runs, steps=3, live=False, lang="zh")
    for key, name in (("train-loss", "train-loss"), ("train-profile", "train-profile")):
        page = client.post(f"/api/figure/{key}?lang=zh", json=body).json()
        assert replayed(streamed, key) == page
        assert plain(notebook.figure(chart=name)) == page["figure"]
        assert plain(notebook.figure(chart=name, theme="slide")) == apply_patch(
            page["figure"], page["patches"]["slide"]
        )
