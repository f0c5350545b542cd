"""Every entry point computes under the server's torch settings (app/experiments/isolation.py): whatever a notebook
set before the call (two threads, no_grad, inference_mode, a float64 default, autocast, anomaly mode, deterministic
algorithms, a seeded RNG), rx.trace / compare / sweep / train and `trace --json` give POST /api/trace's numbers bit
for bit, rx.lesson the /precision page's numbers and rx.build the module built under plain settings, and every one
of those settings is as the caller left it afterwards.

rx.real_trace on a model in memory (a tiny GPT-2) gives, under each of those settings, its answer under the suite's
plain ones (its equality with POST /api/real_trace for a packaged model: tests/test_real_models.py).

tests/conftest.py pins one thread for the suite: the caller's settings here set other values themselves.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
import torch

import app as rx
from app.cli import main
from app.experiments.isolation import as_server
from app.experiments.sweep import depth_row
from app.jsonsafe import strict_dumps
from tests.conftest import strict_json, strict_lines

TIMING = ("elapsed_ms", "served_ms", "cached", "source")


def without_timing(answer: dict) -> dict:
    return {**answer, "summary": {k: v for k, v in answer["summary"].items() if k not in TIMING}}


def untimed_events(events: list[dict]) -> list[dict]:
    return [{k: v for k, v in event.items() if k != "elapsed_ms"} for event in events]


@contextmanager
def setting(get: Callable[[], Any], put: Callable[[Any], Any], value: Any) -> Iterator[None]:
    before = get()
    put(value)
    try:
        yield
    finally:
        put(before)


def threads(count: int) -> Any:
    return setting(torch.get_num_threads, torch.set_num_threads, count)


def default_dtype(dtype: torch.dtype) -> Any:
    return setting(torch.get_default_dtype, torch.set_default_dtype, dtype)


@contextmanager
def deterministic_warn_only() -> Iterator[None]:
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(False)


@contextmanager
def environment(name: str, value: str) -> Iterator[None]:
    os.environ[name] = value
    try:
        yield
    finally:
        del os.environ[name]


@contextmanager
def everything() -> Iterator[None]:
    """A notebook that set everything at once, and seeded its own RNG."""
    with ExitStack() as stack:
        for context in (
            threads(2),
            default_dtype(torch.float64),
            torch.inference_mode(),
            torch.autocast("cpu", dtype=torch.bfloat16),
            torch.autograd.set_detect_anomaly(True),
            deterministic_warn_only(),
            environment("RESNORM_TEST_CALLER", "mine"),
        ):
            stack.enter_context(context)
        torch.manual_seed(1234)
        yield


@contextmanager
def gc_paused() -> Iterator[None]:
    """A caller that paused the garbage collector itself: a call must not turn it back on."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


CALLERS: dict[str, Callable[[], Any]] = {
    "two threads": lambda: threads(2),
    "no_grad": torch.no_grad,
    "set_grad_enabled(False)": lambda: torch.set_grad_enabled(False),
    "inference_mode": torch.inference_mode,
    "float64 default": lambda: default_dtype(torch.float64),
    "gc paused": gc_paused,
    "everything": everything,
}


def settings() -> dict[str, Any]:
    """Every setting a call must give back, as the caller sees it."""
    return {
        "threads": torch.get_num_threads(),
        "interop": torch.get_num_interop_threads(),
        "dtype": torch.get_default_dtype(),
        "device": torch.get_default_device(),
        "grad": torch.is_grad_enabled(),
        "inference": torch.is_inference_mode_enabled(),
        "autocast": (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")),
        "deterministic": (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        "anomaly": (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "rng": torch.get_rng_state().tolist(),
        "environ": dict(os.environ),
        "gc": gc.isenabled(),
    }


TRACE: dict[str, Any] = {"depth": 3, "norm_position": "post"}
TRAIN: dict[str, Any] = {"runs": [{"depth": 2, "seq_len": 16, "vocab_size": 16}], "steps": 3}
LESSON: dict[str, Any] = {"big": 10000, "small": 0.001, "depth": 6}  # /precision: a forward and backward pass


@pytest.fixture(scope="module")
def server(client) -> dict[str, Any]:
    """The server's answers (its compute processes and training thread), once. The client fixture has waited for
    the server's optimizer warm-up (tests/conftest.py settled)."""
    traces = {
        (depth, position): without_timing(
            client.post("/api/trace", json={**TRACE, "depth": depth, "norm_position": position}).json()
        )
        for depth in (1, 2, 3)
        for position in ("post", "pre")
    }
    train = strict_lines(client.post("/api/train", json=TRAIN).text)
    lesson = client.post("/api/figure/precision-overflow", json=LESSON).json()
    model = {name: tensor.clone() for name, tensor in rx.build(**TRACE).state_dict().items()}  # plain settings
    return {"trace": traces, "train": untimed_events(train), "lesson": lesson, "build": model}


@pytest.fixture(scope="module")
def own_model() -> tuple[Any, list[int], dict[str, Any]]:
    """A researcher's own model (a tiny random GPT-2, built offline in milliseconds), its token ids, and
    rx.real_trace's answer for them under the suite's plain settings (one thread, nothing else set)."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2, n_embd=32, n_head=4, vocab_size=64, n_positions=32, bos_token_id=0, eos_token_id=0
    )
    model = transformers.GPT2LMHeadModel(config)
    ids = list(range(3, 15))
    return model, ids, dict(rx.real_trace(model, ids))


def run_cli(capsys) -> dict:
    with pytest.raises(SystemExit) as exit_info:
        main(["trace", "--depth", "3", "--norm-position", "post", "--json"], prog="resnorm-explorer")
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, err
    return without_timing(strict_json(out))


def test_the_caller_settings_are_really_different():
    with everything():
        assert torch.get_num_threads() == 2 and torch.get_default_dtype() == torch.float64
        assert not torch.is_grad_enabled() and torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("caller", list(CALLERS))
@pytest.mark.parametrize("api", ["trace", "compare", "sweep", "train", "cli", "lesson", "build"])
def test_same_numbers_and_settings_given_back(api, caller, server, capsys):
    with CALLERS[caller]():
        before = settings()
        if api == "lesson":  # the /precision page's numbers and sentence
            lesson = rx.lesson("precision-overflow", **LESSON)
            rows = json.loads(strict_dumps(lesson.rows))
            assert rows == server["lesson"]["rows"] and lesson.caption == server["lesson"]["caption"]
        elif api == "build":  # the traced module: float32, not inference tensors, the same weights as built plainly
            model = rx.build(**TRACE).state_dict()
            assert model.keys() == server["build"].keys()
            assert all(torch.equal(model[name], server["build"][name]) for name in model)
            assert all(t.dtype == torch.float32 and not t.is_inference() for t in model.values())
        elif api == "trace":
            assert without_timing(rx.trace(**TRACE).result) == server["trace"][(3, "post")]
        elif api == "compare":
            pair = rx.compare(depth=3, norm_position=["post", "pre"])
            assert [without_timing(t.result) for t in pair.traces] == [server["trace"][(3, p)] for p in ("post", "pre")]
        elif api == "sweep":
            rows = rx.sweep(1, 3, norm_position="post", progress=False).rows
            assert rows == [depth_row(server["trace"][(depth, "post")]) for depth in (1, 2, 3)]
        elif api == "train":
            assert untimed_events(rx.train(None, live=False, **TRAIN).events) == server["train"]
        else:
            assert run_cli(capsys) == server["trace"][(3, "post")]
        after = settings()
    assert after == before


def test_an_error_inside_gives_the_settings_back_too():
    with everything():
        before = settings()
        with pytest.raises(RuntimeError, match="inside"), as_server():
            assert not gc.isenabled()  # paused for the call, as in a compute process
            assert torch.is_grad_enabled() and torch.get_num_threads() == 1
            assert torch.get_default_dtype() == torch.float32 and not torch.is_autocast_enabled("cpu")
            os.environ["HF_HUB_OFFLINE"] = "1"  # what loading a pretrained model sets
            torch.rand(3)  # draws from the caller's RNG
            raise RuntimeError("inside")
        assert settings() == before and "HF_HUB_OFFLINE" not in os.environ


def test_more_threads_agree_within_1e_6_relative():
    one, two = rx.trace(depth=12), rx.trace(depth=12, threads=2)
    for ours, theirs in zip(one.layers, two.layers, strict=True):
        for key in ("act_norm", "grad_norm"):
            assert ours[key] == pytest.approx(theirs[key], rel=1e-6, abs=0)


def test_threads_must_be_a_whole_number():
    with pytest.raises(ValueError, match="threads: a whole number of at least 1"):
        rx.trace(depth=2, threads=0)


def test_the_cli_reads_resnorm_torch_threads(monkeypatch, capsys):
    from app.cli import commands

    seen: list[int] = []

    def counted(cfg):
        seen.append(torch.get_num_threads())
        return _stub(cfg)

    monkeypatch.setattr(commands, "_run_trace", counted)
    for env, option, expected in (("", [], 1), ("2", [], 2), ("2", ["--threads", "3"], 3)):
        monkeypatch.setenv("RESNORM_TORCH_THREADS", env)
        with pytest.raises(SystemExit):
            main(["trace", "--depth", "2", "--json", *option])
        capsys.readouterr()
        assert seen[-1] == expected
    assert seen == [1, 2, 3]


def _stub(cfg) -> dict:
    from app.experiments.trace import run_trace

    return run_trace(cfg)


@pytest.mark.parametrize("caller", list(CALLERS))
def test_a_researchers_own_model_is_traced_alike_whatever_the_caller_set(caller, own_model):
    """rx.real_trace on a model object: a forward and a backward pass even under no_grad or inference_mode, the
    same numbers bit for bit, and every setting as the caller left it."""
    model, ids, plain = own_model
    with CALLERS[caller]():
        before = settings()
        assert dict(rx.real_trace(model, ids)) == plain
        after = settings()
    assert after == before
