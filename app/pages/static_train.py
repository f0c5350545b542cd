"""The training lab in a static site: each preset of /train as its recorded run, drawn by the page's two charts
(POST /api/figure/train-loss|train-profile, built in Python from the run the server recorded) and asked for exactly
as the page's script asks (static/js/pages/train.js: `presetPatch`, `chartsBody`), so a baked answer is found under
the key the browser computes (app/pages/static_views.py). app/cli/site.py records the runs first, through the deck's
recorder (app/services/deck.py `recorded_events`): a run the deck also shows is trained once.
"""

from __future__ import annotations

from typing import Any

from ..config import TraceConfig, presets_payload
from .registry import pages
from .static_views import Call, View, request_key, state_query_of
from .train import SETTINGS_FIELDS, SIZE_FIELDS

TRAIN_CHARTS = ("train-loss", "train-profile")
# The URL keys of /train that change the training request (the rest only change what is drawn: profile, scales).
TRAIN_KEYS = ("runs", *SETTINGS_FIELDS, *SIZE_FIELDS)


def train_defaults() -> dict[str, Any]:
    """The page's starting state over TRAIN_KEYS (train.js `PARAMS`: the first preset's runs, the settings, the
    sizes; clipping 0 stands for none)."""
    extra = pages()["train"].extra
    settings = extra["settings_defaults"]
    return {
        "runs": [run["kind"] for run in extra["presets"][0]["runs"]],
        **{name: settings[name] for name in SETTINGS_FIELDS},
        "clip": settings["clip"] or 0,
        **extra["size_defaults"],
    }


def preset_state(preset: dict[str, Any]) -> dict[str, Any]:
    """The state a preset's button sets (train.js `presetPatch`) over the page's defaults."""
    sizes = {name: preset["base"][name] for name in SIZE_FIELDS}
    patch = {**sizes, **preset["settings"], "clip": preset["settings"].get("clip") or 0}
    return {**train_defaults(), **patch, "runs": [run["kind"] for run in preset["runs"]]}


def request_body(state: dict[str, Any]) -> dict[str, Any]:
    """The body Start sends for a state (train.js `runConfigs`, `requestBody`): each run its architecture preset as
    /api/presets?depth= resolves it, on the state's sizes and seed, with the run kind's overrides."""
    kinds = {kind["key"]: kind for kind in pages()["train"].extra["kinds"]}
    archs = {p["key"]: p["config"] for p in presets_payload(TraceConfig(depth=state["depth"]))}
    sizes = {name: state[name] for name in SIZE_FIELDS}
    runs = [
        {**sizes, "seed": state["seed"], **archs[kinds[kind]["arch"]], **kinds[kind]["overrides"]}
        for kind in state["runs"]
    ]
    settings = {name: state[name] for name in SETTINGS_FIELDS}
    return {"runs": runs, **settings, "clip": state["clip"] if state["clip"] > 0 else None}


def train_views(langs: tuple[str, ...] = ("en",)) -> list[View]:
    """Every preset of /train: the presets the page resolves its runs with, the budget check, and both charts of
    the recorded run in each language (the training request with the run kinds that name the curves). The first
    preset is the page's default view."""
    views = []
    for preset in pages()["train"].extra["presets"]:
        state = preset_state(preset)
        body = request_body(state)
        charts = {**body, "kinds": state["runs"]}
        calls = (
            Call("GET", "/api/presets", {"depth": str(state["depth"])}),
            Call("POST", "/api/train/budget", body=body),
            *(Call("POST", f"/api/figure/{chart}", {"lang": lang}, charts) for chart in TRAIN_CHARTS for lang in langs),
        )
        query = state_query_of(train_defaults(), state)
        views.append(View("train", query, calls, label={"en": preset["name"], "zh": preset["name_zh"]}))
    return views


def trained_requests(views: list[View]) -> list[dict[str, Any]]:
    """The training requests (the charts' bodies without the run kinds) whose recorded runs the views draw, once each."""
    bodies = [
        {key: value for key, value in call.body.items() if key != "kinds"}
        for view in views
        for call in view.calls
        if call.path.removeprefix("/api/figure/") in TRAIN_CHARTS
    ]
    return list({request_key("POST", "/api/train", {}, body): body for body in bodies}.values())
