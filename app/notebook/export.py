"""Every result's figure out of the notebook: `.save("x.html" | "x.png" | "x.svg" | "x.pdf")` as the pages' own
download buttons write them, and charts that stay in a notebook exported to HTML.

HTML needs nothing more: the pages' plotly.js (static/vendor, 1.2 MB) is written into the file, with the caption under
the chart, as the page's "HTML" button does, so it opens offline. Images are 1280 x 720 (PNG at 1.5x: 1920 x 1080, a
slide), the page's sizes (static/js/save.js); they are drawn by kaleido, which drives a Chromium browser it finds
installed (or at BROWSER_PATH) and never downloads one here; its MathJax (from a CDN) is turned off.

In Jupyter a figure shows through plotly's renderer (its mimetype in JupyterLab). That mimetype is lost when an
executed notebook is exported to HTML (nbconvert, "Save and export as HTML"), and plotly's own "notebook" renderer
loads MathJax from a CDN. So the figures `figure()` returns carry, beside what the user's renderer gives, an HTML
version of themselves: a div drawn by plotly.js, which the first chart shown in a kernel brings inline. No CDN.
"""

from __future__ import annotations

import functools
import html
import importlib
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from ..assets import PLOTLY_JS
from .strings import t

IMAGE_FORMATS = ("png", "svg", "pdf")
IMAGE_SIZE = {"width": 1280, "height": 720}  # a slide, as the pages' PNG and SVG buttons (static/js/save.js)
PNG_SCALE = 1.5  # 1920 x 1080 pixels, text slide-sized
NOTEBOOK_HEIGHT = 525  # plotly's own notebook height, in pixels


def figure_json(fig: go.Figure) -> str:
    """The figure as JSON safe inside a <script> element."""
    return pio.to_json(fig, validate=False).replace("</", "<\\/")


def plotly_script() -> str:
    return "<script>" + PLOTLY_JS.read_text(encoding="utf-8").replace("</script", "<\\/script") + "</script>"


def save_html(fig: go.Figure, path: Path, caption: str = "", lang: str = "en") -> None:
    """One file that opens offline: the chart over the whole window, its caption under it (static/js/save.js)."""
    title = html.escape(str(fig.layout.title.text or "ResNorm Explorer"))
    page = f"""<!doctype html>
<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>html,body{{margin:0;height:100%;font-family:system-ui,sans-serif}}#chart{{width:100vw;height:88vh}}p{{margin:.5rem 1rem;font-size:16px}}</style>
</head><body><div id="chart"></div><p>{html.escape(caption)}</p>
{plotly_script()}
<script>var figure = {figure_json(fig)}; figure.layout.autosize = true; delete figure.layout.width; delete figure.layout.height;
Plotly.newPlot('chart', figure.data, figure.layout, {{responsive: true, displaylogo: false}});</script>
</body></html>
"""
    path.write_text(page, encoding="utf-8")


def save_figure(fig: go.Figure, path: str | Path, lang: str = "en", caption: str = "") -> Path:
    """Write `fig` to `path`, its format read from the suffix."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".")
    if kind == "html":
        save_html(fig, path, caption, lang)
    elif kind in IMAGE_FORMATS:
        try:
            kaleido: Any = importlib.import_module("kaleido")  # optional: not a dependency of the package
        except ImportError:
            raise ImportError(t("nb.no_kaleido", lang, kind=kind)) from None
        size = {**IMAGE_SIZE, **({"scale": PNG_SCALE} if kind == "png" else {})}
        kaleido.write_fig_sync(fig, str(path), opts={"format": kind, **size}, kopts={"mathjax": False})
    else:
        raise ValueError(f"path: ends in .html, {', '.join('.' + k for k in IMAGE_FORMATS)}; got {path.name!r}")
    return path


class NotebookFigure(go.Figure):
    """A plotly figure whose notebook output also holds an offline HTML version of itself (module docstring)."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, validate: bool = True, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(include, exclude, validate, **kwargs)
        if bundle and "text/html" not in bundle:  # a renderer the user chose that writes HTML wins
            bundle["text/html"] = notebook_html(self)
        return bundle

    def _ipython_display_(self) -> None:
        if not (pio.renderers.render_on_display and pio.renderers.default):
            return super()._ipython_display_()
        bundle = self._repr_mimebundle_()
        if not bundle:  # a renderer that opens a browser, not a notebook output
            return super()._ipython_display_()
        from IPython.display import display

        display(bundle, raw=True)
        return None


_shown_plotly = False  # whether this process has put plotly.js into a notebook output yet


def notebook_html(fig: go.Figure) -> str:
    """A div and the script that draws the figure into it; the first one of the process brings plotly.js."""
    global _shown_plotly
    element = f"resnorm-{uuid.uuid4().hex[:12]}"
    height = fig.layout.height or NOTEBOOK_HEIGHT
    library = "" if _shown_plotly else plotly_script()
    _shown_plotly = True
    return (
        f'{library}<div id="{element}" class="resnorm-chart" style="width:100%;height:{height}px"></div>'
        f"<script>(function () {{ var figure = {figure_json(fig)}; if (window.Plotly) "
        f"Plotly.newPlot({json.dumps(element)}, figure.data, figure.layout, {{responsive: true, displaylogo: false}}); }})();"
        "</script>"
    )


def notebook_figure(fig: go.Figure) -> go.Figure:
    """The same figure, shown with its offline HTML in a notebook (only its display changes)."""
    fig.__class__ = NotebookFigure
    return fig


class Saves:
    """A result with a figure(): save(path, **figure_options) writes that figure, and the figure every subclass's
    figure() returns keeps its chart in a notebook exported to HTML (wrapped here, once per class)."""

    lang: str
    figure: Callable[..., go.Figure]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("figure")
        if callable(own):

            @functools.wraps(own)
            def figure(self: Any, *args: Any, **options: Any) -> go.Figure:
                return notebook_figure(own(self, *args, **options))

            setattr(cls, "figure", figure)  # noqa: B010  (a method of the subclass, replaced once)

    def save(self, path: str | Path, **figure_options: Any) -> Path:
        """The figure (figure_options: those of figure(), e.g. kind="gradients") as .html (offline, with its caption),
        .png (1920 x 1080), .svg or .pdf (1280 x 720); images need kaleido and a Chromium browser (pip install
        kaleido)."""
        lang = figure_options.get("lang") or self.lang
        caption = getattr(self, "caption", "") if lang == self.lang else ""  # a lesson's sentence, in its language
        return save_figure(self.figure(**figure_options), path, lang, caption if isinstance(caption, str) else "")
