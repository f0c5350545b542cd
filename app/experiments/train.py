"""Short real training runs of 1-4 model configs side by side on one synthetic task (no FastAPI here).

`train_events(request, cancel)` yields plain dicts: one `start`, then per step and run a `step` event
(loss, global gradient norm, learning rate; every few steps also per-layer norms), one `done` event per
run (diverged, final loss, held-out accuracy) and one `end`. Runs are interleaved step by step, so a
page can draw every loss curve live. A non-finite loss or gradient stops that run and marks it diverged.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from ..config import TraceConfig, forward_macs
from ..models.init import build_model
from ..models.stack import Stack
from ..probes.recorder import StreamRecorder, parameter_grad_norms, token_norm_means
from .tasks import TASKS, TaskMismatch, TaskShape, eval_set, task_shape, train_batches

MAX_STEPS = 2000
# Budget of one request: sum over runs of steps x (forward + backward ~ 3 forwards) multiply-adds.
# 6e11 holds the largest preset (4 runs x 300 steps of a 12-block d_model-64 model, batch 16 x 16 tokens),
# about 40-60 s on one core of a busy 2-core machine.
MAX_TRAIN_MACS = 6.0e11
# Measured on one core: a training step of a width-4 block takes ~1 ms, a preset block (1.3e7 multiply-adds) ~2.5 ms.
BLOCK_OVERHEAD_MACS = 5.0e6
PROBE_POINTS = 30  # per-layer norms are recorded about this many times per run
EVAL_CHUNK = 64

TaskName = Literal["copy", "reverse", "sort"]
OptimizerName = Literal["adam", "adamw", "sgd"]


class TrainRequest(BaseModel):
    """POST /api/train: the runs to compare and the training settings they share."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runs: list[TraceConfig] = Field(
        default_factory=lambda: [TraceConfig(depth=6)],
        min_length=1,
        max_length=4,
        description="1 to 4 model configs (each what /api/trace accepts); weights seeded by each config's seed.",
    )
    task: TaskName = Field("copy", description="copy | reverse | sort (scored on the second half only).")
    steps: int = Field(300, ge=1, le=MAX_STEPS, description="Optimizer steps per run.")
    lr: float = Field(1e-3, gt=0.0, le=10.0, description="Peak learning rate (reached after the warm-up).")
    warmup_steps: int = Field(
        0, ge=0, le=MAX_STEPS, description="Linear warm-up from 0 to lr over this many steps; 0 = none."
    )
    optimizer: OptimizerName = Field("adam", description="adam | adamw (weight decay 0.01) | sgd (momentum 0.9).")
    clip: float | None = Field(
        None, gt=0.0, le=1000.0, description="Max global gradient norm (clipping), or null for none."
    )
    seed: int = Field(
        0,
        ge=0,
        le=2**31 - 1,
        description="Seed of the training batches and the held-out set (same data for every run).",
    )

    @model_validator(mode="after")
    def _within_budget(self, info: ValidationInfo) -> TrainRequest:
        if (info.context or {}).get("train_budget") is False:  # POST /api/train/budget asks how it stands
            return self
        total = sum(training_macs(cfg, self.steps) for cfg in self.runs)
        if total > MAX_TRAIN_MACS:
            raise ValueError(
                f"steps: this request is too large for this server: {total:.3g} > {MAX_TRAIN_MACS:.3g} "
                "multiply-adds (runs x steps x model size); use fewer steps, fewer runs or smaller models"
                " | allowed: sum over runs of 3 x steps x forward multiply-adds"
                f" (at least {BLOCK_OVERHEAD_MACS:.0e} per block) <= {MAX_TRAIN_MACS:.3g}"
            )
        return self


def train_budget(request: TrainRequest) -> dict[str, Any]:
    """How a training request stands against MAX_TRAIN_MACS: its cost, the limit, and the most steps that fit with
    these runs (0: not even one step), so a page can say it before Start in a reader's words."""
    per_step = sum(training_macs(cfg, 1) for cfg in request.runs)
    total = per_step * request.steps
    return {
        "fits": total <= MAX_TRAIN_MACS,
        "multiply_adds": total,
        "limit": MAX_TRAIN_MACS,
        "times_over": total / MAX_TRAIN_MACS,
        "max_steps": min(MAX_STEPS, math.floor(MAX_TRAIN_MACS / per_step)),
        "runs": len(request.runs),
        "steps": request.steps,
    }


def training_macs(cfg: TraceConfig, steps: int) -> float:
    """Cost of `steps` steps, counting each block as at least BLOCK_OVERHEAD_MACS: a tiny block still runs a few
    dozen kernels and autograd nodes, so 128 blocks of width 4 would otherwise pass the budget and train for ~45 min."""
    return 3.0 * steps * max(forward_macs(cfg), BLOCK_OVERHEAD_MACS * cfg.depth)


def check_runs(request: TrainRequest) -> list[TaskShape]:
    """Each model must read the task's tokens: a token model, long enough, with room for the separator."""
    shapes = []
    for index, cfg in enumerate(request.runs):
        if cfg.arch != "transformer":
            raise TaskMismatch(
                f"runs.{index}.arch",
                "the training tasks are token sequences; an MLP has no token embedding",
                "transformer",
            )
        shapes.append(task_shape(cfg.seq_len, cfg.vocab_size, prefix=f"runs.{index}."))
    return shapes


def lr_at(step: int, lr: float, warmup_steps: int) -> float:
    """Linear warm-up (Goyal et al. 2017; Vaswani et al. 2017 eq. 3 without the decay): lr * min(1, step / warmup)."""
    if warmup_steps <= 0:
        return lr
    return lr * min(1.0, step / warmup_steps)


WARM_THREAD = "resnorm-warm-optimizer"  # the thread's name: tests wait for it (tests/conftest.py settled)


def warm_up_in_background() -> threading.Thread:
    """The first torch.optim optimizer of a process imports torch._dynamo (about 1.5 s): pay that at server start,
    in a daemon thread, not in the first user's time to first point."""

    def build() -> None:
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])

    thread = threading.Thread(target=build, name=WARM_THREAD, daemon=True)
    thread.start()
    return thread


def make_optimizer(name: str, params, lr: float) -> torch.optim.Optimizer:
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    return torch.optim.Adam(params, lr=lr)


@dataclass
class Run:
    index: int
    cfg: TraceConfig
    shape: TaskShape
    model: Stack
    optimizer: torch.optim.Optimizer
    batches: Iterator
    loss: float = math.nan
    diverged: bool = False
    diverged_step: int | None = None
    steps_done: int = 0
    started: float = field(default_factory=time.perf_counter)


def start_run(index: int, cfg: TraceConfig, shape: TaskShape, request: TrainRequest) -> Run:
    model = build_model(cfg)
    model.train()
    optimizer = make_optimizer(request.optimizer, model.parameters(), lr_at(1, request.lr, request.warmup_steps))
    batches = train_batches(TASKS[request.task], shape, cfg.batch, request.seed)
    return Run(index, cfg, shape, model, optimizer, batches)


def scored_loss(model: torch.nn.Module, inputs, targets, scored) -> torch.Tensor:
    """Cross-entropy on the answer positions only (the data half is random and unlearnable)."""
    logits = model(inputs).float()  # (B, 2n, V)
    return F.cross_entropy(logits[scored], targets[scored])


def train_step(run: Run, step: int, request: TrainRequest, probe: bool) -> dict[str, Any]:
    """One optimizer step; the event for it (with per-layer norms when `probe`)."""
    lr = lr_at(step, request.lr, request.warmup_steps)
    for group in run.optimizer.param_groups:
        group["lr"] = lr
    inputs, targets, scored = next(run.batches)
    run.optimizer.zero_grad(set_to_none=True)
    event: dict[str, Any] = {"type": "step", "run": run.index, "step": step}
    if probe:
        with StreamRecorder(run.model) as recorder:
            loss = scored_loss(run.model, inputs, targets, scored)
            loss.backward()
        layers = layer_profile(run.model, recorder)
    else:
        loss = scored_loss(run.model, inputs, targets, scored)
        loss.backward()
    max_norm = request.clip if request.clip is not None else math.inf
    grad_norm = float(torch.nn.utils.clip_grad_norm_(run.model.parameters(), max_norm))  # norm before clipping
    run.loss, run.steps_done = float(loss.item()), step
    event.update({"loss": run.loss, "grad_norm": grad_norm, "lr": lr})
    if probe:
        event["layers"] = layers
    if not (math.isfinite(run.loss) and math.isfinite(grad_norm)):
        run.diverged, run.diverged_step = True, step
        event["diverged"] = True
        return event  # no update: the weights stay as they were before the blow-up
    run.optimizer.step()
    return event


def layer_profile(model: Stack, recorder: StreamRecorder) -> dict[str, Any]:
    """Per block: stream norm after it, gradient norm of the loss w.r.t. that stream, and of its parameters."""
    names = [snapshot.name for snapshot in recorder.block_outputs()]
    act = token_norm_means([recorder.acts[n] for n in names])
    grad = token_norm_means([recorder.grads.get(n) for n in names])
    block_norms = parameter_grad_norms(model, list(model.blocks))
    return {
        "act_norm": act[1:],
        "grad_norm": grad[1:],
        "param_grad_norm": block_norms,
        "embedding_act_norm": act[0],
        "embedding_grad_norm": grad[0],
    }


@torch.no_grad()
def evaluate(run: Run, task: str, seed: int) -> dict[str, Any]:
    """Held-out loss, token accuracy and whole-answer accuracy on the answer positions."""
    params_finite = all(torch.isfinite(p).all() for p in run.model.parameters())
    if not params_finite:
        return {"eval_loss": None, "accuracy": None, "sequence_accuracy": None}
    run.model.eval()
    inputs, targets, scored = eval_set(TASKS[task], run.shape, seed)
    losses, hits, whole = [], [], []
    for start in range(0, inputs.shape[0], EVAL_CHUNK):
        chunk = slice(start, start + EVAL_CHUNK)
        logits = run.model(inputs[chunk]).float()
        mask, target = scored[chunk], targets[chunk]
        losses.append(F.cross_entropy(logits[mask], target[mask], reduction="sum"))
        correct = (logits.argmax(-1) == target) | ~mask
        hits.append(correct[:, run.shape.half :].float().sum())
        whole.append(correct.all(dim=1).float().sum())
    answers = inputs.shape[0] * run.shape.half
    run.model.train()
    return {
        "eval_loss": float(sum(losses) / answers),
        "accuracy": float(sum(hits) / answers),
        "sequence_accuracy": float(sum(whole) / inputs.shape[0]),
    }


def done_event(run: Run, request: TrainRequest) -> dict[str, Any]:
    return {
        "type": "done",
        "run": run.index,
        "done": True,
        "diverged": run.diverged,
        "diverged_step": run.diverged_step,
        "steps_done": run.steps_done,
        "final_loss": run.loss,
        **evaluate(run, request.task, request.seed),
        "elapsed_ms": round((time.perf_counter() - run.started) * 1000, 1),
    }


def probe_every(steps: int) -> int:
    return max(1, round(steps / PROBE_POINTS))


def train_events(
    request: TrainRequest, cancel: threading.Event | None = None, parallel: int = 1
) -> Iterator[dict[str, Any]]:
    """Train every run of `request`, interleaved step by step; stops early when `cancel` is set.

    `parallel` > 1: a step's runs are taken by that many threads at once (torch releases the GIL in its kernels: two
    runs on two cores take ~0.68x the time of one after the other). The events are the same, in the same order: each
    run has its own model, optimizer and data generator, and its ops run in the thread that calls them."""
    cancel = cancel or threading.Event()
    started = time.perf_counter()
    shapes = check_runs(request)
    every = probe_every(request.steps)
    yield {
        "type": "start",
        "task": request.task,
        "steps": request.steps,
        "probe_every": every,
        "runs": [
            {"run": i, "config": cfg.model_dump(), "tokens": shapes[i].length, "answer_tokens": shapes[i].half}
            for i, cfg in enumerate(request.runs)
        ],
    }
    runs = [start_run(i, cfg, shapes[i], request) for i, cfg in enumerate(request.runs)]
    threads = min(parallel, len(runs))
    with ThreadPoolExecutor(threads, thread_name_prefix="resnorm-step") if threads > 1 else nullcontext() as pool:
        for step in range(1, request.steps + 1):
            probe = step == 1 or step % every == 0 or step == request.steps
            live = [run for run in runs if not run.diverged]
            if pool is not None and len(live) > 1:
                if cancel.is_set():
                    return
                stepped = list(pool.map(partial(train_step, step=step, request=request, probe=probe), live))
            else:
                stepped = None
            for k, run in enumerate(live):
                if cancel.is_set():
                    return
                yield stepped[k] if stepped is not None else train_step(run, step, request, probe)
                if run.diverged:
                    yield done_event(run, request)
    for run in runs:
        if not run.diverged:
            yield done_event(run, request)
    yield {
        "type": "end",
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        "diverged": [run.index for run in runs if run.diverged],
    }
