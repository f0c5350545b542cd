"""The recorder's contract is declared, not guessed: snapshots carry their layer and unit, every unit says where its
combine sits, and each statistic is declared once (name, JSON key, reduction)."""

from __future__ import annotations

import torch

from app.config import TraceConfig
from app.experiments.trace import run_trace
from app.models.init import build_model
from app.models.stack import make_batch
from app.models.units import UNITS
from app.probes.recorder import STREAM_STATISTICS, StreamRecorder
from tests.grids import choices

SMALL = dict(d_model=16, n_heads=2, seq_len=4, batch=2, vocab_size=32, depth=3)


def test_every_unit_declares_whether_it_returns_its_combine():
    assert all(isinstance(unit.__dict__.get("returns_combine"), bool) for unit in UNITS.values())


def test_snapshots_name_their_layer_and_unit_and_the_trace_reports_them():
    for block in choices("block"):
        cfg = TraceConfig(block=block, **SMALL)
        model = build_model(cfg)
        inputs, targets = make_batch(cfg)
        with StreamRecorder(model) as recorder:
            model.loss(inputs, targets).backward()
        units = [(layer, unit) for layer, b in enumerate(model.blocks, start=1) for unit in b.units]
        assert [(s.layer, s.unit) for s in recorder.snapshots] == [(0, "embed"), *units]
        assert [s.layer for s in recorder.block_outputs()] == list(range(cfg.depth + 1))
        trace = run_trace(cfg)
        assert [(s["layer"], s["sublayer"]) for s in trace["sublayers"]] == units


def test_each_statistic_is_declared_once_and_reported_under_its_json_key():
    names = [s.name for s in STREAM_STATISTICS]
    keys = [s.json_key for s in STREAM_STATISTICS]
    assert len(set(names)) == len(names) and len(set(keys)) == len(keys)
    trace = run_trace(TraceConfig(**SMALL))
    for entry in (trace["embedding"], *trace["layers"], *trace["sublayers"]):
        assert all(key in entry for key in [*keys, "grad_norm"])
    assert list(trace["embedding"]) == [*keys, "grad_norm"]
    assert torch.isfinite(torch.tensor([trace["embedding"][k] for k in keys])).all()
