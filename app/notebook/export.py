"""`.save("x.html" | "x.png" | "x.svg" | "x.pdf")` on every result: its figure as a file.

HTML needs nothing more: plotly.js is written into the file (about 4.8 MB), so it opens offline. Images are drawn by
kaleido, which drives a Chromium browser it finds installed (or at BROWSER_PATH) and never downloads one here; its
MathJax (from a CDN) is turned off, so nothing is fetched.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from ..i18n import t
from . import strings as _strings  # noqa: F401  (registers the API's words)

IMAGE_FORMATS = ("png", "svg", "pdf")


def save_figure(fig: go.Figure, path: str | Path, lang: str = "en") -> Path:
    """Write `fig` to `path`, its format read from the suffix."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".")
    if kind == "html":
        fig.write_html(path, include_plotlyjs=True)
    elif kind in IMAGE_FORMATS:
        try:
            kaleido: Any = importlib.import_module("kaleido")  # optional: not a dependency of the package
        except ImportError:
            raise ImportError(t("nb.no_kaleido", lang, kind=kind)) from None
        kaleido.write_fig_sync(fig, str(path), opts={"format": kind}, kopts={"mathjax": False})
    else:
        raise ValueError(f"path: ends in .html, {', '.join('.' + k for k in IMAGE_FORMATS)}; got {path.name!r}")
    return path


class Saves:
    """A result with a figure(): save(path, **figure_options) writes that figure."""

    lang: str
    figure: Callable[..., go.Figure]

    def save(self, path: str | Path, **figure_options: Any) -> Path:
        """The figure (figure_options: those of figure(), e.g. kind="gradients") as .html, .png, .svg or .pdf; images
        need kaleido and a Chromium browser (pip install kaleido)."""
        return save_figure(self.figure(**figure_options), path, figure_options.get("lang") or self.lang)
