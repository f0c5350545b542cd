"""What a call in the researcher's own process (`rx`, the command line) may cost: this machine's memory, not the
server's budget.

The server refuses models over its compute budget (app/config/budget.py) and training requests over its training
budget (app/experiments/train.py) so a room of students keeps getting answers; in a notebook or a shell the only
one waiting is the caller, who can press Ctrl-C (every call keeps or drops its work cleanly). What cannot be
interrupted is running out of memory, so a call is refused when its estimate of memory is above half of the
machine's physical memory; `budget=None` runs it anyway, `budget="server"` applies the server's own budgets.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .budget import activation_floats, parameter_count

if TYPE_CHECKING:
    from .request import TraceConfig

Budget = Literal["machine", "server"] | None
BUDGETS: tuple[Budget, ...] = ("machine", "server", None)
MACHINE_SHARE = 0.5  # of physical memory
RECORDED_BYTES = 4  # the recorder keeps each snapshot and its gradient in float32
# Floats per parameter an optimizer keeps besides the weights and gradients (Kingma & Ba 2015: Adam's two moments;
# SGD with momentum: one velocity)
OPTIMIZER_STATES = {"adam": 2, "adamw": 2, "sgd": 1}
ANYWAY = "pass budget=None to run it anyway"
TRACE_LOWER = "lower depth, d_model, seq_len or batch"


class TooLargeForMachine(ValueError):
    """A call refused before it starts: its memory estimate is over MACHINE_SHARE of this machine's memory.
    str() says it in the Python API's words; message(anyway) lets the command line name its own switch."""

    def __init__(self, field: str, subject: str, need: float, memory: int, lower: str) -> None:
        self.field, self.subject, self.need, self.memory, self.lower = field, subject, need, memory, lower
        super().__init__(self.message(ANYWAY))

    def message(self, anyway: str) -> str:
        return f"{self.field}: {self.reason(anyway)}"

    def reason(self, anyway: str) -> str:
        return (
            f"{self.subject} about {self.need / 1e9:.3g} GB, more than half of this machine's "
            f"{self.memory / 1e9:.3g} GB of memory; {self.lower}, or {anyway}"
        )


def check_budget(budget: object) -> None:
    if budget not in BUDGETS:
        raise ValueError(f"budget: one of 'machine', 'server', None; got {budget!r}")


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the OS does not say (then nothing is refused)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows has no sysconf
        return None


def _itemsize(cfg: TraceConfig) -> int:
    return 2 if cfg.dtype in ("bfloat16", "float16") else 4


def trace_bytes(cfg: TraceConfig) -> float:
    """Memory of one trace: weights, their gradients and their first (default) initialisation, and the activations
    autograd saves plus the recorder's copies of them (app/config/budget.py's generous counts)."""
    return 3 * parameter_count(cfg) * _itemsize(cfg) + activation_floats(cfg) * (_itemsize(cfg) + RECORDED_BYTES)


def training_bytes(runs: Sequence[TraceConfig], optimizer: str) -> float:
    """Memory of a training request: its runs train side by side (interleaved step by step), so every run's model,
    gradients, optimizer state and one step's activations (a probed step's recorded copies included) are held at
    once."""
    return sum(trace_bytes(cfg) + OPTIMIZER_STATES[optimizer] * parameter_count(cfg) * _itemsize(cfg) for cfg in runs)


def check_machine(cfg: TraceConfig, budget: Budget, field: str = "depth", subject: str = "this model needs") -> None:
    """TooLargeForMachine naming `field` when one trace's estimate is over MACHINE_SHARE of this machine's memory."""
    _refuse_over(trace_bytes(cfg), budget, field, subject, TRACE_LOWER)


def check_machine_training(runs: Sequence[TraceConfig], optimizer: str, budget: Budget) -> None:
    """The same for a training request, naming runs."""
    subject = "this run needs" if len(runs) == 1 else f"these {len(runs)} runs, trained side by side, need"
    lower = f"{TRACE_LOWER}{', or train fewer runs' if len(runs) > 1 else ''}"
    _refuse_over(training_bytes(runs, optimizer), budget, "runs", subject, lower)


def _refuse_over(need: float, budget: Budget, field: str, subject: str, lower: str) -> None:
    memory = physical_memory()
    if budget == "machine" and memory is not None and need > MACHINE_SHARE * memory:
        raise TooLargeForMachine(field, subject, need, memory, lower)
