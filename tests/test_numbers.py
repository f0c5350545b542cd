"""app/numbers.py, the server's twin of static/js/format.js: the same cases as tests/js/format.test.mjs, and both
formatters agree on a few thousand values (run through node)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.numbers import MINUS, fmt

ROOT = Path(__file__).resolve().parents[1]
CASES: list[tuple[float | None, dict[str, Any], str]] = [
    (4.000001, {"digits": 6}, "4"),
    (490, {"digits": 2}, "490"),
    (0.014923, {}, "0.0149"),
    (9412.3402, {"digits": 6}, "9412.34"),
    (1.0000001, {"digits": 4, "zeros": True}, "1.000"),
    (0.9**96, {"digits": 6}, "4.04838×10⁻⁵"),
    (8.28e7, {}, "8.28×10⁷"),
    (99960, {}, "1×10⁵"),
    (8.28e7, {"lang": "zh"}, "8280万"),
    (5.21e10, {"lang": "zh"}, "521亿"),
    (9999.7, {"lang": "zh"}, "1万"),
    (-0.8165, {"digits": 4}, f"{MINUS}0.8165"),
    (95.6, {"digits": 0}, "96"),
    (None, {}, "—"),
    (-math.inf, {}, f"{MINUS}∞"),
]


@pytest.mark.parametrize("value, options, expected", CASES)
def test_numbers_are_written_the_site_way(value, options, expected):
    assert fmt(value, **options) == expected


def test_the_server_and_the_browser_write_numbers_alike():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    values = [sign * m * 10.0**e for e in range(-40, 40, 3) for m in (1, 1.2345, 4.999, 9.9996) for sign in (1, -1)]
    options: list[dict[str, Any]] = [{"digits": d, "lang": lang} for d in (1, 2, 3, 6) for lang in ("en", "zh")]
    script = (
        "import { fmt } from './static/js/format.js';"
        f"const values = {json.dumps(values)}; const options = {json.dumps(options)};"
        "console.log(JSON.stringify(options.map((o) => values.map((v) => fmt(v, o)))));"
    )
    result = subprocess.run(
        [node, "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    browser = json.loads(result.stdout)
    server = [[fmt(v, **o) for v in values] for o in options]
    differ = [
        (o, v, b, s)
        for o, bs, ss in zip(options, browser, server, strict=True)
        for v, b, s in zip(values, bs, ss, strict=True)
        if b != s
    ]
    assert not differ, differ[:10]
