"""`python -m tools.bench_real_claims`: the deck's and /models' real-model claims on every sentence of the built-in
set, and the set's measurements side by side.

tests/test_real_intervention.py checks the claims on three sentences in CI; this runs all sixteen (app/experiments/
real_sentences.py) through the packaged models in this process and prints, per sentence, the slides and the /models
captions (app/figures/real_set_checks.py) whose checks fail (none, for the deck and the page to be right), SmolLM2's
growth over 29 blocks, the blocks where the first token's norm is above 100x the others', the attention on it at the
first of them, MiniLM's pinned blocks and its [UNK] count; then the intervention's medians and the time each part
took. Exits 1 when a claim fails on any sentence.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(1)
    from app.experiments.lecture.slides_real import failures_on
    from app.experiments.real_set import set_answer
    from app.experiments.real_trace import trace_real
    from app.models.real.loading import load_model
    from app.models.real.sources import packaged_source
    from app.settings import get_settings

    found = {name: packaged_source(name) for name in ("minilm", "smollm2")}
    sources = {name: source for name, source in found.items() if source is not None}
    if len(sources) < len(found):
        print("the packaged models are not installed: nothing to check")
        return 0
    started = time.perf_counter()
    loaded = {name: load_model(source, get_settings().resolved_models_dir()) for name, source in sources.items()}
    print(f"loaded both models in {time.perf_counter() - started:.1f} s")
    traces: dict[tuple[str, str], dict[str, Any]] = {}

    def trace(model: str, text: str) -> dict[str, Any]:
        if (model, text) not in traces:
            traces[model, text] = trace_real(loaded[model], text)
        return traces[model, text]

    return _report(failures_on, trace, lambda: set_answer(loaded["smollm2"])["intervention"])


def _report(failures_on: Any, trace: Any, intervention: Any) -> int:
    from app.experiments.real_sentences import every_sentence
    from app.figures.real_set_checks import caption_failures

    failed = 0
    print(
        f"{'set':3} {'sentence':34} {'fails':14} {'growth':>7} {'ratio>100':>10} {'sink@':>6} {'pinned':>7} {'UNK':>7}"
    )
    started = time.perf_counter()
    for lang, text in every_sentence():
        fails = [slide for slide, names in failures_on(text, trace).items() if names]
        fails += [
            f"{model} {said}" for model, said_not in caption_failures(lang, text, trace).items() for said in said_not
        ]
        failed += bool(fails)
        smol, mini = trace("smollm2", text), trace("minilm", text)
        ratios = smol["summary"]["first_token_ratio"][1:]
        above = [b + 1 for b, r in enumerate(ratios) if r > 100]
        sink = smol["attention"]["mass"][above[0] - 1] if above else None
        pinned = [b + 1 for b, p in enumerate(mini["post_ln"]["pinned"]) if p]
        shown = text.replace("\n", "⏎")[:34]
        print(f"{lang:3} {shown:34} {','.join(fails) or 'none':14} {smol['theory']['growth']['over_blocks']:7.2f} "
              f"{f'{above[0]}-{above[-1]}' if above else '-':>10} {sink if sink is None else round(sink, 3)!s:>6} "
              f"{f'1-{pinned[-1]}' if pinned else '-':>7} {mini['unknown_tokens']:>3}/{len(mini['tokens']):<3}")  # fmt: skip
    print(f"claims on {len(every_sentence())} sentences: {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    found = intervention()
    medians = ", ".join(f"{name} {value:+.3f}" for name, value in found["median"].items())
    print(f"set and intervention (the site found from the set) at block {found['block']}, dimension {found['dimension']}: median change of the loss "
          f"{medians} nats ({time.perf_counter() - started:.1f} s)")  # fmt: skip
    print(f"{failed} sentence(s) with a failing claim")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
