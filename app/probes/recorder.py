"""Watches a Stack through hooks and turns what it saw into per-layer statistics.

Hooks only keep references (no arithmetic while the model runs); all statistics are computed
afterwards in a few vectorised ops, which keeps tracing nearly free. Every handle is removed on exit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from ..models.residuals import BRANCH_ARG
from ..models.stack import Stack
from ..models.tree import parameters_with_owner

SMALL_GRADIENT = 4096  # numbers: gradients up to this size are stacked by shape before their norms are taken
CHUNK_FLOATS = 2**18  # numbers reduced at once (1 MB in float32): the copies stay in the L2 cache and memory is bounded


@dataclass(frozen=True)
class Snapshot:
    """One point where the recorder reads the residual stream: after the embedding, or after one unit of a block."""

    name: str  # the key of acts, branches and grads: "embed", "1.attn", "1.ffn", ...
    layer: int  # 0: the embedding; l: block l (1-based)
    unit: str  # "embed", or the unit's key in its block: "attn", "ffn", "unit", "mlp"


@dataclass
class StreamRecorder:
    """Context manager: `with StreamRecorder(model) as rec: loss = model.loss(...); loss.backward()`; then read
    `rec.acts`, `rec.branches` and `rec.grads` by snapshot name, in the order of `rec.snapshots`.

    Hook points, as the models declare them: a unit whose output is its combine's (`returns_combine`, Pre-LN and
    Sandwich) gets one hook on the combine, which sees the stream, the branch output (`args[BRANCH_ARG]`) and the
    result at once (each forward hook puts a module on PyTorch's slower call path: one per unit instead of two,
    ~2 ms of a depth-96 trace); the others (Post-LN: N(x + f)) get a hook on the unit and one on its combine."""

    model: Stack
    snapshots: list[Snapshot] = field(default_factory=list)
    acts: dict[str, torch.Tensor] = field(default_factory=dict)
    branches: dict[str, torch.Tensor] = field(default_factory=dict)
    grads: dict[str, torch.Tensor] = field(default_factory=dict)  # d loss / d snapshot, read on exit
    _streams: dict[str, torch.Tensor] = field(default_factory=dict)  # the same snapshots, still in the graph
    _handles: list = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [snapshot.name for snapshot in self.snapshots]

    def block_outputs(self) -> list[Snapshot]:
        """The embedding and each block's last snapshot (the stream a block hands on), in order."""
        last = {snapshot.layer: snapshot for snapshot in self.snapshots}  # later units overwrite earlier ones
        return [last[layer] for layer in sorted(last)]

    def __enter__(self) -> StreamRecorder:
        self._watch(Snapshot("embed", 0, "embed"), self.model.embed)
        for layer, block in enumerate(self.model.blocks, start=1):
            for unit_name, unit in block.units.items():
                snapshot = Snapshot(f"{layer}.{unit_name}", layer, unit_name)
                combine = unit.get_submodule("combine")  # every unit has one (app/models/units.py)
                if unit.returns_combine:  # one hook sees both: combine(x, f) is the unit's output
                    self.snapshots.append(snapshot)
                    self._handles.append(combine.register_forward_hook(self._combine_hook(snapshot.name)))
                else:
                    self._watch(snapshot, unit)
                    self._handles.append(combine.register_forward_pre_hook(self._branch_hook(snapshot.name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()
        # The gradients backward left on the snapshots (none without a path to the loss, or without backward).
        self.grads = {name: stream.grad for name, stream in self._streams.items() if stream.grad is not None}
        self._streams.clear()

    def _watch(self, snapshot: Snapshot, module: nn.Module) -> None:
        self.snapshots.append(snapshot)
        self._handles.append(module.register_forward_hook(self._output_hook(snapshot.name)))

    def _output_hook(self, name: str):
        def hook(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
            self.acts[name] = output.detach()
            if output.requires_grad:
                output.retain_grad()  # kept by autograd itself: no Python call per snapshot during backward
                self._streams[name] = output

        return hook

    def _combine_hook(self, name: str):
        output_hook = self._output_hook(name)

        def hook(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
            self.branches[name] = args[BRANCH_ARG].detach()
            output_hook(module, args, output)

        return hook

    def _branch_hook(self, name: str):
        def hook(module: nn.Module, args: tuple) -> None:
            self.branches[name] = args[BRANCH_ARG].detach()

        return hook


@dataclass(frozen=True)
class ChunkReductions:
    """What every statistic of a chunk of snapshots (N, B, T, C) is reduced from, each computed once."""

    x: torch.Tensor  # (N, B, T, C)
    token_norm: torch.Tensor  # (N, B, T): each token vector's L2 norm
    token_max_abs: torch.Tensor  # (N, B, T): each token vector's largest |coordinate|
    token_min_abs: torch.Tensor  # (N, B, T): and its smallest


@dataclass(frozen=True)
class Statistic:
    """One statistic of a stream snapshot, declared once: its name in stream_statistics' answer, its key in the
    trace's JSON (app/experiments/trace.py) and its reduction to one number per snapshot."""

    name: str
    json_key: str
    reduce: Callable[[ChunkReductions], torch.Tensor]  # -> (N,)


STREAM_STATISTICS: tuple[Statistic, ...] = (
    Statistic("norm", "act_norm", lambda r: r.token_norm.mean(dim=(1, 2))),  # mean token L2 norm
    Statistic("rms", "act_rms", lambda r: (r.token_norm.pow(2).mean(dim=(1, 2)) / r.x.shape[-1]).sqrt()),
    Statistic("max_abs", "act_max_abs", lambda r: r.token_max_abs.amax(dim=(1, 2))),  # what overflows
    Statistic("cosine", "token_cosine", lambda r: _mean_pairwise_cosine(r.x, r.token_max_abs)),
    Statistic("token_max_abs", "token_max_abs", lambda r: r.token_max_abs.mean(dim=(1, 2))),
    Statistic("token_min_abs", "token_min_abs", lambda r: r.token_min_abs.mean(dim=(1, 2))),
)
STREAM_FIELDS = tuple(statistic.name for statistic in STREAM_STATISTICS)


def stream_statistics(tensors: list[torch.Tensor]) -> dict[str, list[float]]:
    """Per snapshot, every statistic of STREAM_STATISTICS: mean token L2 norm, global RMS, max |x|, mean pairwise
    token cosine, and the mean over tokens of each token vector's largest and smallest |coordinate| (how far apart
    one vector's entries drift)."""
    chunk = max(1, CHUNK_FLOATS // tensors[0].numel())  # 32 snapshots at the default sizes
    table = torch.cat(
        [
            _float32_or_float64(_chunk_statistics, torch.stack(tensors[start : start + chunk])).double()
            for start in range(0, len(tensors), chunk)
        ],
        dim=1,
    )  # (fields, N)
    return dict(zip(STREAM_FIELDS, table.tolist(), strict=True))


def _float32_or_float64(reduce: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """reduce(x) in float32; again in float64 when a snapshot whose entries are all finite overflowed float32's sum
    of squares (bfloat16 and float32 streams reach 3e38; a later snapshot that is inf/NaN does not hide it)."""
    result = reduce(x.float())
    if not torch.isfinite(result).all():
        finite_entries = torch.isfinite(x).flatten(1).all(dim=1)  # (N,)
        finite_results = torch.isfinite(result).reshape(-1, x.shape[0]).all(dim=0)  # (N,)
        if (finite_entries & ~finite_results).any():
            result = reduce(x.double())
    return result


def _chunk_statistics(x: torch.Tensor) -> torch.Tensor:
    """(N, B, T, C) -> (fields, N), in a few passes over x (each pass over all 193 snapshots costs ~0.5 ms)."""
    magnitude = x.abs()
    reductions = ChunkReductions(
        x=x,
        token_norm=torch.linalg.vector_norm(x, dim=-1),
        token_max_abs=magnitude.amax(dim=-1),  # aminmax is 18x slower
        token_min_abs=magnitude.amin(dim=-1),
    )
    return torch.stack([statistic.reduce(reductions) for statistic in STREAM_STATISTICS])


def _mean_pairwise_cosine(x: torch.Tensor, peak: torch.Tensor) -> torch.Tensor:
    """Mean cosine similarity over pairs of distinct positions of one sequence, averaged over the batch.

    With unit vectors u_t, the sum over pairs s != t of u_s.u_t is ||sum_t u_t||^2 - sum_t ||u_t||^2,
    so no T x T matrix is needed. Each token is first divided by its largest |entry| (`peak`): a vanishing stream
    (entries near 1e-30) would otherwise underflow its squared norm to 0 and give "unit" vectors of any length.
    """
    tokens = x.shape[-2]
    if tokens < 2:
        return torch.full(x.shape[:1], float("nan"), dtype=x.dtype)
    scaled = x / torch.where(peak > 0, peak, 1.0).unsqueeze(-1)  # a zero token stays 0; inf/NaN stay NaN: flagged
    lengths = torch.linalg.vector_norm(scaled, dim=-1).clamp_min(1.0)  # a nonzero row's norm is >= 1
    unit_sum = (lengths.reciprocal().unsqueeze(-2) @ scaled).squeeze(-2)  # (N, B, C): sum_t u_t, one product
    unit_lengths = (peak > 0).sum(dim=-1)  # sum of ||u_t||^2: 1 per nonzero token
    pairs = unit_sum.pow(2).sum(dim=-1) - unit_lengths  # (N, B)
    return (pairs / (tokens * (tokens - 1))).mean(dim=1)


def token_norm_means(tensors: list[torch.Tensor | None]) -> list[float]:
    """Mean token L2 norm of each tensor; a missing gradient (no path to the loss) counts as 0."""
    present = [t for t in tensors if t is not None]
    values = iter(_mean_token_norms(torch.stack(present)).tolist() if present else ())
    return [next(values) if t is not None else 0.0 for t in tensors]


def branch_norms(branches: list[torch.Tensor], per_block: int) -> tuple[list[float], list[float]]:
    """Mean token norm of each branch output, and of each block's branch outputs summed (blocks in order)."""
    stacked = torch.stack(branches)  # (units, B, T, C)
    per_unit = _mean_token_norms(stacked)
    blocks = stacked.view(-1, per_block, *stacked.shape[1:]).sum(dim=1) if per_block > 1 else stacked
    per_block_norms = _mean_token_norms(blocks) if per_block > 1 else per_unit
    return per_unit.tolist(), per_block_norms.tolist()


def _mean_token_norms(x: torch.Tensor) -> torch.Tensor:
    """(N, B, T, C) -> (N,): the mean token L2 norm of each snapshot."""
    return _float32_or_float64(lambda y: torch.linalg.vector_norm(y, dim=-1).mean(dim=(1, 2)), x)


def parameter_grad_norms(model: nn.Module, groups: list[nn.Module]) -> list[float]:
    """L2 norm of the gradient of all parameters of each of `groups` (disjoint modules inside `model`), from one
    walk over the model and one fused norm over every gradient."""
    parameters, owners = parameters_with_owner(model, groups)
    return grad_norms_by_owner(parameters, owners, len(groups))


def grad_norms_by_owner(parameters: list[nn.Parameter], owners: list[int], groups: int) -> list[float]:
    """L2 norm of the gradients of the parameters owned by each of `groups` groups (owner -1: no group).

    The weights' norms in one fused call; the small gradients (biases, norm gains, scalar gates: ~800 of a depth-96
    model's ~1,150) stacked by shape, one norm per shape instead of one per tensor (~2 us each)."""
    large: list[torch.Tensor] = []
    large_owner: list[int] = []
    small: dict[torch.Size, tuple[list[torch.Tensor], list[int]]] = {}
    for p, index in zip(parameters, owners, strict=True):
        grad = p.grad
        if grad is None or index < 0:
            continue
        if grad.numel() > SMALL_GRADIENT:
            large.append(grad)
            large_owner.append(index)
        else:
            grads, owner = small.setdefault(grad.shape, ([], []))
            grads.append(grad)
            owner.append(index)
    squares = torch.zeros(groups, dtype=torch.float64)
    if large:
        if large[0].dtype != torch.float32:  # a float16 norm overflows at 65504
            large = [g.float() for g in large]
        squares.index_add_(0, torch.tensor(large_owner), torch.stack(torch._foreach_norm(large)).double().square())
    for grads, owner in small.values():
        stacked = torch.stack(grads).reshape(len(grads), -1).float()
        squares.index_add_(0, torch.tensor(owner), torch.linalg.vector_norm(stacked, dim=1).double().square())
    return squares.sqrt().tolist()
