"""Physics of the stacks at initialisation: what a careful reader would check by hand."""

from __future__ import annotations

import json
import math

import pytest
import torch

from app.config import PRESETS, VARIANTS, TraceConfig, preset_config
from app.config.variants import pinning_norms
from app.experiments.trace import run_trace
from app.jsonsafe import all_finite, strict_dumps
from app.models.init import build_model
from app.models.norms import NORMS, DynamicTanh, ScaleNorm
from app.models.stack import make_batch
from app.probes.recorder import StreamRecorder
from tests.grids import case_id, choices, covering

SMALL = dict(d_model=32, n_heads=4, seq_len=16, batch=2, vocab_size=64)


def block_outputs(cfg: TraceConfig) -> list[torch.Tensor]:
    """The residual stream after every block, recorded without the trace's statistics."""
    model = build_model(cfg)
    inputs, targets = make_batch(cfg)
    with StreamRecorder(model) as recorder:
        model.loss(inputs, targets)
    return [recorder.acts[f"{l}.{list(b.units)[-1]}"] for l, b in enumerate(model.blocks, start=1)]


def test_the_pinning_norms_are_the_ones_that_normalize_each_token():
    """The pages draw the sqrt(d) line from this property: a norm missing from it loses its line (the old bug)."""
    assert sorted(pinning_norms()) == ["groupnorm", "layernorm", "layernorm_nobias", "rmsnorm", "scalenorm"]


@pytest.mark.parametrize("norm", choices("norm"))
@pytest.mark.parametrize("arch", choices("arch"))
def test_post_norm_pins_every_token_to_sqrt_d_exactly_when_the_table_says_so(norm, arch):
    """`pins_token` in app/config/variants.py is what the pages draw the √d line for: checked on the real class."""
    cfg = TraceConfig(arch=arch, norm=norm, norm_position="post", depth=8, **SMALL)
    pinned = [
        torch.allclose(norms, torch.full_like(norms, math.sqrt(cfg.d_model)), rtol=1e-3)
        for norms in (stream.norm(dim=-1) for stream in block_outputs(cfg))
    ]
    assert all(pinned) if VARIANTS["norm"][norm].pins_token else not any(pinned)


@pytest.mark.parametrize("norm", sorted(set(NORMS) - set(pinning_norms())))
def test_the_other_post_norms_leave_token_lengths_free(norm):
    """Without `pins_token` (DyT, BatchNorm, none) some token leaves sqrt(d) by more than 1% after the add."""
    cfg = TraceConfig(norm=norm, norm_position="post", depth=8, **SMALL)
    token_norms = torch.cat([stream.norm(dim=-1).flatten() for stream in block_outputs(cfg)])
    assert not torch.allclose(token_norms, torch.full_like(token_norms, math.sqrt(cfg.d_model)), rtol=1e-2)


def test_pre_ln_squared_norm_grows_linearly_with_depth():
    """At init each block adds a roughly independent update, so ||x_l||^2 grows like a + b*l (norm like sqrt(l))."""
    trace = run_trace(TraceConfig(depth=48, norm_position="pre", init="xavier"))
    squares = torch.tensor([layer["act_norm"] ** 2 for layer in trace["layers"]], dtype=torch.float64)
    layers = torch.arange(1, 49, dtype=torch.float64)
    slope, intercept = torch.linalg.lstsq(torch.stack([layers, torch.ones_like(layers)], 1), squares[:, None]).solution[
        :, 0
    ]
    fitted = slope * layers + intercept
    r_squared = 1 - ((squares - fitted) ** 2).sum() / ((squares - squares.mean()) ** 2).sum()
    assert slope > 0 and r_squared > 0.97
    assert trace["summary"]["norm_growth"] > 3.0  # sqrt(48) ~ 6.9 with the embedding's offset


def test_plain_tanh_stack_loses_its_gradient_and_the_shortcut_keeps_it():
    plain = run_trace(TraceConfig(arch="mlp", depth=64, norm="none", residual="none", activation="tanh", init="torch"))
    shortcut = run_trace(
        TraceConfig(arch="mlp", depth=64, norm="none", residual="identity", activation="tanh", init="torch")
    )
    assert plain["summary"]["grad_survival"] < 1e-6
    assert 0.1 < shortcut["summary"]["grad_survival"] < 1e3
    assert shortcut["layers"][0]["grad_norm"] > 1e6 * plain["layers"][0]["grad_norm"]


def test_plain_transformer_collapses_tokens_and_the_residual_does_not():
    plain = run_trace(preset_config("plain", TraceConfig(depth=32)))
    residual = run_trace(TraceConfig(depth=32))
    spread_plain = 1 - plain["layers"][-1]["token_cosine"]  # every position says the same thing: rank collapse
    spread_residual = 1 - residual["layers"][-1]["token_cosine"]  # the shortcut keeps each token's own embedding
    assert spread_plain < 0.01 and spread_residual > 0.1


def test_post_ln_gradient_fades_towards_the_input_and_deepnorm_repairs_it():
    post = run_trace(preset_config("post_ln", TraceConfig(depth=48)))
    deep = run_trace(preset_config("deepnorm", TraceConfig(depth=48)))
    assert post["summary"]["grad_survival"] < 0.2
    assert abs(math.log(deep["summary"]["grad_survival"])) < abs(math.log(post["summary"]["grad_survival"]))


def test_rezero_starts_as_the_identity():
    trace = run_trace(preset_config("rezero", TraceConfig(depth=10, **SMALL)))
    norms = [trace["embedding"]["act_norm"]] + [layer["act_norm"] for layer in trace["layers"]]
    grads = [layer["grad_norm"] for layer in trace["layers"]]
    assert max(norms) - min(norms) < 1e-5 * norms[0]
    assert max(grads) - min(grads) < 1e-6 * grads[0]


def test_sandwich_output_norm_fixes_every_update_to_sqrt_d():
    cfg = preset_config("sandwich", TraceConfig(depth=6, **SMALL)).model_copy(update={"init": "xavier"})
    trace = run_trace(cfg)  # (with GPT-2 init the branch output is so small that eps, not the data, sets its norm)
    for sub in trace["sublayers"]:
        assert sub["branch_norm"] == pytest.approx(math.sqrt(SMALL["d_model"]), rel=1e-3)


def test_mix_ln_is_post_ln_in_the_first_quarter_only():
    cfg = TraceConfig(depth=12, norm_position="mix", init="xavier", **SMALL)
    outs = block_outputs(cfg)
    first = [o.norm(dim=-1).mean().item() for o in outs[:3]]
    assert first == pytest.approx([math.sqrt(32)] * 3, rel=1e-3)
    assert outs[-1].norm(dim=-1).mean().item() > 1.2 * math.sqrt(32)  # Pre-LN blocks after: the stream grows again


def test_depth_scaled_norm_slows_the_snowball():
    plain = run_trace(TraceConfig(depth=32))
    scaled = run_trace(TraceConfig(depth=32, depth_scaled_norm=True))
    assert scaled["summary"]["norm_growth"] < plain["summary"]["norm_growth"]


def test_norm_layers_match_their_formulas():
    x = torch.randn(3, 5, 16)
    scale = ScaleNorm(16)
    assert torch.allclose(scale(x).norm(dim=-1), torch.full((3, 5), 4.0), atol=1e-5)
    dyt = DynamicTanh(16)
    assert dyt.alpha.item() == 0.5 and torch.allclose(dyt(x), torch.tanh(0.5 * x))
    ln = NORMS["layernorm"](16)(x)
    assert torch.allclose(ln.mean(-1), torch.zeros(3, 5), atol=1e-5)
    rms = NORMS["rmsnorm"](16)(x)
    assert torch.allclose(rms.pow(2).mean(-1), torch.ones(3, 5), atol=1e-3)


def test_trace_matches_a_hand_computed_backward_pass():
    """grad_norm and param_grad_norm equal what retain_grad and .grad give without any probe."""
    cfg = TraceConfig(depth=5, **SMALL)
    trace = run_trace(cfg)
    model = build_model(cfg)
    inputs, targets = make_batch(cfg)
    x = model.embed(inputs)
    outs = []
    for block in model.blocks:
        x = block(x)
        x.retain_grad()
        outs.append(x)
    torch.nn.functional.cross_entropy(model.head(model.final_norm(x)).flatten(0, 1), targets.flatten()).backward()
    for layer, out, block in zip(trace["layers"], outs, model.blocks, strict=True):
        assert out.grad is not None
        assert layer["grad_norm"] == pytest.approx(out.grad.norm(dim=-1).mean().item(), rel=1e-5)
        assert layer["act_norm"] == pytest.approx(out.norm(dim=-1).mean().item(), rel=1e-5)
        grads = [p.grad.flatten() for p in block.parameters() if p.grad is not None]
        assert len(grads) == len(list(block.parameters()))  # every weight of the block got a gradient
        assert layer["param_grad_norm"] == pytest.approx(torch.cat(grads).norm().item(), rel=1e-4)


def test_same_seed_same_trace_other_seed_other_trace():
    a, b, c = (run_trace(TraceConfig(depth=4, seed=s, **SMALL)) for s in (7, 7, 8))
    assert a["layers"] == b["layers"] and a["loss"] == b["loss"]
    assert a["layers"] != c["layers"]


def test_float16_overflow_becomes_null_and_is_flagged():
    trace = run_trace(TraceConfig(depth=24, dtype="float16", norm="none", init="torch", residual_scale=4.0, **SMALL))
    assert trace["summary"]["nonfinite"] is True
    text = strict_dumps(trace)
    assert "NaN" not in text and "Infinity" not in text
    body = json.loads(text)
    assert None in [layer["act_norm"] for layer in body["layers"]] and body["nonfinite_count"] > 0


TINY = dict(d_model=16, n_heads=2, seq_len=8, batch=2, vocab_size=32, norm_groups=4)
MODEL_GRID = covering(("norm", "norm_position", "residual", "block"), ())
DTYPE_GRID = covering(("norm", "norm_position", "block", "dtype"), ("residual", "init"))
INIT_GRID = covering(("norm", "residual", "block", "init"), ("norm_position",))


@pytest.mark.parametrize("row", MODEL_GRID, ids=case_id)
def test_every_variant_traces_to_strict_json(row):
    trace = run_trace(TraceConfig(depth=4, **row, **TINY))
    units = 2 if row["block"] == "sequential" else 1  # a parallel block is one unit: x + attn(N(x)) + ffn(N(x))
    assert len(trace["layers"]) == 4 and len(trace["sublayers"]) == 4 * units
    assert all_finite(trace), "strict JSON would null a number: at 4 blocks in float32 that is a bug, not physics"
    assert math.isfinite(trace["loss"])


@pytest.mark.parametrize("row", DTYPE_GRID, ids=case_id)
def test_every_variant_runs_in_every_dtype(row):
    """At 4 blocks nothing may overflow in any format: a non-finite number here is a bug, not physics."""
    cfg = TraceConfig(depth=4, **row, **TINY)
    trace = run_trace(cfg)
    model = build_model(cfg)
    assert {p.dtype for p in model.parameters()} == {getattr(torch, row["dtype"])}
    assert trace["summary"]["nonfinite"] is False and math.isfinite(trace["loss"])
    assert 0.5 * math.log(32) < trace["loss"] < 3 * math.log(32)  # near a uniform guess over 32 tokens at init
    assert all_finite(trace), "strict JSON would null a number: every statistic must be finite at 4 blocks"


@pytest.mark.parametrize("dtype", choices("dtype"))
@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("arch", choices("arch"))
def test_every_preset_runs_in_every_dtype(preset, dtype, arch):
    cfg = preset_config(preset, TraceConfig(arch=arch, depth=3, dtype=dtype, **SMALL))
    trace = run_trace(cfg)
    assert trace["config"]["dtype"] == dtype and len(trace["layers"]) == 3
    assert trace["summary"]["nonfinite"] is False
    assert all(layer["act_norm"] > 0 for layer in trace["layers"])


@pytest.mark.parametrize("row", INIT_GRID, ids=case_id)
def test_initialise_sets_every_parameter(row):
    """Layers skip PyTorch's default init, so `initialise` must set every tensor: poison them all first."""
    from app.models.init import initialise
    from app.models.stack import Stack

    cfg = TraceConfig(depth=3, **row, **TINY)
    model = Stack(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))
    initialise(model, cfg.init, cfg.depth, torch.Generator().manual_seed(cfg.seed))
    for name, p in model.named_parameters():
        assert torch.isfinite(p).all(), name
    for a, b in zip(model.parameters(), build_model(cfg).parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("shape", [(192, 64), (64, 64), (256, 64), (64, 256), (96, 32), (33, 7)])
def test_xavier_init_draws_what_torch_draws(shape):
    """The builder's Xavier-uniform is nn.init.xavier_uniform_ on Q, K and V separately, bit for bit."""
    from torch import nn

    from app.models.init import _xavier_per_square_chunk

    chunks = 3 if shape[0] == 3 * shape[1] else 1
    expected, ours = torch.empty(shape), torch.empty(shape)
    reference = torch.Generator().manual_seed(7)
    for part in expected.chunk(chunks, dim=0):
        nn.init.xavier_uniform_(part, generator=reference)
    _xavier_per_square_chunk(ours, torch.Generator().manual_seed(7))
    assert torch.equal(ours, expected)
    bound = math.sqrt(6 / (shape[1] + shape[0] // chunks))
    assert ours.abs().max() <= bound and ours.abs().max() > 0.9 * bound  # Glorot & Bengio 2010, eq. 16
