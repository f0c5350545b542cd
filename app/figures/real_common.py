"""What every chart of /models shares: the models' names, the layer axis, token labels, the [UNK] count, block
ranges in words and the log-colour heatmap. The charts themselves are in real_stream, real_gradient, real_sink,
real_dims and real_set."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .chart import Chart, ChartKind, diff
from .heatmap import colour_range, colour_tick
from .style import Json, layout, theme_of
from .words import say

STRINGS: dict[str, tuple[str, str]] = {
    "enum.model.minilm": ("MiniLM-L6 (BERT, Post-LN)", "MiniLM-L6（BERT，Post-LN）"),
    "enum.model.smollm2": ("SmolLM2-135M (Llama, pre-norm)", "SmolLM2-135M（Llama，Pre-norm）"),
    "models.axis.layer": ("Layer (0 = before block 1)", "层（0 = 第 1 块之前）"),
    "models.axis.block": ("Block", "块"),
    "models.axis.token": ("Token", "词元"),
    "models.caption.unknown": (
        "{model}: {count} of {total} tokens unknown to its vocabulary ([UNK]).",
        "{model}：{total} 个词元中有 {count} 个不在其词表中（[UNK]）。",
    ),
    "models.branch.mlp": ("MLP", "MLP"),
    "models.branch.attention": ("attention", "注意力"),
    "models.series.own": ("your sentence", "你的句子"),
    "models.set.en": ("English", "英文"),
    "models.set.zh": ("Chinese", "中文"),
    "models.blocks.one": ("block {a}", "第 {a} 块"),
    "models.blocks.run": ("blocks {a}–{b}", "第 {a}–{b} 块"),
    "models.blocks.and": (", ", "、"),
    "models.blocks.none": ("no block", "没有任何块"),
    "models.blocks.every": ("every block", "每个块"),
}
TOKEN_SPACE = "␣"  # a token that is only white space
# Plotly's "Viridis" written out (graph_objects expands the name into these stops: the page and the notebook's
# figure stay the same JSON)
VIRIDIS = [
    [i / 9, colour]
    for i, colour in enumerate(
        ("#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725")
    )
]


def text(key: str, lang: str, **values: object) -> str:
    return say(STRINGS, key, lang, **values)


def model_name(trace: Json, lang: str) -> str:
    """The model's name in the page's language (its menu label), or the name it was loaded under."""
    name = trace["model"]["name"]
    pair = STRINGS.get(f"enum.model.{name}")
    return (pair[1] if lang == "zh" else pair[0]) if pair else trace["model"].get("label") or name


def legend_name(trace: Json, lang: str) -> str:
    """The name alone, without its family in brackets: a phone's legend does not wrap (~350 px)."""
    return re.split(r" ?[（(]", model_name(trace, lang))[0]


def token_label(token: str) -> str:
    return token.strip() or TOKEN_SPACE


def unknown_sentence(trace: Json, lang: str) -> str:
    return text(
        "models.caption.unknown",
        lang,
        model=legend_name(trace, lang),
        count=trace["unknown_tokens"],
        total=len(trace["tokens"]),
    )


def blocks_text(blocks: Sequence[int], lang: str, of: int | None = None) -> str:
    """Block numbers in words, runs joined: "blocks 1–4, block 6" (`of`: the number of blocks, for "every block")."""
    if not blocks:
        return text("models.blocks.none", lang)
    if of is not None and list(blocks) == list(range(1, of + 1)):
        return text("models.blocks.every", lang)
    runs: list[list[int]] = []
    for b in sorted(blocks):
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    parts = [
        text("models.blocks.one", lang, a=a) if a == b else text("models.blocks.run", lang, a=a, b=b) for a, b in runs
    ]
    return text("models.blocks.and", lang).join(parts)


def positive(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v) and v > 0]


def spread(values: Sequence[float | None]) -> float | None:
    """Largest over smallest of the positive finite values (None: fewer than one)."""
    kept = positive(values)
    return max(kept) / min(kept) if kept else None


def argmax(values: Sequence[float | None]) -> int | None:
    kept = [(v, i) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    return max(kept)[1] if kept else None


def argmin(values: Sequence[float | None]) -> int | None:
    kept = [(v, i) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
    return min(kept)[1] if kept else None


def log_heatmap(theme: str, x: list[Any], y: list[Any], values: list[list[float | None]], colorbar: str) -> Json:
    """A heatmap on a log colour scale (Plotly has none): z holds log10, the hover box the value itself; cells that
    are 0 or missing are gaps (the grey background)."""
    z = [[round(math.log10(v), 4) if v is not None and v > 0 else None for v in row] for row in values]
    low, high = colour_range(z, relative=False)
    ticks = list(range(low, high + 1, max(1, math.ceil((high - low) / 8))))
    font = theme_of(theme)["font"]
    return {
        "type": "heatmap",
        "x": x,
        "y": y,
        "z": z,
        "customdata": values,
        "colorscale": VIRIDIS,
        "zmin": low,
        "zmax": high,
        "hoverongaps": False,
        "hovertemplate": "%{customdata:.4g}<extra></extra>",
        "colorbar": {
            "title": {"text": colorbar, "side": "right", "font": {"size": font}},
            "tickvals": ticks,
            "ticktext": [colour_tick(v, False) for v in ticks],
            "tickfont": {"size": font},
            "thickness": font + 4,
        },
    }


def heatmap_layout(theme: str, title: str, x: str, y: str) -> Json:
    """No grid, and a grey background so a missing value never looks like one."""
    base = layout(theme, title, x, y)
    base.update(hovermode="closest", plot_bgcolor="#bdbdbd")
    base["xaxis"]["showgrid"] = False
    base["yaxis"]["showgrid"] = False
    return base


def token_axis(fig: Json, tokens: Sequence[str]) -> None:
    """The x axis of a layer × token chart: one tick per token, labelled with what it covers."""
    fig["layout"]["xaxis"].update(
        tickvals=list(range(len(tokens))), ticktext=[token_label(t) for t in tokens], tickangle=-45
    )


def scale_patches(axes: Sequence[str] = ("yaxis",)) -> dict[str, Json]:
    """The page's y-scale control as patches: "log" and "linear" set the named axes' type."""
    return {scale: {"layout": {name: {"type": scale} for name in axes}} for scale in ("log", "linear")}


@dataclass(frozen=True)
class Builder:
    """One /models chart from its parts, each a function of the answer: the figure in a theme, the caption in a
    language, the claim (the values the caption states) and the CSV rows; the slide theme (and, for a chart with a
    y-scale control, the log and linear scales) as patches."""

    key: str
    figure: Callable[[Any, str, str], Json]
    caption: Callable[[Any, str], str]
    claim: Callable[[Any], Json]
    rows: Callable[[Any], list[Json]]
    scales: bool = False

    def __call__(self, answer: Any, lang: str = "en") -> Chart:
        normal, slide = self.figure(answer, lang, "normal"), self.figure(answer, lang, "slide")
        patches = {"slide": diff(normal, slide), **(scale_patches() if self.scales else {})}
        rows = with_revision(answer, self.rows(answer))
        return Chart(self.key, normal, self.caption(answer, lang), self.claim(answer), rows, patches)


def models_of(answer: Any) -> list[Json]:
    """Each model an answer draws: a trace's, a pair's traces that did not fail, a set's."""
    traces = answer.get("traces", [answer]) if isinstance(answer, dict) else []
    return [t["model"] for t in traces if isinstance(t, dict) and isinstance(t.get("model"), dict)]


def with_revision(answer: Any, rows: list[Json]) -> list[Json]:
    """Each CSV row with the revision (the weights' digest) of the model it comes from, as a JSON export has it: a
    row names its model, or the answer drew one model only. A spreadsheet then still says which weights it holds."""
    revisions = {m["name"]: m["revision"] for m in models_of(answer) if "revision" in m}
    only = next(iter(revisions.values())) if len(revisions) == 1 else None
    out = []
    for row in rows:
        revision = revisions.get(row.get("model"), only)
        out.append({**row, "revision": revision} if revision is not None else row)
    return out


def chart_kind(request: str, builder: Builder, strings: dict[str, tuple[str, str]] | None = None) -> ChartKind:
    """The registry entry of a /models chart: its request kind (app/config/real_charts.py) and its builder."""
    return ChartKind(builder.key, request, builder, strings or {})
