"""docs/notebook.md is a notebook (jupytext Markdown): every cell runs in a real Jupyter kernel, and one that raises
fails here. The kernel imports the package as a user does: `import resnorm_explorer`, from a folder of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "notebook.md"


def test_the_notebook_runs_every_cell(tmp_path):
    jupytext = pytest.importorskip("jupytext")
    from nbclient import NotebookClient

    notebook = jupytext.read(NOTEBOOK)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert 8 <= len(code) <= 12  # a lesson in about ten cells
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [output for cell in code for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figures) >= 6  # every figure() cell shows its chart
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "of the gradient reaches the first block" in printed and "less than or equal to 128" in printed
