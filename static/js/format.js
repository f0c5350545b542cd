// The one number formatter of the site: captions, tables, chart labels, tooltips and exported captions all write a
// number through fmt, so a lecture never shows the same quantity as "4.9e+2", "490" and "4.90000" on three slides.
// No page state here (tests/js/format.test.mjs runs it under node); i18n.js binds it to the page's language.
//   - significant digits (3 unless told), trailing zeros dropped: 4, not 4.00000; 0.0149; 9412.34 with 6 digits;
//   - plain digits from 0.001 up to 10⁵ (82800), powers of ten outside (4.05×10⁻⁵, 8.28×10⁷), in both languages:
//     a measured value (a norm, a factor, a time) is never written with 万 / 亿, so 65504 stays 65504 beside the
//     same number in a formula and a ratio never reads "6600000亿 倍";
//   - only a count (multiply-adds, parameters, tokens: `count: true`) is written with 万 / 亿 in Chinese, from 10⁴
//     up to 10¹⁶ (8280万, 521亿; 一万亿 reads badly), the way a Chinese reader counts;
//   - axis ticks follow the same rule (app/numbers.py AXIS_NUMBERS, on every axis app/figures/style.py builds): plain
//     digits or powers of ten, never an SI suffix ("20B": billions or bytes?) (Plotly writes powers of ten from 10⁴
//     on, its own threshold);
//   - a true minus sign (U+2212), which never breaks a line after it and lines up with the digits;
//   - no number (null: an overflow in strict JSON, NaN) as an em dash, ±Infinity as ∞.

const SUPERSCRIPT = { '-': '⁻', '+': '', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
export const MINUS = '\u2212';
const LARGE = 1e5;   // ×10ⁿ from here on (82800 still reads at a glance, 828000 does not)
const CHINESE_UNITS = [[1e8, '亿'], [1e4, '万']];
const CHINESE_LIMIT = 16;   // powers of ten again from 10¹⁶

/** An integer exponent as superscript characters: -5 -> ⁻⁵. */
export function superscript(n) {
  return String(n).replace(/[-+0-9]/g, (c) => SUPERSCRIPT[c]);
}

/** A mantissa or plain number with `digits` significant digits, trailing zeros dropped unless `zeros`. */
function plain(size, digits, zeros) {
  const rounded = Number(size.toPrecision(digits));
  const exponent = rounded === 0 ? 0 : Math.floor(Math.log10(rounded) + 1e-12);
  const text = rounded.toFixed(Math.min(100, Math.max(0, digits - 1 - exponent)));
  return zeros || !text.includes('.') ? text : text.replace(/\.?0+$/, '');
}

/** value as a reader wants it; options: digits (significant, default 3; 0 rounds to an integer), lang ('en' or
 *  'zh'), zeros (keep trailing zeros: the digits measured, "1.000"), count (the value counts things: 万 / 亿 in
 *  Chinese). */
export function fmt(value, { digits = 3, lang = 'en', zeros = false, count = false } = {}) {
  if (value === null || value === undefined || typeof value !== 'number' || Number.isNaN(value)) return '—';
  const sign = value < 0 ? MINUS : '';
  if (!Number.isFinite(value)) return `${sign}∞`;
  if (value === 0) return '0';
  const size = Math.abs(value);
  if (digits === 0) {
    const whole = Math.round(size);
    const wholeDigits = Math.min(15, Math.floor(Math.log10(whole) + 1e-12) + 1);   // every digit of the integer, to float64's 15
    return size < 0.5 ? '0' : sign + fmt(whole, { digits: wholeDigits, lang, count });
  }
  const [mantissa, exponentText] = size.toExponential(digits - 1).split('e');
  const exponent = Number(exponentText);   // of the rounded value: 99960 with 3 digits is 1.00×10⁵
  if (count && lang === 'zh' && exponent >= 4 && exponent < CHINESE_LIMIT) {
    const [unit, word] = CHINESE_UNITS.find(([u]) => Number(mantissa) * 10 ** exponent >= u);
    return `${sign}${plain(size / unit, digits, zeros)}${word}`;
  }
  if (exponent < -3 || exponent >= Math.log10(LARGE)) {
    return `${sign}${plain(Number(mantissa), digits, zeros)}×10${superscript(exponent)}`;
  }
  return sign + plain(size, digits, zeros);
}

// ---- Symbols typeset, not typed: x_l -> xₗ, x_0 -> x₀, d_model -> d<sub>model</sub> ----------------------------
const SUBSCRIPT = { 0: '₀', 1: '₁', 2: '₂', 3: '₃', 4: '₄', 5: '₅', 6: '₆', 7: '₇', 8: '₈', 9: '₉', '+': '₊', '-': '₋',
  a: 'ₐ', e: 'ₑ', h: 'ₕ', i: 'ᵢ', j: 'ⱼ', k: 'ₖ', l: 'ₗ', m: 'ₘ', n: 'ₙ', o: 'ₒ', p: 'ₚ', r: 'ᵣ', s: 'ₛ', t: 'ₜ', u: 'ᵤ', v: 'ᵥ', x: 'ₓ' };

/** A label's "name_sub" written as a subscript: Unicode subscript characters where every character has one (xₗ,
 *  x₀, W₁₂), else <sub>…</sub> when `html` (Plotly draws it; d<sub>model</sub>), else left as it is. Only a
 *  letter or symbol directly before the underscore counts, so snake_case words of code (`d_model=64` in a URL
 *  or in code) are left alone: they are followed by = or sit inside backticks. */
export function typeset(text, { html = true } = {}) {
  if (typeof text !== 'string' || !text.includes('_')) return text;
  return text.replace(/(^|[^\w`])([A-Za-zα-ωΑ-Ω∂])_\{?([A-Za-z0-9+-]+)\}?(?![\w=`])/g, (whole, before, base, sub) => {
    if ([...sub].every((c) => c in SUBSCRIPT)) return `${before}${base}${[...sub].map((c) => SUBSCRIPT[c]).join('')}`;
    return html ? `${before}${base}<sub>${sub}</sub>` : whole;
  });
}
