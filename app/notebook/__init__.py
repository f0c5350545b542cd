"""The Python API for notebooks and scripts, in this process, no server: `import resnorm_explorer as rx`.

    t = rx.trace(depth=48, norm_position="post")   # TraceConfig's fields, validated as POST /api/trace does
    t.summary, t.layers, t.to_pandas(), t.figure()
    rx.compare(depth=24, norm_position=["post", "pre"]).figure()
    rx.sweep(1, 96).figure()
    rx.train("post_vs_pre").figure()
    rx.lecture.slide("snowball").figure()

traces   trace(), compare(): Trace and Comparison objects
sweeps   sweep(): depth sweeps with a progress bar
training train(): a /train preset, live in Jupyter
lecture  lecture.slide(id): a deck slide computed, its claim checked
figures  the pages' charts as plotly figures
"""

from __future__ import annotations

from . import lecture
from .real import real_trace as real_trace
from .sweeps import Sweep, sweep
from .traces import Comparison, Trace, compare, trace
from .training import Training, train

__all__ = ["Comparison", "Sweep", "Trace", "Training", "compare", "lecture", "sweep", "trace", "train"]
