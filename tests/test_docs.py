"""The docs stay true: every setting is documented, every link resolves, every repo path they name exists.

A field, preset or setting added without documentation fails here, and so does a doc or docstring that points at a
file that was moved or never written.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from app.config import PRESETS, TraceConfig
from tests.grids import choices

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MARKDOWN = [README, *DOCS]
PYTHON = sorted(
    p for folder in ("app", "tools", "tests") for p in (ROOT / folder).rglob("*.py") if p.name != "test_docs.py"
)  # this file names missing paths on purpose
TOP_FOLDERS = ("app", "tests", "static", "templates", "tools", "docs", "scripts", "notes", ".ci")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A repo path: starts with a top-level folder, made of path characters; {a,b} alternatives are expanded.
TOP_FOLDER = "|".join(re.escape(f) for f in TOP_FOLDERS)
REPO_PATH = re.compile(r"(?<![\w./-])((?:" + TOP_FOLDER + r")/[\w./{},*-]*[\w*}])")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def expand_braces(path: str) -> list[str]:
    """'static/js/{a,b}.js' -> ['static/js/a.js', 'static/js/b.js']."""
    parts = re.split(r"\{([^{}]*)\}", path)
    choices = [[part] if i % 2 == 0 else part.split(",") for i, part in enumerate(parts)]
    return ["".join(combination) for combination in itertools.product(*choices)]


def is_checkable(path: str, source: Path) -> bool:
    """Skip placeholders (`<key>`, a format field `{name}`); in Python only named files count (code builds folders)."""
    if "<" in path or re.search(r"\{[^,}]*\}", path):
        return False
    return source.suffix == ".md" or bool(re.search(r"\.[a-z]{2,4}$", path))


def exists(path: str) -> bool:
    path = path.rstrip(".")
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: p.name)
def test_every_relative_link_resolves(doc):
    broken = []
    for target in LINK.findall(text(doc)):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        file_part = target.split("#", 1)[0]
        if file_part and not (doc.parent / file_part).exists():
            broken.append(target)
    assert not broken, f"{doc.name} links to missing files: {broken}"


@pytest.mark.parametrize("source", MARKDOWN + PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repo_path_named_exists(source):
    named = {
        candidate
        for match in REPO_PATH.findall(text(source))
        if is_checkable(match, source)
        for candidate in expand_braces(match)
    }
    missing = sorted(path for path in named if not exists(path))
    assert not missing, f"{source.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_path_check_catches_a_missing_file():
    assert exists("app/main.py") and not exists("notes/FRONTEND.md")
    assert expand_braces("static/js/{page,state}.js") == ["static/js/page.js", "static/js/state.js"]


def test_readme_is_a_short_front_door():
    readme = text(README)
    assert len(readme.encode("utf-8")) < 10_000
    linked = set(LINK.findall(readme))
    unlinked = [doc.name for doc in DOCS if f"docs/{doc.name}" not in linked]
    assert not unlinked, f"README does not link to {unlinked}"


API_DOC = ROOT / "docs" / "api.md"


@pytest.mark.parametrize("field", list(TraceConfig.model_fields))
def test_every_request_field_is_in_the_api_table(field):
    assert f"| `{field}` | `" in text(API_DOC)


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_is_documented(key):
    assert f"| `{key}` |" in text(API_DOC) and PRESETS[key]["name"] in text(API_DOC)


VARIANTS_DOC = ROOT / "docs" / "variants.md"


def _listed_values(doc: Path, field: str) -> list[str]:
    """The values column of a field's row in a doc's table: `| `norm` ... | layernorm, rmsnorm, ... |`."""
    row = next((line for line in text(doc).splitlines() if line.startswith(f"| `{field}`")), None)
    assert row, f"{doc.name} has no row for {field}"
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    return next(cell.split(", ") for cell in cells[1:] if ", " in cell)


@pytest.mark.parametrize("field", ["norm", "norm_position", "block", "residual"])
def test_every_variant_is_listed_in_variants_and_api_docs(field):
    """A new norm, placement, block or residual kind fails here until both tables name it."""
    assert _listed_values(VARIANTS_DOC, field) == list(choices(field))
    assert _listed_values(API_DOC, field) == list(choices(field))


def test_the_pages_doc_lists_every_url_key_of_the_model():
    """docs/pages.md names the model's fields as the pages' URL keys, in the model's order."""
    listed = re.search(r"Keys are the request model's field names \(`([^`]+)`\)", text(ROOT / "docs" / "pages.md"))
    assert listed, "docs/pages.md no longer lists the URL keys"
    assert [name.strip() for name in listed.group(1).split(",")] == list(TraceConfig.model_fields)


def test_the_deck_size_the_docs_name_is_the_decks(monkeypatch):
    """Every "N-slide deck (M with the real models)" the docs write counts the deck as built, with and without them."""
    from app.experiments.lecture import DECK, build_deck, slides_real

    monkeypatch.setattr(slides_real, "SLIDES", [])  # as where the real models are not installed
    sizes = {len(build_deck()), len(DECK)}
    assert len(sizes) == 2
    named = [
        (path.name, int(n), int(other) if other else None, kind)
        for path in MARKDOWN
        for n, other, kind in re.findall(
            r"\b(\d+)[- ]slides?\b(?:[^()]{0,40}\((\d+) (with|where|without)\b)?", text(path)
        )
    ]
    assert len(named) >= 3, named  # README, pages.md and lecture.md name it
    for name, n, other, kind in named:
        assert n in sizes, (name, n, sizes)
        if other is not None:
            assert {n, other} == sizes and (n < other) == (kind != "without"), (name, n, other, kind)
