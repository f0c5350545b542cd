"""A slide's claim: named values read from its sources' answers, and checks on them.

Evaluated on the server only: app/figures/slides.py fills the caption with the values measured on the slide's
answers and reports the checks that fail; tests/test_lecture.py asserts every check on the real API's answers.

values: name -> one of
  {"source": i, "path": "summary.grad_survival"}        a number (or a list, with [*] or a slice) from source i
  {"sources": [i, j], "path": "loss"}                    the same path in several sources: a list
  {"const": x}                                           a number computed when the deck is built (e.g. log 128)
  {"op": "ratio", "of": [a, b]}                          a / b (element by element for lists)
  {"op": "root", "of": a, "n": k}                        a ** (1 / k): the mean factor per step of a product
  {"op": "min" | "max", "of": a}                         of a list (null entries count as not finite: null)
  {"op": "first_over", "of": a, "bound": x}              the 1-based position of the first entry above x
  {"op": "last_over", "of": a, "bound": x}               the 1-based position where that first run above x ends
  {"op": "slice", "of": a, "start": n, "stop": m, "shift": k}
                                                         the entries at 1-based positions n + k … m (named values;
                                                         no stop: to the end): a range a statement names, so its
                                                         checks hold on every entry of the range
  {"op": "sumsq", "of": a}                               Σ a² over a list, a² for a number
  {"op": "add", "of": [a, b]}                            a + b
  {"op": "one_minus", "of": a}                           1 − a (how far a cosine is from 1)
  {"op": "words", "of": a, "words": {v: {"en", "zh"}}}   the words for value a (a verdict the answer computed from
                                                         its own numbers), so a caption's direction is the data's
checks: [{"value": name, "op": "<" | ">" | "between" | "close" | "==" | "null", "bound": x, "rel": r, "abs": a}]
  A list value (of lists: seeds × blocks) passes when every entry passes. null stands for a value that overflowed (strict JSON).
cases: [{"when": a check, "statement": {"en", "zh"}}]: the first case whose check holds gives the caption's words.
Paths: keys joined by dots; [i] (negative from the end), [*] every item, [a:b] a slice of items.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ...numbers import fmt


def read_path(data: Any, path: str) -> Any:
    """Follow a path such as 'layers[15:].token_cosine' or 'sweep[-1].max_prob' into an API answer."""
    parts = re.findall(r"[^.\[\]]+|\[[^\]]*\]", path)
    return _walk(data, parts)


def _walk(data: Any, parts: list[str]) -> Any:
    if not parts or data is None:
        return data
    head, rest = parts[0], parts[1:]
    if not head.startswith("["):
        return _walk(data.get(head) if isinstance(data, dict) else None, rest)
    inside = head[1:-1]
    if inside == "*" or ":" in inside:
        low, _, high = inside.partition(":") if inside != "*" else ("", "", "")
        items = data[slice(int(low) if low else None, int(high) if high else None)]
        return [_walk(item, rest) for item in items]
    index = int(inside)
    return _walk(data[index] if -len(data) <= index < len(data) else None, rest)


def evaluate(claim: dict[str, Any], answers: list[Any]) -> dict[str, Any]:
    """Every named value of a claim, computed from the answers of the slide's sources (in order)."""
    out: dict[str, Any] = {}
    for name, spec in claim["values"].items():
        out[name] = _value(spec, answers, out)
    return out


def _value(spec: dict[str, Any], answers: list[Any], known: dict[str, Any]) -> Any:
    if "const" in spec:
        return spec["const"]
    if "source" in spec:
        return read_path(answers[spec["source"]], spec["path"])
    if "sources" in spec:
        return [read_path(answers[i], spec["path"]) for i in spec["sources"]]
    op = spec["op"]
    if op == "ratio":
        top, bottom = (known[name] for name in spec["of"])
        return _elementwise(_divide, top, bottom)
    if op == "add":
        left, right = (known[name] for name in spec["of"])
        return None if left is None or right is None else left + right
    arg = known[spec["of"]]
    if op == "words":
        return spec["words"].get(arg)
    if op == "one_minus":
        return None if arg is None else 1.0 - arg
    if op == "sumsq":
        items = arg if isinstance(arg, list) else [arg]
        return None if any(v is None for v in items) else sum(v * v for v in items)
    if op == "root":
        return None if arg is None or arg < 0 else arg ** (1.0 / spec["n"])
    if op in ("min", "max"):
        items = _flatten(arg)
        return None if any(v is None for v in items) else (min(items) if op == "min" else max(items))
    if op == "first_over":
        return next((i + 1 for i, v in enumerate(arg) if v is not None and v > spec["bound"]), None)
    if op == "last_over":
        return _last_over(arg, spec["bound"])
    if op == "slice":
        start, stop = known[spec["start"]], known.get(spec.get("stop", ""))
        return None if start is None else arg[start - 1 + spec.get("shift", 0) : stop]
    raise ValueError(f"unknown value op {op!r}")


def _last_over(items: list[Any], bound: float) -> int | None:
    """The 1-based position of the last entry of the first run of entries above bound."""
    first = next((i for i, v in enumerate(items) if v is not None and v > bound), None)
    if first is None:
        return None
    last = first
    while last + 1 < len(items) and items[last + 1] is not None and items[last + 1] > bound:
        last += 1
    return last + 1


def _flatten(value: Any) -> list[Any]:
    """A list of lists (the same path in several sources) as one list."""
    return [v for item in value for v in _flatten(item)] if isinstance(value, list) else [value]


def _divide(top: float | None, bottom: float | None) -> float | None:
    if top is None or bottom is None or bottom == 0:
        return None
    return top / bottom


def _elementwise(fn, a: Any, b: Any) -> Any:
    if isinstance(a, list) and isinstance(b, list):
        return [fn(x, y) for x, y in zip(a, b, strict=True)]
    if isinstance(a, list):
        return [fn(x, b) for x in a]
    return fn(a, b)


def failures(claim: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    """The checks that do not hold, each as a sentence naming the value, what it should be and what it is."""
    return [
        f"{check['value']} {check['op']} {check.get('bound')}: measured {measured[check['value']]}"
        for check in _failing(claim, measured)
    ]


def failed_values(claim: dict[str, Any], measured: dict[str, Any]) -> list[str]:
    """The names of the values whose checks do not hold, each once, in the claim's order (empty: it holds)."""
    names = {check["value"] for check in _failing(claim, measured)}
    return [name for name in claim["values"] if name in names]


def _failing(claim: dict[str, Any], measured: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for check in claim["checks"]:
        items = _flatten(measured[check["value"]])  # a range (or the same range on several seeds): every entry
        if not items or not all(_passes(check, item) for item in items):
            out.append(check)
    return out


def _passes(check: dict[str, Any], value: Any) -> bool:
    op = check["op"]
    bound: Any = check.get("bound")  # a number, a [low, high] pair, or absent
    if op == "null":
        return value is None
    if value is None or isinstance(value, bool) != isinstance(bound, bool) or not math.isfinite(float(value)):
        return op == "==" and value == bound
    if op == "<":
        return value < bound
    if op == ">":
        return value > bound
    if op == "between":
        return bound[0] <= value <= bound[1]
    if op == "close":
        return math.isclose(value, bound, rel_tol=check.get("rel", 1e-9), abs_tol=check.get("abs", 0.0))
    if op == "==":
        return value == bound
    raise ValueError(f"unknown check op {op!r}")


PLACEHOLDER = re.compile(r"\{(\w+)(?:\|(\d+))?\}")
OVERFLOW = ("overflow", "溢出")  # a value that overflowed (null in strict JSON), in a caption or a chart's label


def format_number(value: Any, digits: int, lang: str) -> str:
    """A measured number in the site's one format (app/numbers.py) with `digits` significant digits (0: an integer);
    no number (an overflow in strict JSON) said in words."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):  # words chosen by a value (the "words" op)
        return str(value[lang])
    if value is None or not math.isfinite(value):
        return OVERFLOW[1] if lang == "zh" else OVERFLOW[0]
    return fmt(value, digits=digits, lang=lang)


def chosen(claim: dict[str, Any], measured: dict[str, Any]) -> dict[str, str]:
    """The statement these numbers call for: the first of the claim's `cases` whose check holds on them, else its
    own statement."""
    for case in claim.get("cases", []):
        if not _failing({"checks": [case["when"]]}, measured):
            return case["statement"]
    return claim["statement"]


def statement(claim: dict[str, Any], measured: dict[str, Any], lang: str) -> str:
    """The claim's statement in lang (or the case the numbers call for), each {name} or {name|digits} replaced by
    the measured value."""
    return PLACEHOLDER.sub(
        lambda m: format_number(measured[m[1]], int(m[2] or 3), lang) if m[1] in measured else m[0],
        chosen(claim, measured)[lang],
    )
