"""One forward and one backward pass of a freshly built model, reported layer by layer."""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from ..config import TraceConfig, forward_macs
from ..jsonsafe import float32_decimals
from ..models.init import build_model
from ..models.stack import Stack, make_batch
from ..models.tree import parameters_with_owner
from ..probes.recorder import (
    STREAM_STATISTICS,
    StreamRecorder,
    branch_norms,
    grad_norms_by_owner,
    stream_statistics,
    token_norm_means,
)


def run_trace(cfg: TraceConfig) -> dict[str, Any]:
    """Build cfg's model, run one training step's forward and backward (no update) and trace it."""
    return trace_and_model(cfg)[0]


def trace_and_model(cfg: TraceConfig) -> tuple[dict[str, Any], tuple[Stack, StreamRecorder]]:
    """run_trace's answer, and the model with its recording, for a caller that frees them later: a compute
    process sends the answer first (freeing a depth-96 model and its snapshots takes ~5 ms)."""
    started = time.perf_counter()
    model = build_model(cfg)
    inputs, targets = make_batch(cfg)
    if inputs.is_floating_point():
        inputs.requires_grad_(True)  # the MLP's x_0 is its input: we want d loss / d x_0 too
    with StreamRecorder(model) as recorder:
        loss = model.loss(inputs, targets)
        loss.backward()
    answer = _assemble(cfg, model, recorder, loss.item())
    answer["summary"]["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 2)
    return answer, (model, recorder)


def _assemble(cfg: TraceConfig, model: Stack, recorder: StreamRecorder, loss: float) -> dict[str, Any]:
    names = recorder.names
    acts = {
        field: float32_decimals(column)
        for field, column in stream_statistics([recorder.acts[n] for n in names]).items()
    }
    grads = float32_decimals(token_norm_means([recorder.grads.get(n) for n in names]))
    units = recorder.snapshots[1:]
    per_block = len(model.blocks[0].units)
    unit_branches, block_branches = map(
        float32_decimals, branch_norms([recorder.branches[s.name] for s in units], per_block)
    )
    unit_modules = [unit for block in model.blocks for unit in block.units.values()]
    parameters, owners = parameters_with_owner(model, unit_modules)  # one walk: the units' and the model's count
    exact_param_grads = grad_norms_by_owner(parameters, owners, len(unit_modules))
    unit_param_grads = float32_decimals(exact_param_grads)
    block_param_grads = float32_decimals(
        [
            math.sqrt(sum(g * g for g in exact_param_grads[start : start + per_block]))
            for start in range(0, len(exact_param_grads), per_block)
        ]
    )
    row = {n: i for i, n in enumerate(names)}

    def stats(name: str) -> dict[str, Any]:
        return snapshot_statistics(acts, grads, row[name])

    sublayers, layers = [], []
    for i, snapshot in enumerate(units):
        sublayers.append(
            {
                "layer": snapshot.layer,
                "sublayer": snapshot.unit,
                **stats(snapshot.name),
                "branch_norm": unit_branches[i],
                "param_grad_norm": unit_param_grads[i],
            }
        )
    for l, output in enumerate(recorder.block_outputs()[1:], start=1):
        mine = sublayers[(l - 1) * per_block : l * per_block]
        entry = {
            "layer": l,
            **stats(output.name),
            "branch_norm": block_branches[l - 1],
            "param_grad_norm": block_param_grads[l - 1],
        }
        for s in mine:
            if s["sublayer"] in ("attn", "ffn"):
                entry[f"{s['sublayer']}_param_grad_norm"] = s["param_grad_norm"]
        layers.append(entry)
    embedding = snapshot_statistics(acts, grads, 0)
    summary = {
        **summarise(layers, loss, cfg),
        "parameters": sum(p.numel() for p in parameters),
        "forward_macs": forward_macs(cfg),
    }  # what a variant costs: DenseFormer's weights, highway gates
    return {
        "config": cfg.model_dump(),
        "embedding": embedding,
        "layers": layers,
        "sublayers": sublayers,
        "loss": float32_decimals([loss])[0],
        "summary": summary,
    }


def snapshot_statistics(acts: dict[str, list[float]], grads: list[float], i: int) -> dict[str, Any]:
    """What the trace reports for one stream snapshot: sizes, token similarity, the spread inside a token vector
    (token_max_abs / token_min_abs: mean over tokens of its largest and smallest |coordinate|) and the gradient."""
    return {**{statistic.json_key: acts[statistic.name][i] for statistic in STREAM_STATISTICS}, "grad_norm": grads[i]}


def summarise(layers: list[dict[str, Any]], loss: float, cfg: TraceConfig) -> dict[str, Any]:
    first, last = layers[0], layers[-1]
    values = [loss] + [v for layer in layers for v in layer.values() if isinstance(v, float)]
    survival, growth = float32_decimals(
        [_ratio(first["grad_norm"], last["grad_norm"]), _ratio(last["act_norm"], first["act_norm"])]
    )
    return {
        "grad_survival": survival,
        "norm_growth": growth,
        "nonfinite": not all(math.isfinite(v) for v in values),
        "first_nonfinite_layer": next(
            (l["layer"] for l in layers if not all(math.isfinite(v) for v in l.values() if isinstance(v, float))), None
        ),
        "dtype_max": float(torch.finfo(getattr(torch, cfg.dtype)).max),
        "depth": cfg.depth,
    }


def _ratio(top: float, bottom: float) -> float:
    if bottom == 0.0:
        return math.inf if top > 0 else math.nan
    return top / bottom
