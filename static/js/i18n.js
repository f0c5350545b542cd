import { fmt as formatNumber } from './format.js';

// The page's data block and the translation table the server handed over (app/i18n.py is the source).
const block = document.getElementById('page-data');
export const pageData = block ? JSON.parse(block.textContent) : { lang: 'en' };
export const lang = pageData.lang || 'en';
// The words: the shared strings file every page loads first (window.RESNORM_STRINGS), or, in the one-file offline
// deck, the table inside its data block.
const strings = window.RESNORM_STRINGS || pageData.strings || {};

/** The string for key in the page language, {placeholders} filled from values; unknown keys show as the key. */
export function t(key, values = {}) {
  const text = strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** True when the table has the key (for optional strings such as enum labels). */
export function has(key) {
  return key in strings;
}

/** A number as a reader wants it, in the page language (format.js: significant digits, ×10ⁿ, 万/亿, U+2212). */
export function fmt(value, options = {}) {
  return formatNumber(value, { lang, ...options });
}

/** Join sentences the way the language does: a space in English, nothing in Chinese. */
export function sentences(...parts) {
  return parts.filter(Boolean).join(lang === 'zh' ? '' : ' ');
}
