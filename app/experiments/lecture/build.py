"""Small constructors that keep the slide data readable: every text is an (English, Chinese) pair."""

from __future__ import annotations

from typing import Any


def pair(en: str, zh: str) -> dict[str, str]:
    return {"en": en, "zh": zh}


def slide(
    id: str,
    title: tuple[str, str],
    text: tuple[str, str],
    notes: tuple[str, str],
    chart: dict[str, Any] | None,
    claim: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    """One slide. extra: equation (one line, both languages read it), code (one line of Python),
    qa (why / what / how / cost), aside (an analogy), departs (the first line of a slide not on the reference model,
    reference.departs), offline_text (the lead the offline file shows instead of text), predict (a question shown alone
    first: the slide's text and chart appear on the next key press), in both languages."""
    for key in ("aside", "departs", "offline_text", "predict"):
        if key in extra:
            extra[key] = pair(*extra[key])
    return {
        "id": id,
        "title": pair(*title),
        "text": pair(*text),
        "notes": pair(*notes),
        "chart": chart,
        "claim": claim,
        **extra,
    }


def chart(
    kind: str, title: tuple[str, str], sources: list[dict[str, Any]], explorer: str, **more: Any
) -> dict[str, Any]:
    """kind: how app/figures/slides.py draws the answers; sources: the API requests, in order.
    labels (train): one (English, Chinese) name per run, in the order of the sources' runs."""
    if "labels" in more:
        more["labels"] = [label if isinstance(label, dict) else pair(*label) for label in more["labels"]]
    return {"kind": kind, "title": pair(*title), "sources": sources, "explorer": explorer, **more}


def series(
    source: int, field: str, label: tuple[str, str], color: str, dash: str = "solid", panel: int = 0
) -> dict[str, Any]:
    """One line: `field` per layer of source `source` (a trace: the embedding as layer 0, then every block)."""
    return {"source": source, "field": field, "label": pair(*label), "color": color, "dash": dash, "panel": panel}


def panel(y: tuple[str, str], log: bool = False, **more: Any) -> dict[str, Any]:
    return {"y": pair(*y), "log": log, **more}


def claim(
    statement: tuple[str, str],
    values: dict[str, Any],
    checks: list[dict[str, Any]],
    cases: list[tuple[dict[str, Any], tuple[str, str]]] | None = None,
) -> dict[str, Any]:
    """statement: the caption, with {name} (3 significant digits) or {name|k} (k digits) filled by measured values.
    cases: (a check, another statement) pairs; the first whose check holds on the measured values is the caption
    instead (words that follow the numbers, e.g. a slide whose control lets the lecturer type the input)."""
    out = {"statement": pair(*statement), "values": values, "checks": checks}
    if cases:
        out["cases"] = [{"when": when, "statement": pair(*words)} for when, words in cases]
    return out


def read(source: int, path: str) -> dict[str, Any]:
    return {"source": source, "path": path}


def const(value: float) -> dict[str, Any]:
    return {"const": value}


def op(name: str, of: Any, **more: Any) -> dict[str, Any]:
    return {"op": name, "of": of, **more}


def check(value: str, op: str, bound: Any = None, **tolerance: float) -> dict[str, Any]:
    return {"value": value, "op": op, "bound": bound, **tolerance}


TRY_DEPTHS = (12, 24, 48, 96)  # the depths a slide's "try it" control offers


def option(key: str, label: tuple[str, str], chart: dict[str, Any], claim: dict[str, Any]) -> dict[str, Any]:
    """One setting of a slide's "try it" control: its own requests (chart) and its own checked caption (claim)."""
    return {"key": key, "label": pair(*label), "chart": chart, "claim": claim}


def try_it(
    label: tuple[str, str], options: list[dict[str, Any]], default: str, vector: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A control inside the slide that switches among `options` (each computed live, or baked offline); the slide's
    own chart and claim are the default option's. Every option's claim is checked like a slide's.
    vector: the live deck also takes typed numbers ({"length", "min", "max", "explorer": the page link they are
    appended to}); the option they make is built on the server (lecture.TYPED_OPTIONS), the offline file offers only
    `options`."""
    keys = [o["key"] for o in options]
    if default not in keys or len(set(keys)) != len(keys):
        raise ValueError(f"try_it: default {default!r} must be one of the distinct keys {keys}")
    out = {"label": pair(*label), "options": options, "default": default}
    return {**out, "vector": vector} if vector else out


def qa(why: tuple[str, str], what: tuple[str, str], how: str, cost: tuple[str, str]) -> dict[str, Any]:
    """The lesson's question-and-answer shape: the problem, a one-line definition, one line of code, the price."""
    return {"why": pair(*why), "what": pair(*what), "how": how, "cost": pair(*cost)}
