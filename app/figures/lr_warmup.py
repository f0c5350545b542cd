"""The deck's learning-rate × warm-up grid (app/experiments/lr_warmup.py, recorded by tools/lr_warmup_grid.py): the
loss after 300 steps of Post-LN (above) and Pre-LN (below) in each cell, on one colour scale from 0 to the uniform
guess, each cell labelled with its value to two decimals (the hover gives it exactly); the slide's title and caption
say it is recorded."""

from __future__ import annotations

from ..numbers import fmt
from .style import Json, layout, theme_of
from .words import say

STRINGS: dict[str, tuple[str, str]] = {
    "lrwarmup.x": ("Learning rate", "学习率"),
    "lrwarmup.y.post_ln": ("Post-LN<br>warm-up", "Post-LN<br>预热步数"),
    "lrwarmup.y.pre_ln_2017": ("Pre-LN<br>warm-up", "Pre-LN<br>预热步数"),
    "lrwarmup.colorbar": ("Loss (nats)", "损失（奈特）"),
    "lrwarmup.kind.post_ln": ("Post-LN", "Post-LN"),
    "lrwarmup.kind.pre_ln_2017": ("Pre-LN", "Pre-LN"),
    "lrwarmup.none": ("diverged", "发散"),
}
GAP = 0.08  # between the two panels, of the plot's height
FLOOR = 0.01  # cells below it read "<0.01": learned, as the colour says; the hover keeps the exact loss


def cell_label(loss: float | None, lang: str) -> str:
    """A cell's words: the loss to two decimals (at most 5 characters, so a phone's 50-px columns never run two
    numbers together), "<0.01" below that, or "diverged"."""
    if loss is None:
        return say(STRINGS, "lrwarmup.none", lang)
    return f"<{FLOOR:.2f}" if loss < FLOOR else f"{loss:.2f}"


def grid_figure(answer: Json, title: str, theme: str, lang: str) -> Json:
    """One heatmap per kind, stacked (a row per warm-up, a column per learning rate), sharing the x axis."""
    style = theme_of(theme)
    fig: Json = {"data": [], "layout": layout(theme, title, say(STRINGS, "lrwarmup.x", lang), "")}
    lay = fig["layout"]
    lrs = [fmt(lr, lang=lang) for lr in answer["lrs"]]
    warmups = [str(w) for w in answer["warmups"]]
    kinds = answer["kinds"]
    height = (1 - GAP * (len(kinds) - 1)) / len(kinds)
    base_y = lay["yaxis"]
    for k, kind in enumerate(kinds):
        loss = answer["grid"][kind]["final_loss"]
        axis = "" if k == 0 else str(k + 1)
        name = say(STRINGS, f"lrwarmup.kind.{kind}", lang)
        text = [[cell_label(v, lang) for v in row] for row in loss]
        exact = [
            [fmt(v, lang=lang) if v is not None else say(STRINGS, "lrwarmup.none", lang) for v in row] for row in loss
        ]
        fig["data"].append(
            {
                "type": "heatmap",
                "x": lrs,
                "y": warmups,
                "z": loss,
                "text": text,
                "customdata": exact,
                "texttemplate": "%{text}",
                "textfont": {"size": style["font"]},
                "colorscale": "Viridis",
                "reversescale": True,  # low loss (learned) light, the uniform guess dark
                "zmin": 0,
                "zmax": answer["uniform_guess"],
                "showscale": k == 0,
                # narrow, labelled at whole nats: every cell states its loss, the bar only reads the colours, and
                # each pixel it leaves is the columns' (Plotly's default bar takes a third of a phone's chart)
                "colorbar": {
                    "title": {"text": say(STRINGS, "lrwarmup.colorbar", lang), "side": "right"},
                    "thickness": round(style["font"] * 0.8),
                    "dtick": 1,
                    "xpad": 4,
                },
                "xaxis": "x",
                "yaxis": f"y{axis}",
                "hovertemplate": f"%{{y}} / %{{x}}: %{{customdata}}<extra>{name}</extra>",
            }
        )
        top = 1 - k * (height + GAP)
        lay[f"yaxis{axis}"] = {
            **base_y,
            "type": "category",
            "domain": [max(0.0, round(top - height, 9)), round(top, 9)],  # 1 - 2h - gap can be -5.6e-17
            "anchor": "x",
            "title": {**base_y["title"], "text": say(STRINGS, f"lrwarmup.y.{kind}", lang)},
        }
    lay["xaxis"].update(type="category", anchor=f"y{len(kinds)}")  # under the lowest panel
    # a phone's plot leaves about 50 px a column for labels as wide ("1×10⁻⁴"): upright there, never at Plotly's 30°,
    # where each label's box reaches over its neighbour's
    lay["xaxis"]["autotickangles"] = [0, -90]
    lay["showlegend"] = False
    for key in [k for k in lay if k.startswith(("xaxis", "yaxis"))]:
        lay[key].update(showgrid=False, ticks="")
    return fig
