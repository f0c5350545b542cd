"""A training source's recording from its NDJSON lines, as the browser keeps it (static/js/lecture/sources.js,
sent back to GET/POST /api/lecture/slide while it trains): built here from the server's recorded runs. Running a slide's sources on the server is app/services/deck.py's job."""

from __future__ import annotations

from typing import Any

from ..train_curves import answer_from_events, last_step


def recording_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the browser builds from the NDJSON lines (static/js/lecture/sources.js): per run its loss curve and
    its `done` event; `steps` and `symbols` (the data alphabet: ln symbols is the uniform guess). The curves are
    app/experiments/train_curves.py's, as /train's charts read them."""
    answer = answer_from_events(events)
    runs = [{key: run[key] for key in ("run", "steps", "loss", "done")} for run in answer["runs"]]
    return {"steps": answer["steps"], "symbols": answer["symbols"], "step": last_step(answer),
            "finished": answer["ended"], "runs": runs}  # fmt: skip
