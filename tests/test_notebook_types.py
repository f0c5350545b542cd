"""What a type checker sees of the Python API: mypy, run on a small notebook's calls, accepts every field of the
request models with its own type (app/notebook/fields.py's TypedDicts) and flags each mistyped one, in rx.trace,
rx.compare, rx.sweep, rx.train and rx.build, as the runtime validation refuses them."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each line ends with what mypy must say of it: "ok" (nothing) or "error" (one complaint on that line).
CALLS = """\
import app as rx
rx.trace(depth=48, norm_position="post", dtype="bfloat16")  # ok
rx.trace(depth="48")  # error
rx.trace(norm="layernorm2")  # error
rx.trace(dpeth=48)  # error
rx.build(depth=4, residual_scale=0.5)  # ok
rx.batch(seq_len=8)  # ok
rx.compare(depth=24, norm_position=["post", "pre"])  # ok
rx.compare(depth=[6, 12, 24], norm="rmsnorm")  # ok
rx.compare(norm_position=["post", "sideways"])  # error
rx.compare(depth=["6"])  # error
rx.sweep(1, 8, norm_position="post", d_model=32)  # ok
rx.sweep(1, 8, depth=4)  # error
rx.sweep(1, 8, residual="shortcut")  # error
rx.train("warmup", steps=50, lr=3e-4, optimizer="sgd", clip=None)  # ok
rx.train(None, runs=[{"depth": 2, "norm_position": "post"}, rx.TraceConfig(depth=3)], task="sort")  # ok
rx.train(steps="50")  # error
rx.train(optimizer="lion")  # error
rx.train(None, runs=[{"depht": 2}])  # error
rx.train(None, runs=[{"depth": "2"}])  # error
"""


def mypy_lines(tmp_path: Path) -> dict[int, str]:
    """mypy's complaints about CALLS, by line number (the project's configuration and cache)."""
    pytest.importorskip("mypy")
    snippet = tmp_path / "notebook_calls.py"
    snippet.write_text(CALLS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context", str(snippet)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found: dict[int, str] = {}
    for line in done.stdout.splitlines():
        match = re.search(r"notebook_calls\.py:(\d+): error: (.*)", line)
        if match:
            found.setdefault(int(match[1]), match[2])
    assert done.returncode in (0, 1) and (found or done.returncode == 0), done.stdout + done.stderr
    return found


def test_mypy_accepts_every_right_call_and_flags_every_mistyped_field(tmp_path):
    found = mypy_lines(tmp_path)
    expected = {n for n, line in enumerate(CALLS.splitlines(), start=1) if line.endswith("# error")}
    allowed = {n for n, line in enumerate(CALLS.splitlines(), start=1) if line.endswith("# ok")}
    assert len(expected) == 11 and len(allowed) == 8
    assert set(found) == expected, {n: found.get(n) for n in set(found) ^ expected}
    assert "Literal" in found[4] and "dpeth" in found[5]  # the allowed values; the unknown keyword by its name


def test_the_static_variant_types_are_the_variant_tables_keys():
    """Type checkers read the variant axes' values from app/config/variant_types.py (pydantic reads the table):
    the file must be what the table writes, so a new norm is a valid value for mypy too."""
    from tools.variant_types import AXES, TARGET, render

    assert TARGET.read_text(encoding="utf-8") == render(), "run: python -m tools.variant_types"
    from app.config import TraceConfig

    for name, axis in AXES.items():  # and each is the request model's own field type
        assert f"{name} = Literal[" in render() and axis in TraceConfig.model_fields
        values = typing.get_args(TraceConfig.model_fields[axis].annotation)
        assert render().count(", ".join(f'"{v}"' for v in values)) == 1, axis
