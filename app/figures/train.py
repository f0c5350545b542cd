"""/train's loss chart: every run's training loss per optimizer step on one chart, the uniform guess ln(symbols) as a
thin grey reference under the curves (in the legend, never a label on the data), a divergence marked where it
happened; the caption states each finished run's own numbers and how the server got them (trained now, in how many
seconds, or replayed from a run it had recorded).

A streaming chart: while a run trains, `stream.ChartStream` sends this chart once and then a patch per step that
only extends the curves and the CSV rows (`extend`), so the browser never rebuilds it. The deck's training slides
draw their curves with `loss_figure` too (app/figures/slides.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..experiments.train_presets import RUN_KINDS
from .chart import Chart, ChartKind, Json, diff, y_scales
from .style import GREY, PALETTE, SERIES, finish, finite, layout, line, reference, theme_of
from .words import fmt, say, sentences

STRINGS: dict[str, tuple[str, str]] = {
    "chart.train_loss.title": ("Training loss on the answer tokens", "答案词元上的训练损失"),
    "chart.train_loss.x": ("Optimizer step", "优化步数"),
    "chart.train_loss.y": ("Cross-entropy loss (nats)", "交叉熵损失（奈特）"),
    "chart.train_loss.chance": ("uniform guess: ln {symbols} = {value}", "均匀猜测：ln {symbols} = {value}"),
    "chart.train_loss.diverged": ("diverged", "发散"),
    "chart.train_loss.idle": (
        "Not trained yet: choose the runs and settings, then press Start.",
        "尚未训练：选择要训练的模型和设置，然后按“开始训练”。",
    ),
    "caption.train_loss": (
        "Loss on the second half only (the first half is random and cannot be predicted). "
        "A curve that stays on the thin grey line (the loss of a uniform guess) means the model learned nothing.",
        "只计算后半段的损失（前半段是随机的，无法预测）。停在灰色细线（均匀猜测的损失）上的曲线表示模型什么也没学到。",
    ),
    "caption.train_loss.trained": (
        "Trained here for {steps} steps in {seconds} s.",
        "在本服务器上训练了 {steps} 步，用时 {seconds} 秒。",
    ),
    "caption.train_loss.replayed": (
        "Replayed at once: this server had trained these runs before ({steps} steps in {seconds} s).",
        "直接回放：本服务器之前训练过这些模型（{steps} 步，用时 {seconds} 秒）。",
    ),
    "caption.train_loss_done": (
        "{label}: final loss {loss} (uniform guess {chance}), held-out accuracy {accuracy} per token ({whole} of "
        "answers fully right).",
        "{label}：最终损失 {loss}（均匀猜测为 {chance}），留出集上逐词元准确率 {accuracy}（整句全对的比例为 {whole}）。",
    ),
    "caption.train_loss_diverged": (
        "{label}: diverged at step {step} (loss or gradient became inf/NaN).",
        "{label}：在第 {step} 步发散（损失或梯度变成 inf/NaN）。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


@dataclass(frozen=True)
class Curve:
    """One run's loss curve as drawn: its name and colour, its steps and losses, and where it diverged (or None)."""

    name: str
    color: str
    steps: Sequence[int]
    loss: Sequence[float | None]
    diverged_step: int | None = None


def label(answer: Json, run: int, lang: str) -> str:
    """A run's name: "1. " and its /train run kind's label, or (no kinds given) its position, norm and depth."""
    kinds = answer.get("kinds")
    if kinds:
        name = RUN_KINDS[kinds[run]]["label_zh" if lang == "zh" else "label"]
    else:
        cfg = answer["configs"][run]
        name = f"{cfg['norm_position']}-{cfg['norm']}, L={cfg['depth']}"
    return f"{run + 1}. {name}"


def chance(symbols: int) -> float:
    """The loss of a uniform guess over the data alphabet: ln(symbols) nats."""
    return math.log(symbols)


def idle(fig: Json, note: str, theme: str) -> Json:
    """A chart before any run: its titles, no made-up ticks on the axes, and what to do."""
    lay = fig["layout"]
    for name in ("xaxis", "yaxis"):
        lay[name].update(showticklabels=False, showgrid=False, ticks="")
    lay["annotations"].append(
        {"xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False, "text": note,
         "font": {"size": theme_of(theme)["font"], "color": PALETTE["blue"]}}
    )  # fmt: skip
    return finish(fig, theme)


def loss_figure(
    curves: Sequence[Curve], steps: int, symbols: int, title: str, theme: str, lang: str, note: str | None = None
) -> Json:
    """The loss curves on a log axis from step 0 to `steps`: the uniform guess first (drawn under the curves), then
    one curve per run (trace 1 + its index: what a stream's patches extend), then the divergence marks. With
    `note` (nothing trained yet): the empty chart saying so."""
    fig: Json = {
        "data": [],
        "layout": layout(theme, title, text("chart.train_loss.x", lang), text("chart.train_loss.y", lang), ylog=True),
    }
    if note is not None:
        return idle(fig, note, theme)
    guess = reference(theme, text("chart.train_loss.chance", lang, symbols=symbols, value=fmt(chance(symbols), lang)),
                      [0, steps], chance(symbols), GREY)  # fmt: skip
    guess["line"]["width"] = max(1.0, theme_of(theme)["line"] * 0.4)
    guess["hoverinfo"] = "skip"
    fig["data"].append(guess)
    fig["data"] += [line(theme, c.name, c.steps, c.loss, c.color, markers=False) for c in curves]
    for c in curves:
        if c.diverged_step is not None:
            last = next((v for v in reversed(finite(c.loss)) if v is not None), None)
            fig["data"].append(
                {"type": "scatter", "mode": "markers+text", "x": [c.diverged_step], "y": [last], "showlegend": False,
                 "marker": {"symbol": "x", "size": 16, "color": c.color}, "text": [text("chart.train_loss.diverged", lang)],
                 "textposition": "top center", "hoverinfo": "skip"}
            )  # fmt: skip
    fig["layout"]["xaxis"]["range"] = [0, steps]
    return finish(fig, theme)


def curves(answer: Json, lang: str) -> list[Curve]:
    out = []
    for i, run in enumerate(answer["runs"]):
        done = run["done"] or {}
        out.append(Curve(label(answer, i, lang), SERIES[i % len(SERIES)], run["steps"], run["loss"],
                         done.get("diverged_step") if done.get("diverged") else None))  # fmt: skip
    return out


def figure(answer: Json, lang: str, theme: str) -> Json:
    note = None if answer["started"] else text("chart.train_loss.idle", lang)
    title = text("chart.train_loss.title", lang)
    return loss_figure(curves(answer, lang), answer["steps"], answer["symbols"], title, theme, lang, note)


def percent(value: float | None, lang: str) -> str:
    return "—" if value is None else f"{fmt(100 * value, lang)}%"


def claim(answer: Json) -> Json:
    """What the caption states: per run its end (diverged where, or its final loss and held-out accuracies), the
    uniform guess, and whether the whole request ended here or was replayed from the server's recording. A run's
    numbers are stated once the request ended, or at once where it diverged."""
    runs = []
    for run in answer["runs"]:
        done = run["done"]
        shown = done is not None and (answer["ended"] or done["diverged"])
        runs.append({"run": run["run"], "done": shown,
                     **({k: done.get(k) for k in ("diverged", "diverged_step", "steps_done", "final_loss", "eval_loss",
                                                  "accuracy", "sequence_accuracy")} if shown else {})})  # fmt: skip
    seconds = None if answer["elapsed_ms"] is None else answer["elapsed_ms"] / 1000
    return {"runs": runs, "uniform_guess": chance(answer["symbols"]), "symbols": answer["symbols"],
            "ended": answer["ended"], "replayed": answer["cached"], "seconds": seconds}  # fmt: skip


def caption(answer: Json, facts: Json, lang: str) -> str:
    parts = [text("caption.train_loss", lang)]
    if facts["ended"] and facts["seconds"] is not None:
        how = "caption.train_loss.replayed" if facts["replayed"] else "caption.train_loss.trained"
        parts.append(text(how, lang, steps=answer["steps"], seconds=fmt(facts["seconds"], lang)))
    guess = fmt(facts["uniform_guess"], lang)
    for run in facts["runs"]:
        if not run["done"]:
            continue
        name = label(answer, run["run"], lang)
        if run["diverged"]:
            parts.append(text("caption.train_loss_diverged", lang, label=name, step=run["diverged_step"]))
        else:
            parts.append(text("caption.train_loss_done", lang, label=name, loss=fmt(run["final_loss"], lang),
                              chance=guess, accuracy=percent(run["accuracy"], lang),
                              whole=percent(run["sequence_accuracy"], lang)))  # fmt: skip
    return sentences(parts, lang)


def row(answer: Json, run: int, k: int) -> Json:
    """Run `run`'s k-th recorded step as a CSV row."""
    r = answer["runs"][run]
    kind = answer["kinds"][run] if answer.get("kinds") else None
    return {"run": run + 1, "kind": kind, "step": r["steps"][k], "loss": r["loss"][k], "grad_norm": r["grad_norm"][k],
            "lr": r["lr"][k]}  # fmt: skip


def rows(answer: Json) -> list[Json]:
    """Every recorded step of every run, in the order the stream sent them (step by step, run by run)."""
    index = [(step, run, k) for run, r in enumerate(answer["runs"]) for k, step in enumerate(r["steps"])]
    return [row(answer, run, k) for _, run, k in sorted(index)]


def build(answer: Json, lang: str = "en") -> Chart:
    """The loss chart of a /train answer (app/experiments/train_answer.py), in lang."""
    facts = claim(answer)
    normal, slide = figure(answer, lang, "normal"), figure(answer, lang, "slide")
    patches = {
        "slide": diff(normal, slide),
        **y_scales(),
    }
    return Chart("train-loss", normal, caption(answer, facts, lang), facts, rows(answer), patches)


CHART = ChartKind("train-loss", "train", build, STRINGS)
