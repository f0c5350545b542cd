"""The sentence set through one model: each sentence's trace reduced to what the set's charts draw, the median and
min-max band per set, and the intervention on the massive coordinate (real_intervention.py).

The server answers the set in parts, as its other composite requests: each sentence's trace is a request of its own
(cached, and short, so that other pages' requests pass between them), `set_of` combines them, and the intervention
(`set_intervention`, one batched job) is cached under the weights' digest. `set_answer` does it all in this process
(the notebook); `own_intervention` adds the reader's sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models.real.loading import LoadedModel
from .real_intervention import PATCHES, Site, intervene, massive_site, medians
from .real_sentences import SENTENCES, bands, every_sentence, spread, summarise
from .real_trace import TraceOptions, tokenize, trace_encoded

# The set's traces need no gradient (its charts draw the stream, the first token and the attention on it): a
# SmolLM2 trace without one takes about a third of the time.
SET_OPTIONS = TraceOptions(gradients=False, attention=True)


def set_of(model: dict[str, Any], traces: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The set's answer without the intervention: traces are (set language, trace) in every_sentence()'s order."""
    rows = [summarise(trace, lang) for lang, trace in traces]
    return {
        "model": model,
        "sentences": {lang: list(texts) for lang, texts in SENTENCES.items()},
        "rows": rows,
        "bands": bands(rows),
        "growth": {lang: spread([r["growth"] for r in rows if r["lang"] == lang]) for lang in SENTENCES},
    }


def intervention_site(the_set: dict[str, Any]) -> tuple[Site | None, str | None]:
    """(where the intervention acts, or None; why not: "encoder" or "no_massive")."""
    if not the_set["model"]["causal"]:
        return None, "encoder"
    site = massive_site(the_set["rows"])
    return site, None if site else "no_massive"


def set_intervention(loaded: LoadedModel, site: Site) -> dict[str, Any]:
    """Every sentence of the set with the coordinate at `site` (block, dimension) set to its mean over the set, to 0
    and to an ordinary token's value: each sentence's change of its next-token loss, and the medians."""
    encodings = [tokenize(loaded, text, SET_OPTIONS) for _, text in every_sentence()]
    values, changes = intervene(loaded, encodings, site)
    rows = [
        {"lang": lang, "text": text, **change} for (lang, text), change in zip(every_sentence(), changes, strict=True)
    ]
    return {
        "block": site[0],
        "dimension": site[1],
        "values": values,
        "patches": list(PATCHES),
        "rows": rows,
        "median": medians(rows),
        **{f"median_{lang}": medians([r for r in rows if r["lang"] == lang]) for lang in SENTENCES},
        "paper": "Sun et al. 2024",
    }


def with_intervention(the_set: dict[str, Any], found: dict[str, Any] | None, absent: str | None) -> dict[str, Any]:
    return {**the_set, "intervention": found, "intervention_absent": absent}


def set_answer(loaded: LoadedModel) -> dict[str, Any]:
    """The whole set in this process: every sentence's trace, the bands and the intervention."""
    traces = [
        (lang, trace_encoded(loaded, text, tokenize(loaded, text, SET_OPTIONS), SET_OPTIONS))
        for lang, text in every_sentence()
    ]
    the_set = set_of(loaded.describe(), traces)
    site, absent = intervention_site(the_set)
    return with_intervention(the_set, set_intervention(loaded, site) if site else None, absent)


def own_intervention(loaded: LoadedModel, text: str, found: dict[str, Any] | None) -> dict[str, Any] | None:
    """The reader's sentence under the set's patches (the same block, coordinate and values); None where the set
    has no intervention (an encoder, no massive coordinate)."""
    if found is None:
        return None
    encoded = tokenize(loaded, text, SET_OPTIONS)
    _, (change,) = intervene(loaded, [encoded], (found["block"], found["dimension"]), found["values"])
    return {"lang": "own", "text": text, **change}
