"""Physics of BatchNorm, GroupNorm, the parallel block and the dense (DenseFormer) connection, each checked
against torch's own ops or a by-hand equation, and parametrised over the request model's values."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from app.config import TraceConfig, dense_weights, forward_macs, parameter_count
from app.experiments.trace import run_trace
from app.models.branches import ParallelBranches
from app.models.init import build_model
from app.models.norms import NORMS, GroupNorm, norm_from_config
from app.models.residuals import DenseConnection, DepthWeightedAverage
from app.models.stack import make_batch
from app.models.units import PostNormUnit, PreNormUnit, SandwichUnit
from tests.grids import choices

BATCH_NORMS = {"batchnorm"}  # the only norm whose statistics span the batch
TINY = dict(d_model=16, n_heads=2, seq_len=8, batch=4, vocab_size=32, norm_groups=4)


def fresh_norm(name: str, width: int = 16) -> torch.nn.Module:
    return norm_from_config(TraceConfig(norm=name, d_model=width, norm_groups=4)).double()


@pytest.mark.parametrize("norm", choices("norm"))
def test_only_batchnorm_makes_a_sequence_depend_on_its_batch(norm):
    """Sequence 0 stays, its three batch mates are replaced: its output changes only under batch statistics."""
    generator = torch.Generator().manual_seed(0)
    batch = torch.randn(4, 8, 16, generator=generator, dtype=torch.float64)
    other = torch.cat([batch[:1], 3.0 + torch.randn(3, 8, 16, generator=generator, dtype=torch.float64)])
    layer = fresh_norm(norm)
    change = (layer(batch)[0] - layer(other)[0]).abs().max().item()
    if norm in BATCH_NORMS:
        assert change > 0.1
    else:
        assert change == 0.0


@pytest.mark.parametrize("norm", choices("norm"))
def test_only_batchnorm_answers_differently_in_eval_mode(norm):
    """After a few training batches, eval mode normalizes with running averages instead of the batch's own."""
    generator = torch.Generator().manual_seed(1)
    layer = fresh_norm(norm)
    for _ in range(5):
        layer(torch.randn(4, 8, 16, generator=generator, dtype=torch.float64))
    x = 2.0 + torch.randn(4, 8, 16, generator=generator, dtype=torch.float64)
    train_out = layer(x)
    layer.eval()
    gap = (train_out - layer(x)).abs().max().item()
    assert gap > 0.1 if norm in BATCH_NORMS else gap == 0.0


def test_batchnorm_is_the_per_channel_formula_over_batch_and_positions():
    generator = torch.Generator().manual_seed(2)
    x = 1.5 + 2.0 * torch.randn(3, 5, 16, generator=generator, dtype=torch.float64)
    layer = NORMS["batchnorm"](16).double()
    y = layer(x)
    flat = x.reshape(-1, 16)
    mean, var = flat.mean(0), flat.var(0, correction=0)  # biased variance normalizes
    assert torch.allclose(y, (x - mean) / torch.sqrt(var + 1e-5), atol=1e-12)
    reference = F.batch_norm(flat, None, None, training=True, eps=1e-5).view_as(x)
    assert torch.allclose(y, reference, atol=1e-12)
    assert torch.allclose(y.reshape(-1, 16).mean(0), torch.zeros(16, dtype=torch.float64), atol=1e-12)
    # running averages take 10% of this batch: the mean, and the unbiased variance (Ioffe & Szegedy 2015, Alg. 2)
    assert torch.allclose(layer.get_buffer("running_mean"), 0.1 * mean)
    assert torch.allclose(layer.get_buffer("running_var"), 0.9 + 0.1 * flat.var(0, correction=1))


def test_groupnorm_with_one_group_is_layernorm_without_affine():
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(2, 6, 12, generator=generator, dtype=torch.float64)
    one_group = GroupNorm(12, groups=1).double()
    assert torch.allclose(F.group_norm(x.reshape(-1, 12), 1).view_as(x), F.layer_norm(x, (12,)), atol=1e-12)
    assert torch.allclose(one_group(x), F.layer_norm(x, (12,)), atol=1e-12)
    with torch.no_grad():  # with a learned gain and shift too: both are per channel
        one_group.weight.copy_(torch.randn(12, generator=generator))
        one_group.bias.copy_(torch.randn(12, generator=generator))
    assert torch.allclose(one_group(x), F.layer_norm(x, (12,), one_group.weight, one_group.bias), atol=1e-12)


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_groupnorm_normalizes_each_group_of_each_token(groups):
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(2, 6, 12, generator=generator, dtype=torch.float64) * torch.linspace(
        0.5, 4, 12, dtype=torch.float64
    )
    y = GroupNorm(12, groups=groups).double()(x)
    parts = x.view(2, 6, groups, 12 // groups)
    by_hand = (parts - parts.mean(-1, keepdim=True)) / torch.sqrt(parts.var(-1, correction=0, keepdim=True) + 1e-5)
    assert torch.allclose(y, by_hand.view_as(x), atol=1e-12)
    assert torch.allclose(y, F.group_norm(x.reshape(-1, 12), groups).view_as(x), atol=1e-12)


def test_groupnorm_groups_must_divide_d_model_and_only_when_used():
    with pytest.raises(ValueError, match=r"norm_groups: must divide d_model \(12\).*allowed: 1, 2, 3, 4, 6 "):
        TraceConfig(norm="groupnorm", d_model=12, n_heads=4, norm_groups=8)
    with pytest.raises(ValueError, match="norm_groups"):  # 16 groups of 1 channel would normalize everything to 0
        TraceConfig(norm="groupnorm", d_model=16, norm_groups=16)
    assert TraceConfig(norm="layernorm", d_model=12, n_heads=4, norm_groups=8).norm_groups == 8


def test_post_batchnorm_pins_each_channel_over_the_batch_not_each_token():
    """Post-BN: every channel has mean 0 and variance 1 over batch x positions, so the mean squared token norm is d;
    single tokens are free to be longer or shorter (unlike LayerNorm, which pins each one to sqrt(d))."""
    cfg = TraceConfig(norm="batchnorm", norm_position="post", depth=4, init="xavier", **TINY)
    model = build_model(cfg)
    inputs, _ = make_batch(cfg)
    stream = model.connect(model.embed(inputs), model.blocks).detach().reshape(-1, 16)
    assert torch.allclose(stream.mean(0), torch.zeros(16), atol=1e-5)
    assert stream.pow(2).sum(-1).mean().item() == pytest.approx(16.0, rel=1e-3)
    assert stream.norm(dim=-1).std().item() > 0.05 * math.sqrt(16)


def by_hand_layernorm(x, norm):
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(
        x.var(-1, correction=0, keepdim=True) + norm.eps
    ) * norm.weight + norm.bias


def by_hand_attention(h, attn):
    q, k, v = (h @ attn.qkv.weight.T + attn.qkv.bias).chunk(3, dim=-1)  # one head: (T, C) each
    scores = q @ k.T / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), -math.inf)  # causal
    return torch.softmax(scores, dim=-1) @ v @ attn.out.weight.T + attn.out.bias


def by_hand_ffn(h, ffn):
    return F.gelu(h @ ffn.up.weight.T + ffn.up.bias) @ ffn.down.weight.T + ffn.down.bias


@pytest.mark.parametrize("position", ["pre", "post", "sandwich"])
def test_parallel_block_is_its_equation(position):
    """pre: x + attn(N(x)) + ffn(N(x)) with one shared N; post: N(x + attn(x) + ffn(x));
    sandwich: x + N_out(attn(N(x)) + ffn(N(x))). Checked with matrices written out on one 5-token sequence."""
    cfg = TraceConfig(
        block="parallel",
        norm_position=position,
        depth=1,
        d_model=8,
        n_heads=1,
        seq_len=5,
        vocab_size=8,
        init="gpt2" if position == "pre" else "xavier",
    )
    unit = build_model(cfg).double().blocks[0].units["parallel"]
    assert isinstance(unit, (PreNormUnit, PostNormUnit, SandwichUnit)) and isinstance(unit.branch, ParallelBranches)
    attn, ffn = unit.branch.attn, unit.branch.ffn
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(5), dtype=torch.float64)

    def both(h):
        return by_hand_attention(h, attn) + by_hand_ffn(h, ffn)

    expected = {
        "pre": lambda: x + both(by_hand_layernorm(x, unit.norm)),
        "post": lambda: by_hand_layernorm(x + both(x), unit.norm),
        "sandwich": lambda: x + by_hand_layernorm(both(by_hand_layernorm(x, unit.norm)), unit.out_norm),
    }[position]()
    assert torch.allclose(unit(x[None])[0], expected, atol=1e-10)


def test_parallel_and_sequential_blocks_differ_on_the_same_weights():
    """Same seed, same weights: the FFN reads attention's result only in the sequential block."""
    base = dict(depth=1, d_model=8, n_heads=1, seq_len=5, vocab_size=8)
    sequential = build_model(TraceConfig(block="sequential", **base)).double()
    parallel = build_model(TraceConfig(block="parallel", **base)).double()
    x = torch.randn(1, 5, 8, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    attn_unit, ffn_unit = sequential.blocks[0].units.values()
    shared = parallel.blocks[0].units["parallel"]
    assert isinstance(attn_unit, PreNormUnit) and isinstance(ffn_unit, PreNormUnit) and isinstance(shared, PreNormUnit)
    assert isinstance(shared.branch, ParallelBranches)
    with torch.no_grad():  # give the parallel block the sequential block's branches
        shared.branch.attn.load_state_dict(attn_unit.branch.state_dict())
        shared.branch.ffn.load_state_dict(ffn_unit.branch.state_dict())
        shared.norm.load_state_dict(attn_unit.norm.state_dict())
    after_attn = x + attn_unit.branch(attn_unit.norm(x))
    assert torch.allclose(sequential.blocks[0](x), after_attn + ffn_unit.branch(ffn_unit.norm(after_attn)), atol=1e-12)
    assert torch.allclose(parallel.blocks[0](x), after_attn + ffn_unit.branch(attn_unit.norm(x)), atol=1e-12)
    assert (parallel.blocks[0](x) - sequential.blocks[0](x)).abs().max() > 1e-3


@pytest.mark.parametrize("block", choices("block"))
@pytest.mark.parametrize("position", choices("norm_position"))
def test_dense_connection_equals_the_residual_stack_at_initialisation(position, block):
    base = dict(depth=5, norm_position=position, block=block, **TINY)
    dense, plain = (build_model(TraceConfig(residual=r, **base)) for r in ("dense", "identity"))
    inputs, _ = make_batch(TraceConfig(**base))
    assert torch.equal(dense(inputs), plain(inputs))
    traced = [run_trace(TraceConfig(residual=r, **base))["layers"] for r in ("dense", "identity")]
    assert [layer["grad_norm"] for layer in traced[0]] == [layer["grad_norm"] for layer in traced[1]]


def test_dense_connection_reads_a_weighted_average_of_every_earlier_output():
    cfg = TraceConfig(residual="dense", depth=3, **TINY)
    model = build_model(cfg).double()
    assert isinstance(model.connect, DenseConnection)
    averages = [average for average in model.connect.averages if isinstance(average, DepthWeightedAverage)]
    assert len(averages) == cfg.depth
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for average in averages:
            average.weights.copy_(torch.randn(average.weights.shape, generator=generator))
    x0 = model.embed(make_batch(cfg)[0])
    history, y = [x0], x0
    for block, average in zip(model.blocks, averages, strict=True):
        history.append(block(y))  # X_l = block_l(y_{l-1})
        y = sum(w * h for w, h in zip(average.weights, history, strict=True))  # y_l = sum_j w_lj X_j
    assert torch.allclose(model.connect(x0, model.blocks), y, atol=1e-12)


def real_parameters(cfg: TraceConfig) -> int:
    return sum(p.numel() for p in build_model(cfg).parameters())


@pytest.mark.parametrize("arch", choices("arch"))
@pytest.mark.parametrize("depth", [1, 6, 24])
def test_cost_model_counts_what_dense_and_highway_add(depth, arch):
    """The budget's estimates grow by exactly what the built model grows by: L(L+3)/2 dense weights (each one
    multiply-add per coordinate per token), and one d x d gate per unit (two units sequential, one parallel)."""
    for block in choices("block"):
        base = TraceConfig(arch=arch, depth=depth, block=block, **TINY)
        dense, highway = (base.model_copy(update={"residual": r}) for r in ("dense", "highway"))
        assert dense_weights(dense) == depth * (depth + 3) // 2
        assert real_parameters(dense) - real_parameters(base) == parameter_count(dense) - parameter_count(base)
        assert real_parameters(highway) - real_parameters(base) == parameter_count(highway) - parameter_count(base)
        tokens = base.batch * base.seq_len
        assert forward_macs(dense) - forward_macs(base) == tokens * base.d_model * dense_weights(dense)
