"""The torch settings every computation runs under, whoever calls it: the server's compute processes, `rx.trace`
in a researcher's notebook, the command line. `as_server()` sets them for the length of one call and gives the
caller's own back afterwards, so the numbers never depend on what the notebook set before, and the notebook never
finds its settings changed.

Why each one matters:
- intra-op threads: a float32 reduction split over two threads sums in another order (~1e-7 relative in float32,
  ~1e-4 in bfloat16), and on a busy machine extra OpenMP threads ran a trace 7-20x slower (app/services/processes.py);
- default dtype and device: the model is built by factory calls that read them;
- grad mode, inference mode, anomaly mode: a trace is one forward and one backward pass, which `torch.no_grad()`,
  `torch.set_grad_enabled(False)` or `torch.inference_mode()` (TransformerLens notebooks start with one) forbid;
- autocast and the float32 matmul precision: they change the number format of matrix products;
- deterministic algorithms: off on the server (a caller's `warn_only` setting is given back as it was);
- the global RNG (CPU and CUDA): building a module draws its default initialisation from it before our seeded
  generators overwrite the weights;
- os.environ: loading a pretrained model sets the Hugging Face offline variables, which would stop the caller's own
  `from_pretrained` from downloading;
- Python's cyclic garbage collector: paused for the call, as in the compute processes (app/services/processes.py).
  Building a depth-96 model allocates enough to start a full collection in about a third of the calls, which scans
  every object a notebook holds (torch's and the notebook's imports): rx.trace(depth=96) took a median 1.37x the
  compute process's time for the same trace, its own overhead 1.03x. Paused, nothing is collected during the call;
  cycles left behind are collected by the caller's next automatic collection once it is back on.

Interop threads are left alone: torch lets a process set them once, before any parallel work, so a value set here
could never be given back; they run independent operators side by side and do not change any number of a trace.
The compute processes, which are ours, pin them to one at start (`pin_interop_threads`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from typing import Any

SERVER_THREADS = 1  # intra-op threads of one run when nothing says otherwise, as in each compute process
SERVER_MATMUL_PRECISION = "highest"  # torch's default: float32 products in float32


def pin_interop_threads(threads: int = SERVER_THREADS) -> None:
    """One inter-op thread in a process of our own (possible only before torch's pools start)."""
    import torch

    with suppress(RuntimeError):
        torch.set_num_interop_threads(threads)


@contextmanager
def as_server(threads: int = SERVER_THREADS) -> Iterator[None]:
    """Compute under the server's torch settings with `threads` intra-op threads; restore the caller's on exit
    (also after an exception or Ctrl-C)."""
    import torch

    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads: a whole number of at least 1; got {threads!r}")
    saved = _capture(torch)
    gc.disable()
    try:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        torch.set_default_dtype(torch.float32)
        torch.set_float32_matmul_precision(SERVER_MATMUL_PRECISION)
        if saved["deterministic"]:  # only when set: the call imports torch._dynamo (~1 s), racing other imports
            torch.use_deterministic_algorithms(False)
        with ExitStack() as stack:
            for context in _server_contexts(torch):
                stack.enter_context(context)
            yield
    finally:
        _restore(torch, saved)


def _server_contexts(torch: Any) -> list[Any]:
    """The thread-local settings, each a context manager that gives the previous state back on exit."""
    cuda = torch.cuda.is_available()
    contexts = [
        torch.random.fork_rng(devices=list(range(torch.cuda.device_count())) if cuda else []),
        torch.inference_mode(False),
        torch.enable_grad(),
        torch.autocast("cpu", enabled=False),
        torch.autograd.set_detect_anomaly(False),
    ]
    if cuda:
        contexts.append(torch.autocast("cuda", enabled=False))
    if torch.get_default_device().type != "cpu":  # torch.set_default_device(...) or `with torch.device(...)`
        contexts.append(torch.device("cpu"))
    return contexts


def _capture(torch: Any) -> dict[str, Any]:
    return {
        "threads": torch.get_num_threads(),
        "dtype": torch.get_default_dtype(),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        "environ": dict(os.environ),
        "gc": gc.isenabled(),
    }


def _restore(torch: Any, saved: dict[str, Any]) -> None:
    if torch.get_num_threads() != saved["threads"]:
        torch.set_num_threads(saved["threads"])
    torch.set_default_dtype(saved["dtype"])
    torch.set_float32_matmul_precision(saved["matmul_precision"])
    if saved["deterministic"]:
        torch.use_deterministic_algorithms(True, warn_only=saved["deterministic_warn_only"])
    if saved["gc"]:
        gc.enable()
    environ = saved["environ"]
    for name in [name for name in os.environ if name not in environ]:
        del os.environ[name]
    for name, value in environ.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
