"""The README documents every setting: a field or preset added without documentation fails here."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.config import PRESETS, TraceConfig

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("field", list(TraceConfig.model_fields))
def test_every_request_field_is_in_the_readme_table(field):
    assert f"| `{field}` | `" in README


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_is_in_the_readme(key):
    assert f"| `{key}` |" in README and PRESETS[key]["name"] in README


def test_quick_start_is_two_commands():
    quick = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in quick.strip().splitlines()] == ["make run", "make test"]
