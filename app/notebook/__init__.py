"""The Python API for notebooks and scripts, in this process, no server: `import resnorm_explorer as rx`.

    t = rx.trace(depth=48, norm_position="post")   # TraceConfig's fields, validated as POST /api/trace does
    t.summary, t.layers, t.to_pandas(), t.figure()
    rx.compare(depth=24, norm_position=["post", "pre"]).figure()
    rx.sweep(1, 96).figure()
    rx.train("post_vs_pre").figure()
    rx.lecture.slide("snowball").figure()
    rx.lesson("softmax-sweep", logits=[5, 5, 5]).caption   # a lesson page's chart
    model = rx.build(depth=48)                     # the nn.Module rx.trace traces
    rx.real_trace(my_gpt2, token_ids).figure()     # a transformers model (or "minilm", "smollm2"): /models' charts

Every call computes under the server's torch settings and gives the caller's back (app/experiments/isolation.py).

fields   the keyword arguments: TraceConfig's fields, typed, strictly validated
strings  the API's own words, in English and Chinese (the memory budget of a call: app/config/machine.py)
traces   trace(), compare(), build(), batch(): Trace and Comparison objects, the model and its batch
sweeps   sweep(): depth sweeps with a progress bar
training train(): a /train preset, live in Jupyter
lecture  lecture.slide(id): a deck slide computed, its claim checked
lessons  lesson(chart, ...): a lesson page's chart and caption
real     real_trace(model, text_or_ids): a pretrained or the caller's own transformers model, /models' charts
charts   a builder's chart (app/figures/) as the plotly figure the page draws
export   save() and the figures that keep their charts in a notebook exported to HTML
"""

from __future__ import annotations

# the names `rx` gives (app/__init__.py's __all__, the one list of them), re-exported
from ..config import TraceConfig as TraceConfig
from . import lecture as lecture
from .lessons import Lesson as Lesson
from .lessons import lesson as lesson
from .real import real_trace as real_trace
from .sweeps import Sweep as Sweep
from .sweeps import sweep as sweep
from .traces import Comparison as Comparison
from .traces import Trace as Trace
from .traces import batch as batch
from .traces import build as build
from .traces import compare as compare
from .traces import trace as trace
from .training import Training as Training
from .training import train as train
