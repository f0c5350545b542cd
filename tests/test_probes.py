"""The probes' statistics against plain, one-snapshot-at-a-time torch computations, and the fast tree walks."""

from __future__ import annotations

import math

import pytest
import torch

from app.config import TraceConfig
from app.models.init import build_model
from app.models.tree import parameters_with_owner, submodules
from app.models.units import PostNormUnit, PreNormUnit, SandwichUnit
from app.probes.recorder import parameter_grad_norms, stream_statistics
from tests.grids import case_id, covering

TINY = dict(d_model=16, n_heads=2, seq_len=8, batch=2, vocab_size=32, norm_groups=4)


def by_hand(x: torch.Tensor) -> dict[str, float]:
    """One (B, T, C) snapshot in float64, the cosine from the full T x T matrix of token cosines."""
    x = x.double()
    token_norms = x.norm(dim=-1)  # (B, T)
    units = x / token_norms.unsqueeze(-1).clamp_min(1e-300)
    cosines = units @ units.transpose(-1, -2)  # (B, T, T)
    tokens = x.shape[1]
    off_diagonal = cosines.sum(dim=(1, 2)) - cosines.diagonal(dim1=1, dim2=2).sum(dim=1)
    return {
        "norm": token_norms.mean().item(),
        "rms": x.pow(2).mean().sqrt().item(),
        "max_abs": x.abs().max().item(),
        "cosine": (off_diagonal / (tokens * (tokens - 1))).mean().item(),
        "token_max_abs": x.abs().amax(dim=-1).mean().item(),
        "token_min_abs": x.abs().amin(dim=-1).mean().item(),
    }


def test_stream_statistics_equal_a_hand_computation_snapshot_by_snapshot():
    """70 snapshots of very different sizes cross the chunks the statistics are computed in; one token is zero."""
    generator = torch.Generator().manual_seed(3)
    snapshots = [torch.randn(4, 32, 64, generator=generator) * 10.0 ** (i % 7 - 3) + 0.1 * i for i in range(70)]
    snapshots[5][1, 2] = 0.0
    stats = stream_statistics(snapshots)
    for i, x in enumerate(snapshots):
        for name, value in by_hand(x).items():
            assert stats[name][i] == pytest.approx(value, rel=1e-5, abs=1e-6), (i, name)


def test_stream_statistics_keep_non_finite_values_visible():
    """An overflowed entry must come out as inf or NaN (to be flagged), never as a finite number."""
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(1))
    overflowed, broken = x.clone(), x.clone()
    overflowed[1, 1, 1] = float("inf")
    broken[0, 3, 2] = float("nan")
    stats = stream_statistics([x, overflowed, broken])
    assert all(math.isfinite(values[0]) for values in stats.values())
    assert stats["norm"][1] == stats["max_abs"][1] == math.inf and math.isnan(stats["cosine"][1])
    assert all(math.isnan(stats[name][2]) for name in ("norm", "rms", "max_abs", "cosine", "token_max_abs"))


def test_stream_statistics_of_finite_streams_past_float32_stay_finite():
    """Entries of 1e20 square past float32's 3.4e38: the statistics are then taken again in float64."""
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(2)) * 1e20
    stats = stream_statistics([x])
    assert stats["norm"][0] == pytest.approx(by_hand(x)["norm"], rel=1e-6)
    assert stats["rms"][0] == pytest.approx(by_hand(x)["rms"], rel=1e-6)


@pytest.mark.parametrize("row", covering(("arch", "residual", "block", "norm"), ()), ids=case_id)
def test_tree_walks_equal_the_torch_methods(row):
    model = build_model(TraceConfig(depth=3, **row, **TINY))
    for module in [model, *model.blocks, *model.modules()]:
        assert [id(m) for m in submodules(module)] == [id(m) for m in module.modules()]
    units = [unit for block in model.blocks for unit in block.units.values()]
    for groups in ([*model.blocks, model.head], units):  # what the training lab and the trace group by
        parameters, owners = parameters_with_owner(model, groups)
        assert [id(p) for p in parameters] == [id(p) for p in model.parameters()]
        for index, group in enumerate(groups):
            assert [id(p) for p, owner in zip(parameters, owners, strict=True) if owner == index] == [
                id(p) for p in group.parameters()
            ]


@pytest.mark.parametrize(
    "settings",
    [
        dict(residual="highway", **TINY),
        dict(residual="rezero", norm="scalenorm", d_model=64, n_heads=4, seq_len=8, batch=2),  # scalar gates and gains
        dict(norm="dyt", dtype="bfloat16", d_model=64, n_heads=4, seq_len=8, batch=2),  # weights past 4,096 numbers
    ],
    ids=["highway-tiny", "rezero-scalenorm", "dyt-bfloat16"],
)
def test_parameter_grad_norms_equal_one_norm_over_each_modules_gradients(settings):
    cfg = TraceConfig(depth=3, **settings)
    model = build_model(cfg)
    from app.models.stack import make_batch

    model.loss(*make_batch(cfg)).backward()
    groups = [*model.blocks, model.embed]
    expected = [torch.cat([p.grad.double().flatten() for p in g.parameters()]).norm().item() for g in groups]
    assert all(value > 0 for value in expected)
    assert parameter_grad_norms(model, groups) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("position", ["pre", "post", "sandwich"])
def test_recorder_sees_each_unit_output_and_branch_and_leaves_no_hook_behind(position):
    """Whichever modules the recorder hooks (one hook on the combine where a unit ends with it, else two), it keeps
    each unit's own output and its combine's second input; after exit no hook is left and a forward records nothing."""
    from app.models.stack import make_batch
    from app.probes.recorder import StreamRecorder

    cfg = TraceConfig(depth=3, norm_position=position, **TINY)
    model = build_model(cfg)
    inputs, targets = make_batch(cfg)
    seen: dict[str, torch.Tensor] = {}
    handles = []
    for layer, block in enumerate(model.blocks, start=1):
        for name, unit in block.units.items():
            assert isinstance(unit, (PreNormUnit, PostNormUnit, SandwichUnit))
            handles.append(
                unit.register_forward_hook(lambda m, a, out, key=f"{layer}.{name}": seen.__setitem__(key, out.detach()))
            )
            handles.append(
                unit.combine.register_forward_pre_hook(
                    lambda m, a, key=f"{layer}.{name}": seen.__setitem__(key + "/f", a[1].detach())
                )
            )
    with StreamRecorder(model) as recorder:
        model.loss(inputs, targets).backward()
    assert recorder.names == ["embed"] + [k for k in seen if "/" not in k]
    for key in recorder.names[1:]:
        assert torch.equal(recorder.acts[key], seen[key]) and torch.equal(recorder.branches[key], seen[key + "/f"])
        assert recorder.grads[key].shape == seen[key].shape
    for handle in handles:
        handle.remove()
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    before = dict(recorder.acts)
    model.loss(inputs, targets)
    assert recorder.acts.keys() == before.keys() and all(recorder.acts[k] is before[k] for k in before)
