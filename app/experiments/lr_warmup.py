"""Post-LN against Pre-LN over a grid of learning rates × warm-up lengths: the deck's training slide ("warm-up helps
Post-LN, partly") asked at one point, here over sixteen (Xiong et al. 2020: Post-LN needs warm-up; Liu et al. 2020).

Each cell is one POST /api/train request of the training slide's kind (the 12-block 2017 recipe, the copy task, 300
Adam steps, seed 0) with its own learning rate and warm-up, so the cell at lr 10⁻³ without warm-up is the training
slide's own request. Thirty-two runs take minutes, too long for a request: tools/lr_warmup_grid.py trains them and
records the final losses in app/experiments/lecture/data/lr_warmup.json with its command, versions, seeds and date;
GET /api/recorded?name=lr_warmup answers that recording, and a test trains one cell again and compares.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..config import TraceConfig
from .train import TrainRequest, train_events
from .train_presets import DEEP, SETTINGS, kind_config

KINDS = ("post_ln", "pre_ln_2017")  # Post-LN, and Pre-LN on the same 2017 recipe as the reference
LRS = (1e-4, 3e-4, 1e-3, 3e-3)
WARMUPS = (0, 30, 100, 300)  # linear warm-up steps, of 300 (300: the whole run is the ramp)
RECORDING = Path(__file__).resolve().parent / "lecture" / "data" / "lr_warmup.json"
SYMBOLS = DEEP["vocab_size"] - 1  # the copy task's symbols: a uniform guess costs ln 15 nats


def cell_request(lr: float, warmup_steps: int) -> TrainRequest:
    """The training request of one cell: both kinds side by side, the training slide's settings."""
    base = TraceConfig(**DEEP)
    return TrainRequest(
        runs=[kind_config(kind, base) for kind in KINDS], **{**SETTINGS, "lr": lr, "warmup_steps": warmup_steps}
    )


def run_cell(lr: float, warmup_steps: int) -> dict[str, Any]:
    """Train one cell; what the recording keeps of it: per kind the last step's loss, the held-out loss and the
    whole-answer accuracy, and whether the run diverged."""
    done = {e["run"]: e for e in train_events(cell_request(lr, warmup_steps)) if e["type"] == "done"}
    runs = []
    for index, kind in enumerate(KINDS):
        event = done[index]
        runs.append(
            {
                "kind": kind,
                "final_loss": event["final_loss"] if math.isfinite(event["final_loss"]) else None,
                "eval_loss": event["eval_loss"],
                "sequence_accuracy": event["sequence_accuracy"],
                "diverged": event["diverged"],
            }
        )
    return {"lr": lr, "warmup_steps": warmup_steps, "runs": runs}


class RecordedRequest(BaseModel):
    """GET /api/recorded?name=: a result recorded by a development tool into checked-in data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Literal["lr_warmup"]


def grid_answer(recording: dict[str, Any]) -> dict[str, Any]:
    """The recording as the deck reads it: per kind a matrix of final losses (rows: warm-ups, columns: learning
    rates), the cell the training slide trains, and each kind's best cell."""
    cells = {(c["lr"], c["warmup_steps"]): c for c in recording["cells"]}
    lrs, warmups = recording["lrs"], recording["warmups"]
    kinds: dict[str, Any] = {}
    for index, kind in enumerate(recording["kinds"]):
        loss = [[cells[(lr, w)]["runs"][index]["final_loss"] for lr in lrs] for w in warmups]
        flat = [(v, lr, w) for w, row in zip(warmups, loss, strict=True) for lr, v in zip(lrs, row, strict=True)]
        best = min((item for item in flat if item[0] is not None), default=(None, None, None))
        kinds[kind] = {
            "final_loss": loss,  # [warm-up][learning rate]
            "all": [v for v, _, _ in flat],  # the same, row after row
            "best": {"final_loss": best[0], "lr": best[1], "warmup_steps": best[2]},
        }
    return {**recording, "recorded": True, "uniform_guess": math.log(SYMBOLS), "grid": kinds}


def recorded_answer(req: RecordedRequest) -> dict[str, Any]:
    return grid_answer(json.loads(RECORDING.read_text(encoding="utf-8")))


def recorded_key(req: RecordedRequest) -> str:
    """Cached under the recording's content: a new recording is never answered from an old one's cache."""
    return f"recorded:{req.name}:{hashlib.sha256(RECORDING.read_bytes()).hexdigest()[:16]}"
