"""docs/notebook.md is a notebook (jupytext Markdown): every cell runs in a real Jupyter kernel, and one that raises
fails here. The kernel imports the package as a user does: `import resnorm_explorer`, from a folder of its own.
The executed notebook is then exported to HTML as `jupyter nbconvert --to html` does, and that file, opened in
Chromium with every request off the disk refused, draws each chart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tools.chromium import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "notebook.md"
PLOTLY = "application/vnd.plotly.v1+json"
EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"(https?:[^\"]*)\"")


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Any:
    jupytext = pytest.importorskip("jupytext")
    pytest.importorskip("transformers", reason="section 8 builds a GPT-2 with transformers (the [models] extra)")
    from nbclient import NotebookClient

    notebook = jupytext.read(NOTEBOOK)
    folder = tmp_path_factory.mktemp("notebook")
    # as Jupyter saves a notebook by default: without the widgets' state (progress bars), which nbconvert would
    # otherwise draw with a widget manager loaded from a CDN
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    return notebook


def outputs_of(notebook: Any) -> list[Any]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def test_the_notebook_runs_every_cell(executed):
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert 8 <= len(code) <= 12  # a lesson in about ten cells
    outputs = outputs_of(executed)
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if PLOTLY in o.get("data", {})]
    assert len(figures) >= 6  # every figure() cell shows its chart
    assert all("text/html" in o["data"] for o in figures)  # and an HTML copy of it, for an export
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "of the gradient reaches the first block" in printed and "less than or equal to 128" in printed
    assert "pre_norm blocks: 4" in printed and printed.count("gradient ‖∂loss/∂x‖") == 5  # your own GPT-2
    assert "Residual stream norm per layer" in str(figures[-1]["data"][PLOTLY]["layout"]["title"])  # and its chart


@pytest.fixture(scope="module")
def exported(executed, tmp_path_factory) -> tuple[Path, int, set[str]]:
    """The executed notebook as nbconvert's HTML (its default template), how many charts it holds, and the scripts
    nbconvert's template itself loads from elsewhere."""
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    page, _ = nbconvert.HTMLExporter().from_notebook_node(executed)
    empty, _ = nbconvert.HTMLExporter().from_notebook_node(nbformat.v4.new_notebook())
    # nbconvert's template loads require.js and MathJax from a CDN for its own use; the cells add no script source
    template_sources = set(EXTERNAL_SCRIPT.findall(empty))
    assert set(EXTERNAL_SCRIPT.findall(page)) == template_sources
    charts = sum(PLOTLY in o.get("data", {}) for o in outputs_of(executed))
    assert page.count('class="resnorm-chart"') == charts
    assert page.count("plotly.js v") == 1  # the library once, inline, from the first chart
    path = tmp_path_factory.mktemp("export") / "notebook.html"
    path.write_text(page, encoding="utf-8")
    return path, charts, template_sources


def test_the_exported_notebook_draws_its_charts_offline(exported):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    path, charts, template_sources = exported
    refused: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()

        def offline(route: Any) -> None:
            if route.request.url.startswith("file:"):
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()

        page.route("**/*", offline)
        page.goto(path.as_uri())
        drawn = "n => document.querySelectorAll('.resnorm-chart.js-plotly-plot .main-svg').length >= n"
        page.wait_for_function(drawn, arg=charts, timeout=60_000)
        traces = page.evaluate("[...document.querySelectorAll('.resnorm-chart')].map(d => (d.data || []).length)")
        browser.close()
    assert len(traces) == charts and all(n >= 1 for n in traces), traces
    assert set(refused) <= template_sources, refused  # only nbconvert's own template asked for the network
