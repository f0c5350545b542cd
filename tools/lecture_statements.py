"""Write the table of the deck's statements into docs/lecture.md, from the claims themselves.

    python -m tools.lecture_statements [--check]

Each slide's claim as its caption says it (English; a value measured when the slide is shown is written ⟨name⟩) and
the checks that must hold on the measured values, between the markers below. tests/test_lecture_order.py fails when
the table in the docs is not what this writes, so the docs cannot describe a claim the deck no longer makes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from app.experiments.lecture import DECK, slides_real
from app.numbers import fmt

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lecture.md"
BEGIN = "<!-- statements: written by python -m tools.lecture_statements from the claims; do not edit by hand -->"
END = "<!-- /statements -->"
PLACEHOLDER = re.compile(r"\{(\w+)(?:\|\d+)?\}")
OPS = {"<": "< {b}", ">": "> {b}", "==": "= {b}", "null": "overflows (null)", "close": "≈ {b}"}


def _number(value: Any) -> str:
    """A bound by the site's one number rule (app/numbers.py): 4.04838×10⁻⁵, not 4.04838e-05."""
    if isinstance(value, bool):
        return str(value).lower()
    return fmt(value, digits=6) if isinstance(value, (int, float)) else str(value)


def _check(check: dict[str, Any]) -> str:
    op, bound = check["op"], check.get("bound")
    if op == "between":
        low, high = check["bound"]
        text = f"in [{_number(low)}, {_number(high)}]"
    else:
        text = OPS[op].format(b=_number(bound))
        if op == "close":
            text += f" (rel {_number(check['rel'])})" if "rel" in check else f" (abs {_number(check.get('abs', 0))})"
    return f"⟨{check['value']}⟩ {text}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows() -> list[tuple[str, str, str]]:
    """Per slide of the deck: its title, its claim's statement and its checks, as the table writes them."""
    out = []
    for slide in DECK:
        claim = slide["claim"]
        statement = PLACEHOLDER.sub(lambda m: f"⟨{m[1]}⟩", claim["statement"]["en"])
        checks = "; ".join(_check(c) for c in claim["checks"]) or "none (nothing measured)"
        out.append((_cell(slide["title"]["en"]), _cell(statement), _cell(checks)))
    return out


def table() -> str:
    lines = ["| # | Slide | Statement (⟨…⟩: measured when shown) | Checked on every entry |", "|---|---|---|---|"]
    lines += [f"| {number} | {' | '.join(row)} |" for number, row in enumerate(rows(), start=1)]
    return "\n".join(lines)


def documented(text: str) -> dict[str, tuple[str, str]]:
    """The docs' table as it stands: slide title -> (statement, checks)."""
    inside = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    rows_text = inside.strip().splitlines()[2:]  # a cell's own | is written \| (no " | " inside a cell)
    cells = [line.strip()[2:-2].split(" | ") for line in rows_text]
    return {title: (statement, checks) for _, title, statement, checks in cells}


def block() -> str:
    return f"{BEGIN}\n{table()}\n{END}"


def written(text: str) -> str:
    """The docs text with the block between the markers replaced by this deck's table."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + block() + text[end:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the docs are up to date")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not slides_real.SLIDES:
        sys.exit("the real models are not installed: the table would leave their slides out (make .venv/.installed)")
    text = DOCS.read_text(encoding="utf-8")
    new = written(text)
    if args.check:
        sys.exit(0 if new == text else "docs/lecture.md: the statements table differs from the claims")
    DOCS.write_text(new, encoding="utf-8")
    print(f"wrote the statements of {len(DECK)} slides into {DOCS}")


if __name__ == "__main__":
    main()
