"""docs/glossary.md is the one translation of each term: the page strings never use a form it says to avoid, and the
README links it. (The deck's own strings, app/experiments/lecture, are checked by its own tests.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import app.main  # noqa: F401  (registers every page's strings)
from app.notebook.strings import STRINGS as NOTEBOOK_STRINGS
from app.pages import get_registry

STRINGS = {**get_registry().strings, **NOTEBOOK_STRINGS}

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary.md"
DECK_KEYS = re.compile(r"^(lecture|chart\.lecture_|slide|claim|speaker|deck)")


def glossary_rows() -> list[list[str]]:
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) == 4 and line.startswith("| ") and not cells[0].startswith(("English", "---")):
            rows.append(cells)
    return rows


def avoided_terms() -> list[tuple[str, str]]:
    """(avoided form, preferred term) from the glossary's table."""
    return [(form.strip(), row[1]) for row in glossary_rows() if row[2] for form in row[2].split(",")]


def masked(text: str) -> str:
    """The text without the glossary's preferred terms, so 坐标轴 (axis) is not taken for 坐标 (component)."""
    for row in glossary_rows():
        for term in re.split(r"[/（）]", row[1]):
            if len(term.strip()) > 1:
                text = text.replace(term.strip(), "")
    return text


def test_the_glossary_has_forty_terms_and_the_readme_links_it():
    assert len(glossary_rows()) >= 40
    assert "docs/glossary.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("avoided,preferred", avoided_terms())
def test_page_strings_use_the_glossarys_term(avoided, preferred):
    offending = {key: zh for key, (_, zh) in STRINGS.items() if not DECK_KEYS.match(key) and avoided in masked(zh)}
    assert not offending, f"use {preferred!r} instead of {avoided!r}: {offending}"
