"""app/numbers.py, the server's twin of static/js/format.js: the same table of cases as tests/js/format.test.mjs
(tests/js/format_cases.json), and both formatters agree on a few thousand values (run through node)."""

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
TABLE = json.loads((ROOT / "tests" / "js" / "format_cases.json").read_text(encoding="utf-8"))
SPECIAL: dict[str, float] = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@pytest.mark.parametrize("value, options, expected", TABLE["cases"])
def test_numbers_are_written_the_site_way(value, options, expected):
    """The table tests/js/format.test.mjs runs through static/js/format.js."""
    assert fmt(SPECIAL[value] if isinstance(value, str) else value, **options) == expected


def test_a_measured_value_never_takes_wan_or_yi():
    texts = [
        fmt(m * 10.0**e, digits=d, lang="zh")
        for e in range(3, 21)
        for m in (1, 1.000000098, 6.5504)
        for d in (1, 3, 10)
    ]
    assert not [text for text in texts if "万" in text or "亿" in text]
    assert fmt(65504, digits=6, lang="zh") == "65504"
    assert MINUS in fmt(-1)


def test_the_server_and_the_browser_write_numbers_alike():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    values = [sign * m * 10.0**e for e in range(-40, 40, 3) for m in (1, 1.2345, 4.999, 9.9996) for sign in (1, -1)]
    options: list[dict[str, Any]] = [
        {"digits": d, "lang": lang, "count": count}
        for d in (0, 1, 2, 3, 6)
        for lang in ("en", "zh")
        for count in (False, True)
    ]
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
