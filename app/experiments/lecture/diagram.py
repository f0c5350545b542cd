"""The block-diagram slide's picture: one Transformer sublayer drawn as Post-LN and as Pre-LN, side by side, as SVG.

Each placement is data (`PLACEMENTS`): the nodes the stream passes on its way from input to output (the shortcut and
what sits on it) and the nodes of the branch. The drawing and its text alternative are laid out from those lists, and
the slide's claim counts the norms on the stream from them, so picture, description and caption cannot disagree.
Drawn bottom to top, input below and output above, as in Xiong et al. 2020, Figure 1.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from html import escape

# Stage units: the SVG is drawn at 1:1 on the 1280x720 stage, so FONT is the size the back row reads (≥ 24 px).
COLUMN, HEIGHT = 390, 490  # one placement's column
GAP = 30  # between the stacked columns
FONT, TITLE_FONT = 24, 26
SPINE_X, BRANCH_X = 138, 290  # within a column: the stream's line and the branch's boxes
BOX_W, BOX_H = 170, 52
TOP_Y, SPLIT_Y, INPUT_Y = 114, 430, 470  # the output label, where the branch leaves the stream, the input label
SLOTS = 4  # slot 0: the split; the branch's nodes, then the add, then the stream's nodes after it; the output last
# The deck's Okabe–Ito blue and orange (lecture.css --accent and --focus; app/figures/style.py PALETTE)
STREAM_COLOR, NORM_COLOR, NORM_FILL = "#0072B2", "#E69F00", "#fde9c4"
INK, MUTED, PANEL = "#111", "#4a4a4a", "#f1f3f6"

LABELS: dict[str, tuple[str, str]] = {
    "input": ("input x", "输入 x"),
    "sublayer": ("sublayer f", "子层 f"),
    "add": ("+", "+"),
    "norm": ("LayerNorm", "LayerNorm"),
    "output": ("output", "输出"),
    "shortcut": ("shortcut", "捷径"),
    "branch": ("branch", "分支"),
}


@dataclass(frozen=True)
class Placement:
    key: str  # the norm_position it draws (app/models/units.py)
    name: tuple[str, str]
    equation: str
    stream: tuple[str, ...]  # input to output along the shortcut: what the stream itself passes through
    branch: tuple[str, ...]  # what the branch applies, in order, between leaving the stream and the add


PLACEMENTS = (
    Placement(
        "post",
        ("Post-LN (2017)", "Post-LN（2017）"),
        "x ← LN(x + f(x))",
        ("input", "add", "norm", "output"),
        ("sublayer",),
    ),
    Placement("pre", ("Pre-LN", "Pre-LN"), "x ← x + f(LN(x))", ("input", "add", "output"), ("norm", "sublayer")),
)
TITLE = ("Post-LN and Pre-LN, one sublayer each", "Post-LN 与 Pre-LN，各画一个子层")


def norms_on_stream(key: str) -> int:
    """How many norms a placement puts on the stream itself (the path the shortcut carries to the output)."""
    return next(p for p in PLACEMENTS if p.key == key).stream.count("norm")


def slot_y(slot: int) -> float:
    return SPLIT_Y - slot * (SPLIT_Y - TOP_Y) / SLOTS


def positions(placement: Placement) -> dict[str, tuple[str, float, float]]:
    """node -> (path, x, y) in column units: the branch's nodes from slot 1 up, the add above them, the stream after."""
    if len(placement.branch) + len(placement.stream) - 1 != SLOTS:
        raise ValueError(f"{placement.key}: {SLOTS} slots, {placement.branch} + {placement.stream}")
    out: dict[str, tuple[str, float, float]] = {
        node: ("branch", BRANCH_X, slot_y(i + 1)) for i, node in enumerate(placement.branch)
    }
    after_input = placement.stream[1:]
    first = len(placement.branch) + 1
    out |= {node: ("stream", SPINE_X, slot_y(first + i)) for i, node in enumerate(after_input)}
    out["input"] = ("stream", SPINE_X, float(INPUT_Y))
    return out


def _text(x: float, y: float, text: str, size: int = FONT, anchor: str = "middle", weight: str = "normal") -> str:
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" dominant-baseline="central" '
        f'font-weight="{weight}" fill="{INK}">{escape(text)}</text>'
    )


def _line(x1: float, y1: float, x2: float, y2: float, stream: bool, arrow: bool = True) -> str:
    """A line from (x1, y1) to (x2, y2), its arrowhead's tip at the end. The head is drawn, not an SVG marker: a
    marker is found by id, and a copied slide (the speaker view's thumbnails) has no ids."""
    color, width, length, half = (STREAM_COLOR, 7, 20, 11) if stream else (MUTED, 3, 14, 7)
    dx, dy = (x2 - x1) / math.hypot(x2 - x1, y2 - y1), (y2 - y1) / math.hypot(x2 - x1, y2 - y1)
    bx, by = (x2 - dx * length, y2 - dy * length) if arrow else (x2, y2)  # the head's base
    path = "shortcut" if stream else "branch"
    line = (
        f'<line x1="{x1:g}" y1="{y1:g}" x2="{bx + dx:g}" y2="{by + dy:g}" stroke="{color}" stroke-width="{width}" '
        f'data-path="{path}"/>'
    )
    if not arrow:
        return line
    head = f"M{x2:g} {y2:g}L{bx - dy * half:g} {by + dx * half:g}L{bx + dy * half:g} {by - dx * half:g}z"
    return line + f'<path d="{head}" fill="{color}" data-path="{path}"/>'


def _node(node: str, path: str, x: float, y: float, lang: int) -> str:
    """A box (sublayer, norm), the add's circle or a label (input, output), tagged with what it is and where."""
    tag = f'data-node="{node}" data-path="{path}" data-x="{x:g}" data-y="{y:g}"'
    if node == "add":
        plus = f"M{x - 10:g} {y:g}h20M{x:g} {y - 10:g}v20"
        return (
            f'<g {tag}><circle cx="{x:g}" cy="{y:g}" r="18" fill="#fff" stroke="{INK}" stroke-width="3"/>'
            f'<path d="{plus}" stroke="{INK}" stroke-width="3"/></g>'
        )
    if node in ("input", "output"):
        return f"<g {tag}>{_text(x, y, LABELS[node][lang], weight='bold')}</g>"
    fill, stroke = (NORM_FILL, NORM_COLOR) if node == "norm" else (PANEL, MUTED)
    return (
        f'<g {tag}><rect x="{x - BOX_W / 2:g}" y="{y - BOX_H / 2:g}" width="{BOX_W}" height="{BOX_H}" rx="8" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="{4 if node == "norm" else 2}"/>{_text(x, y, LABELS[node][lang])}</g>'
    )


def _edge_end(node: str, toward_below: bool) -> float:
    """How far from a node's centre a line stops (its box's edge, the circle's, a label's)."""
    return {"add": 20.0, "input": 16.0, "output": 18.0}.get(node, BOX_H / 2 + (2 if toward_below else 0))


def _column(placement: Placement, lang: int) -> str:
    at = positions(placement)
    parts: list[str] = []
    stream = placement.stream
    for below, above in itertools.pairwise(stream):  # the stream, bottom to top: thick, blue, unbroken
        (_, x, y0), (_, _, y1) = at[below], at[above]
        parts.append(_line(x, y0 - _edge_end(below, False), x, y1 + _edge_end(above, True) + 2, stream=True))
    add_y = at["add"][2]
    route = [("split", SPLIT_Y), *((n, at[n][2]) for n in placement.branch)]
    parts.append(_line(SPINE_X, SPLIT_Y, BRANCH_X, SPLIT_Y, stream=False, arrow=False))  # the branch leaves x
    for (below, y0), (_, y1) in itertools.pairwise(route):
        start = y0 if below == "split" else y0 - BOX_H / 2
        parts.append(_line(BRANCH_X, start, BRANCH_X, y1 + BOX_H / 2 + 2, stream=False))
    top = at[placement.branch[-1]][2] - BOX_H / 2
    parts.append(_line(BRANCH_X, top, BRANCH_X, add_y, stream=False, arrow=False))  # and comes back to the add
    parts.append(_line(BRANCH_X, add_y, SPINE_X + 21, add_y, stream=False))
    shortcut_y = (SPLIT_Y + at[stream[1]][2]) / 2  # the shortcut's label, beside it, below the first thing it meets
    parts.append(_text(SPINE_X - 16, shortcut_y, LABELS["shortcut"][lang], anchor="end", weight="bold"))
    parts.extend(_node(node, path, x, y, lang) for node, (path, x, y) in at.items())
    parts.append(_text(COLUMN / 2, 30, placement.name[lang], size=TITLE_FONT, weight="bold"))
    parts.append(_text(COLUMN / 2, 68, placement.equation))
    return "".join(parts)


def description(lang: int) -> str:
    """The text alternative: each placement's stream and branch, read from the same lists the drawing uses."""
    words = (("along the shortcut", "branch"), ("沿捷径", "分支"))[lang]
    parts = []
    for p in PLACEMENTS:
        stream = " → ".join(LABELS[n][lang] if n != "add" else ("add", "相加")[lang] for n in p.stream)
        branch = " → ".join(LABELS[n][lang] for n in p.branch)
        sep = ("; ", "；")[lang]
        parts.append(f"{p.name[lang]}{(': ', '：')[lang]}{words[0]} {stream}{sep}{words[1]} {branch}")
    return ("。" if lang else ". ").join(parts) + ("。" if lang else ".")


def block_diagram(slide_id: str, lang: str, stacked: bool = False) -> str:
    """The picture, in one language: Post-LN left and Pre-LN right (or, stacked, Post-LN above: a phone's width)."""
    k = 1 if lang == "zh" else 0
    name = f"{slide_id}-{'tall' if stacked else 'wide'}"  # ids unique in the page, which holds both layouts
    columns = "".join(
        f'<g class="placement" data-placement="{p.key}" '
        f'transform="translate({0 if stacked else i * COLUMN} {i * (HEIGHT + GAP) if stacked else 0})">{_column(p, k)}</g>'
        for i, p in enumerate(PLACEMENTS)
    )
    width, height = (COLUMN, 2 * HEIGHT + GAP) if stacked else (2 * COLUMN, HEIGHT)
    return (
        f'<svg class="slide-picture {"tall" if stacked else "wide"}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="{name}-title" aria-describedby="{name}-desc">'
        f'<title id="{name}-title">{escape(TITLE[k])}</title><desc id="{name}-desc">{escape(description(k))}</desc>'
        f"{columns}</svg>"
    )


def pictures(slide_id: str) -> dict[str, str]:
    """The slide's picture field: in each language, the side-by-side drawing (the stage, print) and the stacked one
    (a phone's flowing page; lecture.css shows one of them)."""
    return {lang: block_diagram(slide_id, lang) + block_diagram(slide_id, lang, stacked=True) for lang in ("en", "zh")}
