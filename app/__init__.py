"""ResNorm Explorer: why deep Transformers need residual connections and normalization.

Installed as `resnorm_explorer`; `import resnorm_explorer as rx` gives the Python API (app/notebook/), loaded on
first use, so importing the package stays fast and does not load torch.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
API = ("trace", "compare", "sweep", "train", "lecture", "real_trace", "Trace", "Comparison", "Sweep", "Training")
__all__ = list(API)


def __getattr__(name: str) -> Any:
    if name in API:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
