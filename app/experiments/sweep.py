"""A depth sweep: the same stack traced at many depths, for the depth x layer heatmap of gradient survival."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from ..config import TraceConfig, forward_macs

MAX_SWEEP_MACS = 1.2e11  # about a minute of a 2-core laptop: the default 1..96 sweep costs ~3.2e10
# CPUs have no fast float16 matmul: measured 2.6e8-5.9e8 multiply-adds/s against 1.7e9-5.5e9 in float32, so a
# float16 sweep at the budget ran ~3.5 min on one core. Counting each float16 multiply-add 3 times keeps it near
# a minute and still admits the default 1..96 sweep in float16 (bfloat16 ran within 2x of float32 here).
DTYPE_COST = {"float32": 1.0, "bfloat16": 1.0, "float16": 3.0}


class SweepRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    config: TraceConfig = Field(
        default_factory=TraceConfig, description="The base model; its depth is replaced by each swept depth."
    )
    depths: list[int] = Field(
        default_factory=lambda: list(range(1, 97)),
        min_length=1,
        max_length=128,
        description="Depths to trace, each 1..128 (default 1..96).",
    )

    @field_validator("depths")
    @classmethod
    def _depths_in_range(cls, depths: list[int]) -> list[int]:
        bad = [d for d in depths if not 1 <= d <= 128]
        if bad:
            raise ValueError(f"depths: every depth must be in 1..128; got {bad[:5]} | allowed: integers 1..128")
        return sorted(set(depths))

    @model_validator(mode="after")
    def _within_budget(self, info: ValidationInfo) -> SweepRequest:
        budget = (info.context or {}).get("budget", True)  # False: the notebook API, bounded by its own machine
        try:  # the deepest depth must itself be a valid, affordable trace
            TraceConfig.model_validate(
                {**self.config.model_dump(), "depth": max(self.depths)}, context={"budget": budget}
            )
        except ValidationError as exc:
            why = exc.errors()[0]["msg"].removeprefix("Value error, ")  # "d_model: 512 is too large ... | allowed: ..."
            raise ValueError(f"depths: depth {max(self.depths)} with this config: {why}") from None
        total = DTYPE_COST[self.config.dtype] * sum(forward_macs(self.config.with_depth(d)) for d in self.depths)
        if budget and total > MAX_SWEEP_MACS:
            raise ValueError(
                f"depths: the sweep is too large for this server: {total:.3g} > {MAX_SWEEP_MACS:.3g} "
                "multiply-adds; sweep fewer or smaller depths, or a smaller model"
                f" | allowed: total forward multiply-adds (x{DTYPE_COST['float16']:g} in float16)"
                f" <= {MAX_SWEEP_MACS:.3g}"
            )
        return self


def depth_row(trace: dict[str, Any]) -> dict[str, Any]:
    """What the heatmap needs from one depth's trace."""
    layers = trace["layers"]
    return {
        "depth": trace["config"]["depth"],
        "grad_norm": [layer["grad_norm"] for layer in layers],
        "act_norm": [layer["act_norm"] for layer in layers],
        "embedding_grad_norm": trace["embedding"]["grad_norm"],
        "grad_survival": trace["summary"]["grad_survival"],
        "norm_growth": trace["summary"]["norm_growth"],
        "nonfinite": trace["summary"]["nonfinite"],
        "loss": trace["loss"],
    }


class HeatmapRequest(SweepRequest):
    """The /gradients heatmap of a sweep: `depths` are the rows to draw (while a sweep streams, those done so far),
    `upto` the deepest depth the whole sweep reaches (the axes' extent), `relative` each row ÷ its last layer."""

    upto: int | None = Field(None, ge=1, le=128, description="The axes' deepest depth (default: the deepest row).")
    relative: bool = Field(True, description="Divide each row by its last layer's gradient.")
    partial: bool = Field(False, description="A redraw while the sweep streams (never with the CSV rows).")
    csv: bool = Field(False, description="With the exact CSV rows (about half the chart's bytes): for an export.")

    @model_validator(mode="after")
    def _upto_holds_the_rows(self) -> HeatmapRequest:
        if self.upto is not None and self.upto < max(self.depths):
            raise ValueError(f"upto: {self.upto} is below the deepest row {max(self.depths)} | allowed: >= max(depths)")
        return self


def heatmap_parts(req: HeatmapRequest) -> list[tuple[str, BaseModel]]:
    return [("trace", req.config.with_depth(depth)) for depth in req.depths]


def heatmap_answer(req: HeatmapRequest, *traces: dict[str, Any]) -> dict[str, Any]:
    """The rows the heatmap draws (depth_row of each trace), with the sweep's model and the axes' extent."""
    rows = [depth_row(trace) for trace in traces]
    upto = req.upto or max(req.depths)
    return heatmap_of(req.config.model_dump(), rows, upto, req.relative, req.partial, req.csv and not req.partial)


def heatmap_of(
    config: dict[str, Any],
    rows: list[dict[str, Any]],
    upto: int,
    relative: bool = True,
    partial: bool = False,
    csv: bool = False,
) -> dict[str, Any]:
    """What app/figures/heatmap.py draws: depth rows (depth_row's), the model whose row the caption describes (its
    config.depth; 0 names none), the axes' extent, the colour rule, whether this is a redraw on the way, and whether
    the chart carries its exact CSV rows (`csv`: an export asked for them)."""
    return {"config": config, "upto": upto, "relative": relative, "partial": partial, "csv": csv, "rows": rows}
