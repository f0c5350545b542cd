"""This machine's memory as the budget of a call in the caller's own process (app/config/machine.py): what the server
refuses to train runs here, budget="server" refuses it with the server's own words, and a request over half of the
machine's memory is refused before anything is built."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import app as rx
from app.config import TraceConfig, parameter_count
from app.config import machine as limits
from app.experiments import train as train_module
from app.notebook import training
from app.notebook.fields import TraceFields

loose: Any = rx  # called as a careless caller would, past the type checker

# One block, but the logits of 32 × 256 tokens over 4096 symbols: saved activations over the server's per-model
# budget, yet two steps train in about a second
WIDE_VOCABULARY: TraceFields = {"depth": 1, "d_model": 8, "n_heads": 1, "seq_len": 256, "batch": 32, "vocab_size": 4096}
SMALL: TraceFields = {"depth": 2, "seq_len": 16, "vocab_size": 16}


def server_error(client, body: dict[str, Any]) -> str:
    """What POST /api/train answers for a request it refuses: the message of its first error."""
    answer = client.post("/api/train", json=body)
    assert answer.status_code == 422, answer.text
    return answer.json()["errors"][0]["message"]


def steps_of(result: rx.Training) -> list[int]:
    return [e["step"] for e in result.events if e.get("type") == "step"]


def test_a_model_the_server_refuses_to_train_trains_here(client):
    message = server_error(client, {"runs": [WIDE_VOCABULARY], "steps": 2})
    assert "too large for this server" in message
    with pytest.raises(ValidationError) as caught:
        rx.train(None, runs=[WIDE_VOCABULARY], steps=2, live=False, budget="server")
    assert message in str(caught.value)
    ours = rx.train(None, runs=[WIDE_VOCABULARY], steps=2, live=False)
    assert steps_of(ours) == [1, 2] and not ours.interrupted
    assert ours.events[-1]["type"] == "end" and ours.runs[0]["done"]["steps_done"] == 2


def test_a_request_over_the_servers_training_budget_trains_here(client, monkeypatch):
    """The training budget (multiply-adds of all runs and steps) set just below three steps of a small model: the
    server and budget="server" refuse it in the same words, the caller's own process trains it."""
    cost = train_module.training_macs(TraceConfig(**SMALL), 3)
    monkeypatch.setattr(train_module, "MAX_TRAIN_MACS", cost - 1)
    body: dict[str, Any] = {"runs": [SMALL], "steps": 3}
    message = server_error(client, body)
    assert message.startswith("this request is too large for this server"), message
    with pytest.raises(ValidationError) as caught:
        rx.train(None, **body, live=False, budget="server")
    assert message in str(caught.value)
    assert steps_of(rx.train(None, **body, live=False)) == [1, 2, 3]
    assert steps_of(rx.train(None, **body, live=False, budget=None)) == [1, 2, 3]
    monkeypatch.setattr(train_module, "MAX_TRAIN_MACS", cost)  # at the limit the server's budget passes it
    assert steps_of(rx.train(None, **body, live=False, budget="server")) == [1, 2, 3]


def test_training_over_half_of_this_machines_memory_is_refused_before_building(monkeypatch):
    monkeypatch.setattr(training, "train_events", lambda *args: pytest.fail("trained a request over the budget"))
    runs: list[TraceFields] = [SMALL, {**SMALL, "depth": 3}]
    need = limits.training_bytes([TraceConfig(**run) for run in runs], "adam")
    monkeypatch.setattr(limits, "physical_memory", lambda: int(2 * need) - 1)
    with pytest.raises(limits.TooLargeForMachine, match="budget=None") as caught:
        rx.train(None, runs=runs, steps=3, live=False)
    words = str(caught.value)
    assert words.startswith("runs: these 2 runs, trained side by side, need about") and "train fewer runs" in words
    assert float(words.split("about ")[1].split(" GB")[0]) == pytest.approx(need / 1e9, rel=1e-2)
    # the optimizer's state counts: SGD keeps one float per parameter, Adam two
    sgd = limits.training_bytes([TraceConfig(**run) for run in runs], "sgd")
    parameters = sum(parameter_count(TraceConfig(**run)) for run in runs)
    assert need - sgd == pytest.approx(4 * parameters)
    monkeypatch.setattr(training, "train_events", lambda *args: iter([]))
    assert rx.train(None, runs=runs, steps=3, live=False, budget=None).events == []
    monkeypatch.setattr(limits, "physical_memory", lambda: int(2 * need) + 1)
    assert rx.train(None, runs=runs, steps=3, live=False).events == []


@pytest.mark.parametrize(
    "call",
    [
        lambda: loose.trace(budget="servr"),
        lambda: loose.sweep(1, 2, budget="Server"),
        lambda: loose.train(None, runs=[SMALL], steps=1, budget="none"),
    ],
)
def test_a_mistyped_budget_is_refused_not_read_as_no_limit(call):
    with pytest.raises(ValueError, match="budget: one of 'machine', 'server', None"):
        call()
