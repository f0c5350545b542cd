"""The sentence set through one loaded model: each sentence's trace reduced to what the set's charts draw, the
median and min-max band per set, and the intervention on the massive coordinate (real_intervention.py).

`set_answer` is a function of the model's weights alone (the set is built in), so it is computed once per model and
cached under the weights' digest; `own_answer` adds the reader's sentence to it (its trace is the page's own).
"""

from __future__ import annotations

from typing import Any

from ..models.pretrained.loading import LoadedModel
from .real_intervention import PATCHES, intervene, massive_site, medians
from .real_sentences import SENTENCES, bands, every_sentence, spread, summarise
from .real_trace import TraceOptions, tokenize, trace_encoded

# The set's traces need no gradient (its charts draw the stream, the first token and the attention on it): a
# SmolLM2 trace without one takes about a third of the time.
SET_OPTIONS = TraceOptions(gradients=False, attention=True)


def set_answer(loaded: LoadedModel) -> dict[str, Any]:
    """Every sentence of the set: its summary, the bands, and (a causal model with a massive coordinate) the
    change of its next-token loss when that coordinate is set to its mean, to 0, or to an ordinary token's."""
    rows, encodings = [], []
    for lang, text in every_sentence():
        encoded = tokenize(loaded, text, SET_OPTIONS)
        rows.append(summarise(trace_encoded(loaded, text, encoded, SET_OPTIONS), lang))
        encodings.append(encoded)
    return {
        "model": loaded.describe(),
        "sentences": {lang: list(texts) for lang, texts in SENTENCES.items()},
        "rows": rows,
        "bands": bands(rows),
        "growth": {lang: spread([r["growth"] for r in rows if r["lang"] == lang]) for lang in SENTENCES},
        **_intervention(loaded, rows, encodings),
    }


def _intervention(loaded: LoadedModel, rows: list[dict[str, Any]], encodings: list[dict]) -> dict[str, Any]:
    if not loaded.causal:
        return {"intervention": None, "intervention_absent": "encoder"}
    site = massive_site(rows)
    if site is None:
        return {"intervention": None, "intervention_absent": "no_massive"}
    values, changes = intervene(loaded, encodings, site)
    per_sentence = [
        {"lang": row["lang"], "text": row["text"], **change} for row, change in zip(rows, changes, strict=True)
    ]
    return {
        "intervention": {
            "block": site[0],
            "dimension": site[1],
            "values": values,
            "patches": list(PATCHES),
            "rows": per_sentence,
            "median": medians(per_sentence),
            "paper": "Sun et al. 2024",
        },
        "intervention_absent": None,
    }


def own_intervention(loaded: LoadedModel, text: str, the_set: dict[str, Any]) -> dict[str, Any] | None:
    """The reader's sentence under the set's patches (the same block, coordinate and values); None where the set
    has no intervention (an encoder, no massive coordinate)."""
    found = the_set["intervention"]
    if found is None:
        return None
    encoded = tokenize(loaded, text, SET_OPTIONS)
    _, (change,) = intervene(loaded, [encoded], (found["block"], found["dimension"]), found["values"])
    return {"lang": "own", "text": text, **change}
