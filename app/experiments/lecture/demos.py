"""What the browser builds from a training source's NDJSON lines (static/js/lecture/sources.js), redone in Python
for the tests and the offline deck. Running a slide's sources on the server is app/services/deck.py's job."""

from __future__ import annotations

from typing import Any


def recording_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the browser builds from the NDJSON lines (static/js/lecture/sources.js): per run its loss curve and
    its `done` event; `steps` and `symbols` (the data alphabet: ln symbols is the uniform guess)."""
    start = events[0]
    runs = [{"run": r["run"], "steps": [], "loss": [], "done": None} for r in start["runs"]]
    for event in events:
        if event.get("type") == "step":
            runs[event["run"]]["steps"].append(event["step"])
            runs[event["run"]]["loss"].append(event["loss"])
        elif event.get("type") == "done":
            runs[event["run"]]["done"] = event
    symbols = start["runs"][0]["config"]["vocab_size"] - 1
    return {"steps": start["steps"], "symbols": symbols, "runs": runs}
