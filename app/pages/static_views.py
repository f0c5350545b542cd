"""What a static site of the lesson bakes: every view of a page (its default, and each preset at each chosen depth),
the HTTP requests that view's script makes, and the key a baked answer is found under.

A key is the request as the page's fetch layer sends it (static/js/viewkeys.js `requestKey`): method, path, query and
JSON body, written as canonical JSON the way JavaScript writes it (sorted keys, numbers as `JSON.stringify` does), so
Python and the browser agree on it without either parsing the other's numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..config import PRESETS, TraceConfig, presets_payload
from ..experiments.grad_profile import BAND
from .registry import pages

# The pages with model controls whose presets are baked, and the URL keys beyond the model's fields that change what
# they request (display-only keys, such as an axis scale, never change a request and never make a view unbaked).
PRESET_PAGES = ("norms", "gradients", "compare")
DATA_KEYS: dict[str, tuple[str, ...]] = {
    "norms": (),
    "gradients": ("sweep_to",),
    "compare": ("variants", "changes_1", "changes_2", "changes_3", "changes_4"),
}


@dataclass(frozen=True)
class Call:
    """One HTTP request a page's script makes: what the fetch layer looks up."""

    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None
    stream: bool = False  # NDJSON: the answer is its list of lines
    optional: bool = (
        False  # a pretrained model that may be missing on the building machine: the page then needs the server
    )

    @property
    def key(self) -> str:
        return request_key(self.method, self.path, self.query, self.body)


@dataclass(frozen=True)
class View:
    """One baked view of a page: its URL state (only what differs from the page's defaults) and its requests."""

    page: str
    query: dict[str, str]
    calls: tuple[Call, ...]
    preset: str = ""  # the preset it shows ("" for the page's default view)
    label: dict[str, str] | None = None  # its name in a link ({"en", "zh"}) where a preset's name does not say it


def js_number(value: float) -> str:
    """A number as JavaScript's `String(n)` / `JSON.stringify` writes it: integral values without '.0', plain decimals
    from 1e-7 to 1e21, else 1.5e-7 / 1e+21."""
    if not math.isfinite(value):
        return "null"
    if float(value).is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(float(value))
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = int(exponent)
    if -7 < power < 21:
        return format(Decimal(text), "f")
    return f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def canonical(value: Any) -> str:
    """Canonical JSON as static.js writes it: sorted keys, no spaces, numbers in JavaScript's spelling."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = sorted(value.items())
        return "{" + ",".join(f"{canonical(str(k))}:{canonical(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    raise TypeError(f"not JSON: {type(value).__name__}")


def request_key(method: str, path: str, query: dict[str, str], body: Any) -> str:
    return canonical({"method": method.upper(), "path": path, "query": dict(query), "body": body})


def url_value(value: Any) -> str:
    """A URL state value as static/js/state.js `formatValue` writes it."""
    if isinstance(value, list | tuple):
        return ",".join(url_value(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    return str(value)


def page_state(page: str) -> dict[str, Any]:
    """The page's default state over the model's fields: TraceConfig's defaults under the page's own (Page.defaults)."""
    defaults = pages()[page].defaults
    return {name: defaults.get(name, info.default) for name, info in TraceConfig.model_fields.items()}


def apply_preset(state: dict[str, Any], preset: str, defaults: dict[str, Any]) -> dict[str, Any]:
    """A preset on top of a state (static/js/presets.js `patchFor`, `configFor`): every field any preset sets back to
    its default, then the preset's own values as /api/presets?depth= resolves them; sizes, seed and dtype kept."""
    resolved = {p["key"]: p["config"] for p in presets_payload(TraceConfig(depth=state["depth"]))}
    fields = {name for config in resolved.values() for name in config}
    return {**state, **{name: defaults[name] for name in fields}, **resolved[preset]}


def preset_state(page: str, preset: str, depth: int) -> dict[str, Any]:
    """The state a page shows after choosing `depth` and then the preset."""
    return apply_preset({**page_state(page), "depth": depth}, preset, page_state(page))


def state_query(page: str, state: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, str]:
    """Only what differs from the page's defaults, as the URL has it."""
    return {**state_query_of(page_state(page), state), **{k: url_value(v) for k, v in (extra or {}).items()}}


def state_query_of(base: dict[str, Any], state: dict[str, Any]) -> dict[str, str]:
    """The URL query of `state` on a page whose defaults are `base` (static/js/state.js `toQuery`)."""
    return {k: url_value(v) for k, v in state.items() if not _same(v, base.get(k))}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return bool(a == b)


def trace_call(config: TraceConfig) -> Call:
    return Call("POST", "/api/trace", body=config.model_dump())


def budget_call(config: TraceConfig) -> Call:
    return Call("POST", "/api/budget", body=config.model_dump())


def view_calls(
    page: str, state: dict[str, Any], langs: tuple[str, ...], sweep_to: int | None = None
) -> tuple[Call, ...]:
    """The requests a page's script makes for a state: the budget check (static/js/page.js), then its charts'
    (/gradients: its sweep up to `sweep_to`, by default the page's; 0: the model's depth)."""
    config = TraceConfig(**state)
    calls = [budget_call(config), Call("GET", "/api/presets", {"depth": str(config.depth)})]
    if page == "norms":  # static/js/pages/norms.js: the chart built in Python, in the page's language
        calls += [Call("POST", "/api/figure/norms", {"lang": lang}, config.model_dump()) for lang in langs]
    elif page == "gradients":  # static/js/pages/gradients.js: the profile (one seed, then the band), the sweep
        if sweep_to is None:
            sweep_to = int(pages()[page].defaults.get("sweep_to", 0))
        sweep_to = sweep_to or config.depth
        sweep = {"config": config.model_dump(), "depths": list(range(1, sweep_to + 1))}
        calls += [
            Call("POST", "/api/figure/gradients", {"lang": lang}, {"config": config.model_dump(), "seeds": seeds})
            for lang in langs
            for seeds in (1, BAND)
        ]
        calls.append(Call("POST", "/api/sweep", {"rows": "false"}, sweep, stream=True))
        calls += [  # drawn, and as its CSV and JSON exports ask for it (with the exact rows)
            Call(
                "POST", "/api/figure/grad-heatmap", {"lang": lang}, {**sweep, "upto": sweep_to, "relative": heat, **csv}
            )
            for lang in langs
            for heat in (True, False)
            for csv in ({}, {"csv": True})
        ]
    elif page == "compare":  # static/js/pages/compare.js: each variant a preset on the state's sizes, one chart
        variants = [
            {
                "key": preset,
                "changes": "",
                "config": TraceConfig(**apply_preset(state, preset, page_state("compare"))).model_dump(),
            }
            for preset in pages()[page].defaults["variants"]
        ]
        calls += [Call("POST", "/api/figure/compare", {"lang": lang}, {"variants": variants}) for lang in langs]
    return tuple(calls)


def home_view(langs: tuple[str, ...]) -> View:
    """The tour's thumbnail (static/js/pages/home.js): two traces, sent with only depth and position."""
    depth = pages()["home"].defaults["depth"]
    return View("home", {}, tuple(Call("POST", "/api/figure/tour", {"lang": lang}, {"depth": depth}) for lang in langs))


def lesson_state(page: str, schema_key: str = "schema") -> dict[str, Any]:
    """A lesson page's starting values (static/js/lessons.js `scalarSpecs`): its schema's defaults under its own."""
    props = pages()[page].extra[schema_key]
    return {name: pages()[page].defaults.get(name, p.get("default")) for name, p in props.items()}


def lesson_views(langs: tuple[str, ...]) -> dict[str, list[View]]:
    """Each lesson's default view, its requests as its page script sends them (static/js/pages/<lesson>.js)."""
    state = {k: v for k, v in lesson_state("chain").items() if k in ("derivative", "depth")}
    chain = [Call("POST", "/api/figure/chain", {"lang": lang}, state) for lang in langs]
    numbers = {k: v for k, v in lesson_state("precision").items() if k in ("big", "small")}
    stack = lesson_state("precision", "stack")
    precision = [Call("POST", "/api/figure/precision-overflow", {"lang": lang}, {**numbers, **stack}) for lang in langs]
    soft = lesson_state("softmax")
    scales = pages()["softmax"].extra["sweep_scales"]
    soft_body = {"logits": soft["logits"], "scale": soft["scale"], "scales": scales}
    softmax = [
        Call("POST", f"/api/figure/{chart}", {"lang": lang}, soft_body)
        for chart in ("softmax-probs", "softmax-sweep")
        for lang in langs
    ]
    norm = lesson_state("layernorm")  # the page sends γ = 1 and β = 0 (its sliders start there)
    layernorm = [
        Call("POST", f"/api/figure/{chart}", {"lang": lang}, body)
        for chart, body in (
            ("layernorm", {"x": norm["x"], "gamma": 1, "beta": 0, "eps": norm["eps"]}),
            ("layernorm-geometry", {"x": norm["x"], "gamma": 1, "beta": 0, "eps": norm["eps"]}),
            ("norm-speed", {}),
        )
        for lang in langs
    ]
    sizes = {k: v for k, v in lesson_state("batchnorm").items() if k != "norm"}
    batch = [
        Call("POST", f"/api/figure/{chart}", {"lang": lang}, sizes)
        for chart in ("batch-dependence", "batch-padding")
        for lang in langs
    ]
    found = {"chain": chain, "precision": precision, "softmax": softmax, "layernorm": layernorm, "batchnorm": batch}
    return {page: [View(page, {}, tuple(calls))] for page, calls in found.items()}


def models_view(langs: tuple[str, ...] = ("en",), sentences: tuple[str, ...] = ()) -> list[View]:
    """/models' views (static/js/pages/models.js): the built-in sentence, then each of `sentences`, with every chart
    in each language (the body its request kind takes), the token count of the models shown and the model list; none
    when this machine has no real models. A sentence is data: `resnorm-explorer site --sentences FILE` reads and
    checks them (app/cli/site.py)."""
    extra = pages()["models"].extra
    if not extra["ready"] or not extra["default_model"]:
        return []
    texts = list(dict.fromkeys([extra["default_text"], *sentences]))
    views = []
    for text in texts:
        query = {} if text == extra["default_text"] else {"text": text}
        label = None if not query else {"en": text, "zh": text}
        views.append(View("models", query, models_calls(text, langs), label=label))
    return views


def models_calls(text: str, langs: tuple[str, ...]) -> tuple[Call, ...]:
    """What /models asks for one sentence: each chart's figure, the shown models' token counts, the model list."""
    extra = pages()["models"].extra
    model, compare = extra["default_model"], extra["default_compare"]

    def body(kind: str) -> dict[str, str]:
        return (
            {"model": model, "compare": compare, "text": text}
            if kind == "real_pair"
            else {"model": model, "text": text}
        )

    calls = [
        Call("POST", f"/api/figure/{key}", {"lang": lang}, body(kind), optional=True)
        for key, kind in extra["charts"].items()
        for lang in langs
    ]
    calls += [
        Call("POST", "/api/real_tokens", body={"model": name, "text": text}, optional=True)
        for name in (model, compare)
        if name != "none"
    ]
    calls.append(Call("GET", "/api/real_models", optional=True))
    return tuple(calls)


def model_views(page: str, depths: tuple[int, ...], langs: tuple[str, ...]) -> list[View]:
    """A page's default view and every preset at every chosen depth."""
    views = [View(page, {}, view_calls(page, page_state(page), langs))]
    for depth in depths:
        for preset in PRESETS:
            state = preset_state(page, preset, depth)
            views.append(View(page, state_query(page, state), view_calls(page, state, langs), preset))
    return views
