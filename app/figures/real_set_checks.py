"""What /models' captions say of the two packaged models on every sentence of the built-in set (docs/models.md, "A
set of sentences"), as checks on each chart's claim: the words a caption chooses are a function of its claim, so a
claim that holds is a caption that says the same thing on that sentence.

Checked on three sentences of the set in CI (tests/test_real_packaged.py) and on all sixteen by `make bench`
(tools/bench_real_claims.py), like the deck's real-model claims (slides_real.failures_on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import real_charts

Json = dict[str, Any]
# (chart, what its caption says, (claim, set language) -> holds); a measurement the claim lacks fails its check
Check = tuple[str, str, Callable[[Json, str], bool]]

SMOLLM2: list[Check] = [
    ("models-tokens", "no [UNK] token", lambda c, _: c.get("unknown") == 0),
    ("models-gradient", "the gradient follows the norm's 1/‖x‖", lambda c, _: c.get("follows_norm") == "follows"),
    ("models-sink", "the massive activation from block 12 on", lambda c, _: c.get("massive_blocks", [])[:1] == [12]),
    (
        "models-dims",
        "dimension 507 of the first token meets Sun et al.'s criterion",
        lambda c, _: (c.get("dimension"), c.get("token"), c.get("massive")) == (507, 0, True),
    ),
    (
        "models-dims",
        "written by block 12's MLP, taken down by block 29's",
        lambda c, _: (
            [c.get(k) for k in ("written_block", "written_by", "removed_block", "removed_by")] == [12, "mlp", 29, "mlp"]
        ),
    ),
]
MINILM: list[Check] = [
    ("models-tokens", "[UNK] tokens in Chinese only", lambda c, lang: (c.get("unknown", 0) > 0) == (lang == "zh")),
    ("models-branches", "pinned in blocks 1-3 at least", lambda c, _: {1, 2, 3} <= set(c.get("pinned_blocks", []))),
    ("models-sink", "no massive activation", lambda c, _: c.get("massive_blocks") == []),
    ("models-dims", "no coordinate meets Sun et al.'s criterion", lambda c, _: c.get("massive") is False),
]
CHECKS = {"smollm2": SMOLLM2, "minilm": MINILM}


def caption_failures(lang: str, text: str, trace: Callable[[str, str], Json]) -> dict[str, list[str]]:
    """Per model, what its captions should say of `text` (a sentence of the set in language `lang`) and do not;
    trace(model, text) answers as POST /api/real_trace does."""
    kinds = {kind.key: kind for kind in real_charts()}
    out: dict[str, list[str]] = {}
    for model, checks in CHECKS.items():
        answer = trace(model, text)
        claims = {key: kinds[key].build(answer, "en").claim for key in {key for key, _, _ in checks}}
        out[model] = [f"{key}: {said}" for key, said, holds in checks if not holds(claims[key], lang)]
    return out
