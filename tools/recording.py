"""What a development tool writes at the top of a recording it checks in: how to make it again and on what."""

from __future__ import annotations

import platform
import time
from typing import Any


def provenance(module: str, argv: list[str]) -> dict[str, Any]:
    """The command (python -m module with its arguments), the date, the torch and Python versions, and the one
    torch thread per run a server's training run has (settings.threads_per_run on two cores)."""
    import torch

    return {
        "command": " ".join(["python -m", module, *argv]),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads_per_run": 1,
    }
