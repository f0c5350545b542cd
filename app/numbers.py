"""The server's twin of static/js/format.js: numbers written the one way the site writes them (captions and steps
the server composes). Significant digits with trailing zeros dropped, 4.05×10⁻⁵ below 0.001, 8.28×10⁷ from 10⁵ in
English and 8280万 / 521亿 in Chinese, a true minus sign (U+2212). tests/test_numbers.py checks that both agree."""

from __future__ import annotations

import math

MINUS = "\u2212"
SUPERSCRIPT = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")
LARGE_EN = 5  # English writes ×10ⁿ from 10⁵ on
CHINESE_UNITS = ((8, "亿"), (4, "万"))
CHINESE_LIMIT = 16


def _plain(size: float, digits: int, zeros: bool) -> str:
    rounded = float(f"{size:.{digits - 1}e}")
    exponent = 0 if rounded == 0 else math.floor(math.log10(rounded) + 1e-12)
    text = f"{rounded:.{min(100, max(0, digits - 1 - exponent))}f}"
    return text if zeros or "." not in text else text.rstrip("0").rstrip(".")


def fmt(value: float | None, digits: int = 3, lang: str = "en", zeros: bool = False) -> str:
    """value as a reader wants it (see the module docstring); None and NaN as an em dash, ±inf as ∞."""
    if value is None or isinstance(value, bool) or math.isnan(value):
        return "—"
    sign = MINUS if value < 0 else ""
    if math.isinf(value):
        return f"{sign}∞"
    if value == 0:
        return "0"
    size = abs(value)
    if digits == 0:
        whole = math.floor(size + 0.5)
        return "0" if whole == 0 else sign + fmt(whole, digits=max(1, len(str(whole))), lang=lang)
    mantissa, _, power = f"{size:.{digits - 1}e}".partition("e")
    exponent = int(power)
    if lang == "zh" and 4 <= exponent < CHINESE_LIMIT:
        unit, word = next((u, w) for u, w in CHINESE_UNITS if exponent >= u)
        return f"{sign}{_plain(size / 10**unit, digits, zeros)}{word}"
    if exponent < -3 or (exponent >= LARGE_EN and not (lang == "zh" and exponent < CHINESE_LIMIT)):
        return f"{sign}{_plain(float(mantissa), digits, zeros)}×10{str(exponent).translate(SUPERSCRIPT)}"
    return sign + _plain(size, digits, zeros)
