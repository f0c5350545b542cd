"""The server's twin of static/js/format.js: numbers written the one way the site writes them (captions and steps
the server composes). tests/test_numbers.py checks that both agree. The rule, in both languages:

- significant digits (3 unless told), trailing zeros dropped; a true minus sign (U+2212); None / NaN as an em dash;
- plain digits from 0.001 up to 10⁵ (82800), powers of ten outside (4.05×10⁻⁵, 8.28×10⁷), in English and Chinese
  alike: a measured value (a norm, a factor, a time) is never written with 万 / 亿, so 65504 stays 65504;
- only a count (multiply-adds, parameters, tokens: ``count=True``) is written with 万 / 亿 in Chinese, from 10⁴ up
  to 10¹⁶ (8280万, 521亿);
- chart axes never print SI suffixes ("20B": billions or bytes?): every Plotly axis takes ``AXIS_NUMBERS`` below
  (app/figures/style.py's ``axis``; every figure is built there), so its ticks are plain digits or powers of ten (Plotly
  writes powers from 10⁴ on, its own threshold; its default draws no thousands separators).
"""

from __future__ import annotations

import math

MINUS = "\u2212"
SUPERSCRIPT = str.maketrans("-+0123456789", "⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹")
LARGE = 5  # ×10ⁿ from 10⁵ on (82800 still reads at a glance, 828000 does not)
CHINESE_UNITS = ((8, "亿"), (4, "万"))
CHINESE_LIMIT = 16  # powers of ten again from 10¹⁶ (一万亿 reads badly)
AXIS_NUMBERS = {"exponentformat": "power"}  # a Plotly axis's ticks by the same rule


def _plain(size: float, digits: int, zeros: bool) -> str:
    rounded = float(f"{size:.{digits - 1}e}")
    exponent = 0 if rounded == 0 else math.floor(math.log10(rounded) + 1e-12)
    text = f"{rounded:.{min(100, max(0, digits - 1 - exponent))}f}"
    return text if zeros or "." not in text else text.rstrip("0").rstrip(".")


def fmt(value: float | None, digits: int = 3, lang: str = "en", zeros: bool = False, count: bool = False) -> str:
    """value as a reader wants it (see the module docstring); None and NaN as an em dash, ±inf as ∞; `count`: the
    value counts things (万 / 亿 in Chinese)."""
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
        if whole == 0:
            return "0"
        whole_digits = min(15, math.floor(math.log10(whole) + 1e-12) + 1)  # every digit of the integer, to float64's 15
        return sign + fmt(whole, digits=whole_digits, lang=lang, count=count)
    mantissa, _, power = f"{size:.{digits - 1}e}".partition("e")
    exponent = int(power)
    if count and lang == "zh" and 4 <= exponent < CHINESE_LIMIT:
        unit, word = next((u, w) for u, w in CHINESE_UNITS if exponent >= u)
        return f"{sign}{_plain(size / 10**unit, digits, zeros)}{word}"
    if exponent < -3 or exponent >= LARGE:
        return f"{sign}{_plain(float(mantissa), digits, zeros)}×10{str(exponent).translate(SUPERSCRIPT)}"
    return sign + _plain(size, digits, zeros)
