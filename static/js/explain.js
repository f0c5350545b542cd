// What a setting allows, in the page's language: the words beside a refused field, in a bad-link notice and under a
// server's 422. The bounds are the spec's, and a spec's bounds come from the request model's JSON schema
// (state.js specsFromSchema, lessons.js scalarSpecs): nothing here knows a number of its own.
import { t, fmt } from './i18n.js';

/** A bound as written in a range: every digit of it (2147483647, 1×10⁻⁶), never rounded to three. */
export function bound(value) {
  return fmt(value, { digits: 15 });
}

/** The allowed values of a spec in words: "a whole number from 1 to 96", "a number above 0, at most 16"; a spec whose
 *  values depend on the others (allowedFor(state)) lists those. */
export function rangeText(spec, { state = null, label = String } = {}) {
  if (spec.type === 'list' && !spec.enum) return t('range.list', { min: spec.minItems ?? 1, max: spec.maxItems ?? '∞' });
  const listed = (state && spec.allowedFor?.(state)) || (spec.type !== 'list' && spec.enum);
  if (listed) return t('range.enum', { values: listed.map(label).join(t('budget.list_sep')) });
  if (spec.type === 'list') return t('range.items', { min: spec.minItems ?? 1, max: spec.maxItems ?? '∞' });
  if (spec.type !== 'integer' && spec.type !== 'number') return '';
  const kind = t(spec.type === 'integer' ? 'range.integer' : 'range.number');
  const min = spec.min === undefined ? undefined : bound(spec.min);
  const max = spec.max === undefined ? undefined : bound(spec.max);
  if (min !== undefined && max !== undefined) return t(spec.exclusiveMin ? 'range.above_to' : 'range.between', { kind, min, max });
  if (min !== undefined) return t(spec.exclusiveMin ? 'range.above' : 'range.at_least', { kind, min });
  if (max !== undefined) return t('range.at_most', { kind, max });
  return t('range.any', { kind });
}

/** The setting an error's field names ("depth", "runs.0.depth", "x.0"): its spec and, for a list entry, its index. */
export function settingOf(field, specFor) {
  const parts = String(field || '').split('.');
  const names = parts.filter((p) => !/^\d+$/.test(p));
  for (const name of [...names].reverse()) {
    const spec = specFor(name);
    if (!spec) continue;
    const after = parts[parts.lastIndexOf(name) + 1];
    return { spec, entry: /^\d+$/.test(after ?? '') && spec.type === 'list' ? Number(after) : null };
  }
  return null;
}
