// The page's data block and the translation table the server handed over (app/i18n.py is the source).
const block = document.getElementById('page-data');
export const pageData = block ? JSON.parse(block.textContent) : { strings: {}, lang: 'en' };
export const lang = pageData.lang || 'en';

/** The string for key in the page language, {placeholders} filled from values; unknown keys show as the key. */
export function t(key, values = {}) {
  const text = pageData.strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** True when the table has the key (for optional strings such as enum labels). */
export function has(key) {
  return key in pageData.strings;
}

/** A number as a reader wants it: 3 significant digits, exponent only when very large or small. */
export function fmt(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e5)) return value.toExponential(2).replace('e+', 'e');
  return Number(value.toPrecision(3)).toString();
}

/** Join sentences the way the language does: a space in English, nothing in Chinese. */
export function sentences(...parts) {
  return parts.filter(Boolean).join(lang === 'zh' ? '' : ' ');
}
