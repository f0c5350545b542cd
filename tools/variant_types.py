"""Write app/config/variant_types.py: the variant axes' values (app/config/variants.py) as static Literal types.

pydantic validates the request model against the variant table's keys at run time (`Literal[keys("norm")]`), which a
type checker cannot evaluate; this file spells the same values out for mypy, pyright and editors.
tests/test_notebook_types.py fails when the file and the table differ. Run after adding a variant:

    python -m tools.variant_types
"""

from __future__ import annotations

from pathlib import Path

from app.config.variants import keys

TARGET = Path(__file__).resolve().parents[1] / "app" / "config" / "variant_types.py"
AXES = {"Norm": "norm", "NormPosition": "norm_position", "Block": "block", "Residual": "residual"}
HEADER = '''"""The variant axes' values as static Literal types, for type checkers only (app/config/request.py imports them
under TYPE_CHECKING; pydantic validates against the variant table itself). Written by `python -m tools.variant_types`
from app/config/variants.py; tests/test_notebook_types.py fails when they differ. Do not edit by hand."""

from typing import Literal

'''


def render() -> str:
    lines = [
        f"{name} = Literal[{', '.join(repr(key).replace(chr(39), chr(34)) for key in keys(axis))}]"
        for name, axis in AXES.items()
    ]
    return HEADER + "\n".join(lines) + "\n"


def main() -> None:
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
