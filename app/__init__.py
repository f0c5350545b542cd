"""ResNorm Explorer: why deep Transformers need residual connections and normalization.

Installed as `resnorm_explorer`; `import resnorm_explorer as rx` gives the Python API (app/notebook/, docs/python.md),
loaded on first use, so importing the package stays fast and does not load torch.
"""

from __future__ import annotations

import typing

__version__ = "0.1.0"
# The notebook API's names (app/notebook/__init__.py's __all__; tests/test_notebook.py checks they agree).
__all__ = [
    "Comparison",
    "Lesson",
    "Sweep",
    "Trace",
    "TraceConfig",
    "Training",
    "batch",
    "build",
    "compare",
    "lecture",
    "lesson",
    "real_trace",
    "sweep",
    "trace",
    "train",
]

if typing.TYPE_CHECKING:  # what a type checker and an editor see; at run time __getattr__ loads them on first use
    from .notebook import (
        Comparison,
        Lesson,
        Sweep,
        Trace,
        TraceConfig,
        Training,
        batch,
        build,
        compare,
        lecture,
        lesson,
        real_trace,
        sweep,
        trace,
        train,
    )


def __getattr__(name: str) -> typing.Any:
    if name in __all__:
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return [*__all__, "__version__"]
