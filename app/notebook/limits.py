"""What a call in the researcher's own process may cost: this machine's memory, not the server's budget.

The server refuses models over its compute budget (app/config/budget.py) so a room of students keeps getting
answers; in a notebook the only one waiting is the caller, who can press Ctrl-C (every call keeps or drops its
work cleanly). What cannot be interrupted is running out of memory, so a call is refused when its estimate of
memory is above half of the machine's physical memory; `budget=None` runs it anyway, `budget="server"` applies the
server's own budget.
"""

from __future__ import annotations

import os
from typing import Literal

from ..config import TraceConfig, activation_floats, parameter_count

Budget = Literal["machine", "server"] | None
MACHINE_SHARE = 0.5  # of physical memory
RECORDED_BYTES = 4  # the recorder keeps each snapshot and its gradient in float32


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the OS does not say (then nothing is refused)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # Windows has no sysconf
        return None


def trace_bytes(cfg: TraceConfig) -> float:
    """Memory of one trace: weights, their gradients and their first (default) initialisation, and the activations
    autograd saves plus the recorder's copies of them (app/config/budget.py's generous counts)."""
    itemsize = 2 if cfg.dtype in ("bfloat16", "float16") else 4
    return 3 * parameter_count(cfg) * itemsize + activation_floats(cfg) * (itemsize + RECORDED_BYTES)


def check_machine(cfg: TraceConfig, budget: Budget) -> None:
    """ValueError naming depth when the estimate is over MACHINE_SHARE of this machine's memory."""
    memory = physical_memory()
    if budget != "machine" or memory is None:
        return
    need = trace_bytes(cfg)
    if need > MACHINE_SHARE * memory:
        raise ValueError(
            f"depth: this model needs about {need / 1e9:.3g} GB, more than half of this machine's "
            f"{memory / 1e9:.3g} GB of memory; lower depth, d_model, seq_len or batch, or pass budget=None to run it "
            "anyway"
        )
