"""A training source's recording from its NDJSON events: what a training slide's chart and claim read, from the
server's finished runs or from a run still training (POST /api/lecture/slide/<id>/train). Running a slide's sources
on the server is app/services/deck.py's job."""

from __future__ import annotations

from typing import Any

from ..train_curves import answer_from_events, last_step


def recording_from_events(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The events so far as a slide reads them: per run its loss curve and its `done` event; `steps` and `symbols`
    (the data alphabet: ln symbols is the uniform guess). The curves are app/experiments/train_curves.py's, as
    /train's charts read them."""
    answer = answer_from_events(events)
    runs = [{key: run[key] for key in ("run", "steps", "loss", "done")} for run in answer["runs"]]
    return {"steps": answer["steps"], "symbols": answer["symbols"], "step": last_step(answer),
            "finished": answer["ended"], "runs": runs}  # fmt: skip
