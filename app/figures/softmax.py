"""/softmax: the weights p = softmax(s·z) at the chosen scale, and the sweep over scales of the entropy, the largest
probability and the spectral norm of the Jacobian diag(p) − p pᵀ (app/experiments/lessons/softmax.py). Both charts
read one answer; the sweep's caption calls the weights one-hot only where its largest probability is, and says that
tied top scores never get there (logits 5, 5, 5 keep p = 1/3 at every scale)."""

from __future__ import annotations

from ..errors import FieldError
from .chart import Chart, ChartKind, Json, diff
from .lesson import blank, precise, text
from .style import PALETTE, finish, line
from .words import sentences

ONE_HOT = 0.99  # above this largest probability the weights count as one-hot
TIED = 1e-9  # top probabilities within this relative gap are tied scores
FLOOR = -16  # the sweep's y axis stops at 10⁻¹⁶: below it a gradient is lost beside any weight of 1, even in float64
SWEEP_SERIES = (
    ("entropy", "softmax.series.entropy", "green"),
    ("max_prob", "softmax.series.max_prob", "orange"),
    ("jacobian_norm", "softmax.series.jacobian", "vermillion"),
)


def probs_figure(answer: Json, lang: str, theme: str) -> Json:
    fig = blank(theme, lang, "chart.softmax_probs.title", "softmax.axis.position", "softmax.axis.prob")
    name = text("softmax.series.at", lang, s=precise(answer["scale"], lang, 3))
    fig["data"].append({
        "type": "bar",
        "name": name,
        "x": list(range(1, len(answer["probs"]) + 1)),
        "y": answer["probs"],
        "marker": {"color": PALETTE["blue"]},
        "hovertemplate": f"%{{y:.4g}}<extra>{name}</extra>",
    })  # fmt: skip
    fig["layout"]["yaxis"]["range"] = [0, 1.05]
    fig["layout"]["showlegend"] = False  # one series, named in the title and the caption: no empty legend row
    return finish(fig, theme)


def sweep_figure(answer: Json, lang: str, theme: str) -> Json:
    fig = blank(theme, lang, "chart.softmax_sweep.title", "softmax.axis.scale", "softmax.axis.value", ylog=True)
    fig["layout"]["xaxis"]["type"] = "log"
    rows = answer["sweep"]
    x = [row["scale"] for row in rows]
    for field, label, color in SWEEP_SERIES:
        fig["data"].append(line(theme, text(label, lang), x, [row[field] for row in rows], PALETTE[color],
                                markers=False))  # fmt: skip
    fig["layout"]["yaxis"]["range"] = [FLOOR, 0.5]
    s = precise(answer["scale"], lang, 3)
    current = line(theme, text("softmax.mark.current", lang, s=s), [answer["scale"]] * len(SWEEP_SERIES),
                   [answer[field] for field, _, _ in SWEEP_SERIES], PALETTE["black"], mode="markers")  # fmt: skip
    current["marker"] = {
        "size": 13,
        "symbol": "diamond",
        "color": [PALETTE[color] for _, _, color in SWEEP_SERIES],
        "line": {"color": PALETTE["black"], "width": 1.5},
    }
    fig["data"].append(current)
    return finish(fig, theme)


def claim(answer: Json, lang: str = "en") -> Json:
    """What the sweep's caption states. The sweep's last scale speaks for the largest scale shown; it is named apart
    from the chosen s only where the two do not print alike (316 and 316.2 are both "316") and s lies inside the
    sweep; the weights are one-hot only where the largest probability is ≥ ONE_HOT; tied top scores say so."""
    last = answer["sweep"][-1]
    same = precise(last["scale"], lang, 3) == precise(answer["scale"], lang, 3) or answer["scale"] > last["scale"]
    end = answer if same else last
    top = answer["max_prob"]
    ties = sum(1 for p in answer["probs"] if abs(p - top) <= TIED * top)
    why = "one_hot" if end["max_prob"] >= ONE_HOT else "tied" if ties > 1 else "not_yet"
    return {
        "scale": answer["scale"],
        "jacobian_norm": answer["jacobian_norm"],
        "max_prob": answer["max_prob"],
        "last_scale": None if same else last["scale"],
        "last_jacobian_norm": None if same else last["jacobian_norm"],
        "end_max_prob": end["max_prob"],
        "tied": ties,
        "why": why,
    }


def probs_caption(answer: Json, lang: str) -> str:
    return text("softmax.caption.probs", lang, s=precise(answer["scale"], lang, 3),
                max=precise(answer["max_prob"], lang, 4), argmax=answer["argmax"] + 1,
                entropy=precise(answer["entropy"], lang, 4), uniform=precise(answer["uniform_entropy"], lang, 4))  # fmt: skip


def sweep_caption(facts: Json, lang: str) -> str:
    parts = [text("softmax.caption.sweep", lang, s=precise(facts["scale"], lang, 3),
                  norm=precise(facts["jacobian_norm"], lang, 3))]  # fmt: skip
    if facts["last_scale"] is not None:
        parts.append(text("softmax.caption.sweep_last", lang, last=precise(facts["last_scale"], lang, 3),
                          last_norm=precise(facts["last_jacobian_norm"], lang, 3)))  # fmt: skip
    parts.append(text(f"softmax.caption.{facts['why']}", lang, max=precise(facts["end_max_prob"], lang, 3)))
    return sentences(parts, lang)


def _slide(figure: Json, answer: Json, lang: str, draw: object) -> dict[str, Json]:
    return {"slide": diff(figure, draw(answer, lang, "slide"))}  # type: ignore[operator]


def build_probs(answer: Json, lang: str = "en") -> Chart:
    figure = probs_figure(answer, lang, "normal")
    facts = {"scale": answer["scale"], "max_prob": answer["max_prob"], "argmax": answer["argmax"] + 1,
             "entropy": answer["entropy"], "uniform_entropy": answer["uniform_entropy"]}  # fmt: skip
    rows = [
        {"position": i + 1, "logit": z, "probability": p}
        for i, (z, p) in enumerate(zip(answer["logits"], answer["probs"], strict=True))
    ]
    return Chart("softmax-probs", figure, probs_caption(answer, lang), facts, rows,
                 _slide(figure, answer, lang, probs_figure))  # fmt: skip


def build_sweep(answer: Json, lang: str = "en") -> Chart:
    if not answer.get("sweep"):
        raise FieldError("scales", "the sweep chart draws the answer's sweep", "a list of 1 to 64 scales")
    figure, facts = sweep_figure(answer, lang, "normal"), claim(answer, lang)
    rows = [
        {"scale": r["scale"], "entropy": r["entropy"], "max_prob": r["max_prob"],
         "jacobian_spectral_norm": r["jacobian_norm"], "jacobian_frobenius_norm": r["jacobian_frobenius"]}
        for r in answer["sweep"]
    ]  # fmt: skip
    return Chart("softmax-sweep", figure, sweep_caption(facts, lang), facts, rows,
                 _slide(figure, answer, lang, sweep_figure))  # fmt: skip


PROBS = ChartKind("softmax-probs", "softmax", build_probs, {})
SWEEP = ChartKind("softmax-sweep", "softmax", build_sweep, {})
