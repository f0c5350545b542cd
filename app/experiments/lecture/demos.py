"""A training source's recording from its NDJSON lines, as the browser keeps it (static/js/lecture/sources.js,
sent back to GET/POST /api/lecture/slide while it trains): built here from the server's recorded runs. Running a slide's sources on the server is app/services/deck.py's job."""

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
    step = max((e["step"] for e in events if e.get("type") == "step"), default=0)
    finished = any(e.get("type") == "end" for e in events)
    return {"steps": start["steps"], "symbols": symbols, "step": step, "finished": finished, "runs": runs}
