"""/train's per-layer chart: each run's latest per-layer snapshot (taken every few steps while it trains): the
gradient reaching each layer's stream, the weight gradient of each block, or the stream's norm (views named after
the quantity). The caption gives each run's layer-1 ÷ last-layer gradient and its verdict (the /gradients
rule, app/figures/gradients.py) at the snapshot's step."""

from __future__ import annotations

from .chart import Chart, ChartKind, Json, diff, y_scales
from .gradients import verdict
from .style import SERIES, finish, finite, layout, line
from .train import idle, label
from .words import fmt, say, sentences

QUANTITIES = ("grad_norm", "param_grad_norm", "act_norm")  # the first is the chart's own; the others are views
STRINGS: dict[str, tuple[str, str]] = {
    "chart.train_profile.title": ("Per layer at step {step}", "第 {step} 步的逐层数值"),
    "chart.train_profile.title_idle": ("Per layer (recorded every few steps)", "逐层数值（每隔几步记录一次）"),
    "enum.profile.grad_norm": ("Gradient ‖∂loss/∂x_l‖", "梯度 ‖∂loss/∂x_l‖"),
    "enum.profile.param_grad_norm": ("Weight gradient of block l", "第 l 块权重的梯度"),
    "enum.profile.act_norm": ("Stream norm ‖x_l‖", "残差流范数 ‖x_l‖"),
    "chart.train_profile.idle": ("Not trained yet: press Start.", "尚未训练：请按“开始训练”。"),
    "chart.train_profile.first": (
        "Training: the first snapshot comes with step 1.",
        "训练中：第一次记录在第 1 步之后。",
    ),
    "caption.train_profile": (
        "The latest of the per-layer snapshots taken every few steps. Watch how much gradient reaches the "
        "first layers as each run learns, and switch to the stream norm to see it grow with depth.",
        "每隔几步记录一次逐层数值，这里显示最新一次。观察每个模型在学习过程中有多少梯度传到前几层；"
        "切换到残差流范数，可以看到它随深度增长。",
    ),
    "caption.train_profile.run": (
        "{label}, step {step}: layer 1 gets {ratio} × the last layer's gradient: {verdict}.",
        "{label}，第 {step} 步：第 1 层的梯度是最后一层的 {ratio} 倍：{verdict}。",
    ),
}


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def values(profile: Json, quantity: str) -> tuple[list[int], list[float | None]]:
    """(layers, values) of one snapshot: the embedding as layer 0, then every block (the weight gradient has no
    layer 0)."""
    if quantity == "param_grad_norm":
        y = profile["param_grad_norm"]
        return list(range(1, len(y) + 1)), y
    first = profile["embedding_grad_norm" if quantity == "grad_norm" else "embedding_act_norm"]
    return list(range(len(profile[quantity]) + 1)), [first, *profile[quantity]]


def figure(answer: Json, lang: str, theme: str) -> Json:
    """Every quantity's lines, one per run, only the gradient's visible: a view shows another quantity by switching
    which lines are visible (a patch that never replaces a column, so a gap stays a gap)."""
    shown = [run for run in answer["runs"] if run["profile"]]
    step = max((run["profile_step"] for run in shown), default=0)
    title = (
        text("chart.train_profile.title", lang, step=step) if shown else text("chart.train_profile.title_idle", lang)
    )
    fig: Json = {"data": [], "layout": layout(theme, title, say({}, "axis.layer", lang),
                                              text(f"enum.profile.{QUANTITIES[0]}", lang), ylog=True)}  # fmt: skip
    if not shown:
        return idle(
            fig, text("chart.train_profile.first" if answer["started"] else "chart.train_profile.idle", lang), theme
        )
    for quantity in QUANTITIES:
        for run in shown:
            x, y = values(run["profile"], quantity)
            fig["data"].append(line(theme, label(answer, run["run"], lang), x, y, SERIES[run["run"] % len(SERIES)],
                                    visible=quantity == QUANTITIES[0], meta=quantity))  # fmt: skip
    if len(shown[0]["profile"]["act_norm"]) <= 16:
        fig["layout"]["xaxis"]["dtick"] = 1  # layers are whole numbers
    return finish(fig, theme)


def quantity_patch(fig: Json, quantity: str, lang: str) -> Json:
    """The view showing `quantity`: its lines visible, the others hidden, the y axis named after it."""
    data = [{"visible": trace["meta"] == quantity} for trace in fig["data"]]
    return {"data": data, "layout": {"yaxis": {"title": {"text": text(f"enum.profile.{quantity}", lang)}}}}


def survival(profile: Json) -> float | None:
    """Layer 1's gradient over the last layer's at this snapshot (None: a missing or zero value)."""
    g = finite(profile["grad_norm"])
    return None if g[0] is None or not g[-1] else g[0] / g[-1]


def claim(answer: Json) -> Json:
    runs = [{"run": r["run"], "step": r["profile_step"], "survival": survival(r["profile"]),
             "verdict": verdict(survival(r["profile"]))} for r in answer["runs"] if r["profile"]]  # fmt: skip
    return {"runs": runs}


def caption(answer: Json, facts: Json, lang: str) -> str:
    parts = [text("caption.train_profile", lang)]
    for run in facts["runs"]:
        ratio = say({}, "mark.overflowed", lang) if run["survival"] is None else fmt(run["survival"], lang)
        parts.append(text("caption.train_profile.run", lang, label=label(answer, run["run"], lang), step=run["step"],
                          ratio=ratio, verdict=say({}, f"verdict.{run['verdict']}", lang)))  # fmt: skip
    return sentences(parts, lang)


def rows(answer: Json) -> list[Json]:
    kinds = answer.get("kinds")
    return [
        {"run": r["run"] + 1, "kind": kinds[r["run"]] if kinds else None, "step": r["profile_step"], "layer": i + 1,
         "grad_norm": g, "param_grad_norm": r["profile"]["param_grad_norm"][i], "act_norm": r["profile"]["act_norm"][i]}
        for r in answer["runs"] if r["profile"] for i, g in enumerate(r["profile"]["grad_norm"])
    ]  # fmt: skip


def build(answer: Json, lang: str = "en") -> Chart:
    """The per-layer chart of a /train answer, in lang: the gradient per layer, the other quantities as views."""
    normal = figure(answer, lang, "normal")
    patches = {
        "slide": diff(normal, figure(answer, lang, "slide")),
        **{q: quantity_patch(normal, q, lang) for q in QUANTITIES},
        **y_scales(),
    }
    facts = claim(answer)
    return Chart("train-profile", normal, caption(answer, facts, lang), facts, rows(answer), patches)


CHART = ChartKind("train-profile", "train", build, STRINGS)
