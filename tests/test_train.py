"""The training lab: it really learns, it reports divergence in strict JSON, it stops when the client leaves,
it refuses what it cannot afford, and its presets are valid requests."""

from __future__ import annotations

import math
import time

import httpx
import pytest

from app.config import TraceConfig, preset_config
from app.experiments.tasks import TASKS, make_sequences, split, task_shape
from app.experiments.train import MAX_TRAIN_MACS, TrainRequest, lr_at, train_events, training_macs
from app.experiments.train_presets import TRAIN_PRESETS, preset_request
from tests.conftest import strict_json, strict_lines

SMALL = TraceConfig(depth=2, d_model=32, n_heads=2, seq_len=8, vocab_size=8, batch=16)


@pytest.mark.parametrize("task", list(TASKS))
def test_tasks_put_the_answer_after_the_separator(task):
    import torch

    shape = task_shape(seq_len=9, vocab_size=6)
    sequences = make_sequences(TASKS[task], shape, 5, torch.Generator().manual_seed(1))
    assert sequences.shape == (5, 2 * 4 + 1) and (sequences[:, 4] == 5).all() and (sequences[:, :4] < 5).all()
    answer = {"copy": sequences[:, :4], "reverse": sequences[:, :4].flip(-1), "sort": sequences[:, :4].sort(-1).values}[
        task
    ]
    assert torch.equal(sequences[:, 5:], answer)
    inputs, targets, scored = split(sequences, shape)
    assert inputs.shape == (5, 8) and torch.equal(targets[scored].view(5, 4), answer)


def test_warmup_is_linear_then_flat():
    assert [lr_at(s, 1.0, 4) for s in (1, 2, 4, 5, 100)] == [0.25, 0.5, 1.0, 1.0, 1.0]
    assert lr_at(1, 0.3, 0) == 0.3


def test_pre_ln_learns_copy():
    """A fixed-seed Pre-LN run: the answer loss starts near ln(7) (uniform guess) and falls well below it."""
    request = TrainRequest(runs=[preset_config("pre_ln", SMALL)], task="copy", steps=80, lr=3e-3, seed=3)
    events = list(train_events(request))
    losses = [e["loss"] for e in events if e["type"] == "step"]
    done = next(e for e in events if e["type"] == "done")
    assert len(losses) == 80 and losses[0] == pytest.approx(math.log(7), rel=0.25)
    assert sum(losses[-10:]) / 10 < 0.5 * losses[0]
    assert done["diverged"] is False and done["accuracy"] > 3 / 7  # chance is 1/7
    assert done["eval_loss"] < 0.6 * math.log(7)


def test_probe_steps_carry_per_layer_norms():
    request = TrainRequest(runs=[SMALL.model_copy(update={"depth": 3})], steps=6)
    steps = [e for e in train_events(request) if e["type"] == "step"]
    probed = [e for e in steps if "layers" in e]
    assert [e["step"] for e in probed] == [1, 2, 3, 4, 5, 6]  # short runs are probed at every step
    for event in probed:
        layers = event["layers"]
        assert len(layers["act_norm"]) == len(layers["grad_norm"]) == len(layers["param_grad_norm"]) == 3
        assert all(v > 0 and math.isfinite(v) for v in layers["act_norm"] + layers["grad_norm"])
        # the global norm covers every parameter, so it is at least any block's share
        assert event["grad_norm"] >= max(layers["param_grad_norm"]) * (1 - 1e-5)


def test_runs_see_the_same_data_and_are_interleaved():
    request = TrainRequest(runs=[SMALL, SMALL], steps=3)
    steps = [(e["run"], e["step"], e["loss"]) for e in train_events(request) if e["type"] == "step"]
    assert [(r, s) for r, s, _ in steps] == [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    assert [loss for r, _, loss in steps if r == 0] == [loss for r, _, loss in steps if r == 1]


def _timeless(events):
    return [{k: v for k, v in e.items() if k != "elapsed_ms"} for e in events]


def test_runs_stepped_on_two_threads_give_the_same_events():
    """A step's runs taken by two threads at once (the server's share of a 2-core laptop): every event bit for bit
    as one thread gives, in the same order, a diverging run (lr 10) among them and per-layer probes included."""
    runs = [preset_config("post_ln", SMALL), preset_config("pre_ln", SMALL), SMALL.model_copy(update={"seed": 2})]
    request = TrainRequest(runs=runs, steps=12, lr=3e-3)
    one, two = (_timeless(train_events(request, parallel=n)) for n in (1, 2))
    assert one == two and len([e for e in one if e["type"] == "step"]) == 36
    wild = TrainRequest(runs=runs[:2], steps=40, lr=10.0, optimizer="sgd")
    one, two = (_timeless(train_events(wild, parallel=n)) for n in (1, 2))
    assert one == two and any(e.get("diverged") is True for e in one if e["type"] == "done")


def test_a_cancelled_parallel_run_stops():
    import threading

    cancel = threading.Event()
    events = []
    for event in train_events(TrainRequest(runs=[SMALL, SMALL], steps=50), cancel, parallel=2):
        events.append(event)
        if event.get("step") == 3:
            cancel.set()
    assert max(e.get("step", 0) for e in events) == 3 and events[-1]["type"] == "step"


def test_absurd_learning_rate_diverges_with_strict_json(client):
    body = {"runs": [preset_config("pre_ln", SMALL).model_dump()], "steps": 200, "lr": 10.0, "optimizer": "sgd"}
    response = client.post("/api/train", json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/x-ndjson")
    events = strict_lines(response.text)
    done = next(e for e in events if e.get("type") == "done")
    last_step = [e for e in events if e.get("type") == "step"][-1]
    assert done["diverged"] is True and last_step.get("diverged") is True
    assert last_step["step"] == done["diverged_step"] == done["steps_done"] < 200  # stopped at once
    # the blow-up is reported as null (loss or gradient norm overflowed), and named, never as a NaN token
    assert set(last_step["nonfinite_fields"]) & {"loss", "grad_norm"}
    assert all(last_step[name] is None for name in last_step["nonfinite_fields"] if "." not in name)
    assert events[-1]["type"] == "end" and events[-1]["diverged"] == [0]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"runs": []}, "runs"),
        ({"runs": [{}] * 5}, "runs"),
        ({"steps": 0}, "steps"),
        ({"steps": 100000}, "steps"),
        ({"lr": 0}, "lr"),
        ({"lr": 1e9}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"task": "translate"}, "task"),
        ({"clip": -1}, "clip"),
        ({"warmup_steps": -3}, "warmup_steps"),
        ({"runs": [{"depth": 0}]}, "runs.0.depth"),
        ({"runs": [{"vocab_size": 2}]}, "runs.0.vocab_size"),
        ({"runs": [{"arch": "mlp"}]}, "runs.0.arch"),
        ({"runs": [{}, {"norm": "weightnorm"}]}, "runs.1.norm"),
        ({"learning_rate": 0.1}, "learning_rate"),
    ],
)
def test_bad_input_gets_a_4xx_naming_the_field(client, body, field):
    response = client.post("/api/train", json=body)
    assert 400 <= response.status_code < 500
    errors = response.json()["errors"]
    assert errors[0]["field"] == field, errors


def test_steps_times_size_is_bounded(client):
    big = TraceConfig(depth=24, d_model=128, seq_len=32, batch=16)
    assert TraceConfig.model_validate(big.model_dump())  # a fine trace ...
    response = client.post("/api/train", json={"runs": [big.model_dump()] * 2, "steps": 2000})
    assert response.status_code == 422  # ... but too much to train for 2000 steps, twice
    error = response.json()["errors"][0]
    assert error["field"] == "steps" and error["allowed"]
    assert training_macs(big, 2000) * 2 > MAX_TRAIN_MACS


def test_the_budget_is_told_before_a_run_with_the_most_steps_that_fit(client):
    """POST /api/train/budget: what a page says before Start; its max_steps is the largest step count the training
    request itself accepts with these runs."""
    big = TraceConfig(depth=12, d_model=128)
    report = strict_json(client.post("/api/train/budget", json={"runs": [big.model_dump()] * 2, "steps": 2000}).text)
    per_step = 2 * training_macs(big, 1)
    assert not report["fits"] and report["times_over"] == pytest.approx(2000 * per_step / MAX_TRAIN_MACS)
    assert report["max_steps"] == math.floor(MAX_TRAIN_MACS / per_step)
    runs = [big.model_dump()] * 2
    assert client.post("/api/train/budget", json={"runs": runs, "steps": report["max_steps"]}).json()["fits"]
    TrainRequest(runs=[big] * 2, steps=report["max_steps"])  # accepted: the page's figure is the request's own limit
    with pytest.raises(ValueError, match="too large"):
        TrainRequest(runs=[big] * 2, steps=report["max_steps"] + 1)
    assert client.post("/api/train/budget", json={"runs": runs, "steps": 0}).status_code == 422  # other rules hold


def test_presets_are_affordable_bilingual_requests(client):
    body = client.get("/api/train/presets").json()
    assert [p["key"] for p in body["presets"]] == list(TRAIN_PRESETS)
    for preset in body["presets"]:
        assert preset["name"] and preset["name_zh"] and preset["caption"] and preset["caption_zh"]
        request = preset_request(preset["key"])
        assert 2 <= len(request.runs) <= 4 and all(r["label"] and r["label_zh"] for r in preset["runs"])
        TrainRequest.model_validate({"runs": [r["config"] for r in preset["runs"]], **preset["settings"]})
    assert {t["key"] for t in body["tasks"]} == set(TASKS)


# --- a real server: disconnects and the concurrency limit only exist over a real socket -----------------


def _wait_for_idle(url: str, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        active = httpx.get(f"{url}/api/train/status").json()["active"]
        if active == 0:
            return 0
        time.sleep(0.1)
    return active


def test_disconnect_stops_the_run_and_frees_the_slot(server_url):
    long_run = {"runs": [SMALL.model_dump()], "steps": 2000}
    assert _wait_for_idle(server_url) == 0
    with (
        httpx.Client(timeout=30) as http,
        http.stream("POST", f"{server_url}/api/train", json=long_run) as response,
    ):
        assert response.status_code == 200
        lines = response.iter_lines()
        first = [strict_json(next(lines)) for _ in range(4)]
        assert first[0]["type"] == "start" and first[1]["step"] == 1
        assert httpx.get(f"{server_url}/api/train/status").json()["active"] == 1
        steps_before = httpx.get(f"{server_url}/api/train/status").json()["steps"]
        if httpx.get(f"{server_url}/api/train/status").json()["max"] == 1:  # the default: one stream per process
            refused = httpx.post(f"{server_url}/api/train", json=long_run)
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
            assert "error" in refused.json()
    # the client is gone: the thread must notice within a few steps, long before 2000 steps are done
    assert _wait_for_idle(server_url) == 0
    steps = httpx.get(f"{server_url}/api/train/status").json()["steps"]
    time.sleep(0.5)
    assert httpx.get(f"{server_url}/api/train/status").json()["steps"] == steps < steps_before + 1000


@pytest.mark.parametrize("lang, title", [("en", "Does it train?"), ("zh", "能训练吗？")])
def test_train_page_renders_in_both_languages(client, lang, title):
    html = client.get(f"/train?lang={lang}").text
    assert title in html and 'data-chart="train-loss"' in html and 'data-chart="train-profile"' in html
    for key in TRAIN_PRESETS:
        assert f'data-train-preset="{key}"' in html
    name = TRAIN_PRESETS["fixes"]["name_zh" if lang == "zh" else "name"]
    assert name in html


# --- the new variants in training, and the replay of finished runs -------------------------------------


def _variant_rows() -> list[dict]:
    """Every value of every architecture axis at least once, the other axes cycling (tests/grids.py)."""
    from tests.grids import covering

    rows = []
    axes = ("norm", "block", "residual", "norm_position")
    for axis in axes:
        rows += covering((axis,), tuple(a for a in axes if a != axis))
    return rows


@pytest.mark.parametrize("row", _variant_rows(), ids=lambda row: "-".join(row.values()))
def test_every_variant_trains_and_evaluates_in_strict_json(row):
    from app.jsonsafe import strict_dumps

    cfg = SMALL.model_copy(update={**row, "norm_groups": 4})
    events = list(train_events(TrainRequest(runs=[TraceConfig(**cfg.model_dump())], steps=4, seed=1)))
    done = next(e for e in events if e["type"] == "done")
    assert done["diverged"] is False and math.isfinite(done["final_loss"]) and math.isfinite(done["eval_loss"])
    assert [e["type"] for e in events[-2:]] == ["done", "end"]
    strict_lines("\n".join(strict_dumps(e) for e in events))


@pytest.mark.parametrize("norm", ["batchnorm", "layernorm"])
def test_held_out_scoring_uses_eval_mode_for_real(norm):
    """After training, BatchNorm's eval mode (running averages) answers differently from its train mode (batch
    statistics) on the held-out set; LayerNorm has no modes. `evaluate` must leave the model training again."""
    import torch

    from app.experiments.train import evaluate, start_run, train_step

    request = TrainRequest(runs=[SMALL.model_copy(update={"norm": norm})], steps=5)
    shape = task_shape(SMALL.seq_len, SMALL.vocab_size)
    run = start_run(0, request.runs[0], shape, request)
    for step in range(1, 6):
        train_step(run, step, request, probe=False)
    evaluate(run, "copy", 0)
    assert run.model.training is True
    inputs = split(make_sequences(TASKS["copy"], shape, 32, torch.Generator().manual_seed(9)), shape)[0]
    with torch.no_grad():
        train_mode = run.model(inputs)
        run.model.eval()
        gap = (train_mode - run.model(inputs)).abs().max().item()
    assert gap > 1e-3 if norm == "batchnorm" else gap == 0.0


@pytest.mark.parametrize(
    "key, field",
    [
        ("residual", "residual"),
        ("rmsnorm", "norm"),
        ("parallel", "block"),
        ("batchnorm", "norm"),
        ("dense", "residual"),
        ("post_ln_depth", "depth"),
    ],
)
def test_each_new_comparison_changes_one_thing(key, field):
    """A fair comparison: the runs of the preset differ in the field it is about and in nothing else."""
    configs = [cfg.model_dump() for cfg in preset_request(key).runs]
    differing = {name for name in configs[0] if len({str(c[name]) for c in configs}) > 1}
    assert differing == {field}


def test_a_finished_run_is_replayed_at_once(client):
    body = {"runs": [SMALL.model_dump()], "steps": 3, "seed": 11}
    before = client.get("/api/train/status").json()
    first = strict_lines(client.post("/api/train", json=body).text)
    again = strict_lines(client.post("/api/train", json=body).text)
    status = client.get("/api/train/status").json()
    assert first[0].get("cached") is None and again[0]["cached"] is True and again[-1]["cached"] is True
    assert [e for e in again if e["type"] in ("step", "done")] == [e for e in first if e["type"] in ("step", "done")]
    assert status["replays"] == before["replays"] + 1 and status["started"] == before["started"] + 1
