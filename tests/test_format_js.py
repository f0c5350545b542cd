"""The site's one number formatter (static/js/format.js) under node's own test runner: tests/js/*.test.mjs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_number_formatter_unit_tests_pass_under_node():
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is needed for tests/js (the number formatter's unit tests)")
        pytest.skip("node not installed")
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "js").glob("*.test.mjs"))
    assert tests, "no tests/js/*.test.mjs found"
    result = subprocess.run([node, "--test", *tests], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
