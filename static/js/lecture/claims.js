// A slide's claim, evaluated on the answers the slide just received: the JavaScript twin of
// app/experiments/lecture/claims.py (same paths, same value ops, same checks; tests/browser/test_lecture.py
// compares the two). The caption is the claim's statement with these measured values filled in.
import { t, lang, fmt } from '../i18n.js';

/** Follow 'layers[15:].token_cosine', 'sweep[-1].max_prob', 'runs[0].done.final_loss' into an answer. */
export function readPath(data, path) {
  return walk(data, path.match(/[^.[\]]+|\[[^\]]*\]/g) || []);
}

function walk(data, parts) {
  if (!parts.length || data === null || data === undefined) return data ?? null;
  const [head, ...rest] = parts;
  if (!head.startsWith('[')) return walk(data[head], rest);
  const inside = head.slice(1, -1);
  if (inside === '*' || inside.includes(':')) {
    const [low, high] = inside === '*' ? ['', ''] : inside.split(':');
    const items = data.slice(low ? Number(low) : 0, high ? Number(high) : undefined);   // negatives count from the end
    return items.map((item) => walk(item, rest));
  }
  const index = Number(inside);
  return walk(data.at(index), rest);
}

const divide = (a, b) => (a === null || b === null || b === 0 ? null : a / b);

function elementwise(fn, a, b) {
  if (Array.isArray(a) && Array.isArray(b)) return a.map((x, i) => fn(x, b[i]));
  if (Array.isArray(a)) return a.map((x) => fn(x, b));
  return fn(a, b);
}

function value(spec, answers, known) {
  if ('const' in spec) return spec.const;
  if ('source' in spec) return readPath(answers[spec.source], spec.path);
  if ('sources' in spec) return spec.sources.map((i) => readPath(answers[i], spec.path));
  const arg = Array.isArray(spec.of) ? null : known[spec.of];
  switch (spec.op) {
    case 'ratio': return elementwise(divide, known[spec.of[0]], known[spec.of[1]]);
    case 'root': return arg === null || arg < 0 ? null : arg ** (1 / spec.n);
    case 'add': {
      const [a, b] = spec.of.map((name) => known[name]);
      return a === null || b === null ? null : a + b;
    }
    case 'one_minus': return arg === null ? null : 1 - arg;
    case 'sumsq': {
      const items = Array.isArray(arg) ? arg : [arg];
      return items.some((v) => v === null) ? null : items.reduce((s, v) => s + v * v, 0);
    }
    case 'min': case 'max': {
      const items = arg.flat(Infinity);   // the same path in several sources: one list
      return items.some((v) => v === null) ? null : Math[spec.op](...items);
    }
    case 'first_over': {
      const i = arg.findIndex((v) => v !== null && v > spec.bound);
      return i < 0 ? null : i + 1;
    }
    case 'last_over': {
      let i = arg.findIndex((v) => v !== null && v > spec.bound);
      if (i < 0) return null;
      while (i + 1 < arg.length && arg[i + 1] !== null && arg[i + 1] > spec.bound) i += 1;
      return i + 1;
    }
    case 'slice': {
      const start = known[spec.start];
      const stop = spec.stop ? known[spec.stop] : undefined;
      return start === null ? null : arg.slice(start - 1 + (spec.shift ?? 0), stop ?? undefined);
    }
    default: throw new Error(`unknown value op ${spec.op}`);
  }
}

/** Every named value of a claim, from the answers of the slide's sources (in order). */
export function evaluate(claim, answers) {
  const known = {};
  for (const [name, spec] of Object.entries(claim.values)) known[name] = value(spec, answers, known);
  return known;
}

function passes(check, v) {
  const { op, bound } = check;
  if (op === 'null') return v === null;
  if (v === null || typeof v === 'boolean' || typeof bound === 'boolean' || !Number.isFinite(v)) return op === '==' && v === bound;
  if (op === '<') return v < bound;
  if (op === '>') return v > bound;
  if (op === 'between') return bound[0] <= v && v <= bound[1];
  if (op === 'close') return Math.abs(v - bound) <= Math.max((check.rel ?? 1e-9) * Math.max(Math.abs(v), Math.abs(bound)), check.abs ?? 0);
  if (op === '==') return v === bound;
  throw new Error(`unknown check op ${op}`);
}

/** Names of the values whose checks fail on these measurements (empty: the claim holds). */
export function failures(claim, measured) {
  return claim.checks.filter((check) => {
    const v = measured[check.value];
    const items = Array.isArray(v) ? v.flat(Infinity) : [v];   // a range on several seeds: every entry
    return !items.length || !items.every((item) => passes(check, item));
  }).map((check) => check.value);
}

/** A measured number through the site's one formatter (format.js) with `digits` significant digits (0: an
 *  integer); no number (an overflow in strict JSON) says so in words. */
export function formatNumber(v, digits = 3) {
  if (typeof v === 'boolean') return String(v);
  if (v === null || v === undefined || !Number.isFinite(v)) return t('lecture.overflow');
  return fmt(v, { digits });
}

/** The claim's statement in the page language, {name} or {name|digits} replaced by measured values. */
export function statement(claim, measured) {
  return claim.statement[lang].replace(/\{(\w+)(?:\|(\d+))?\}/g, (whole, name, digits) =>
    (name in measured ? formatNumber(measured[name], digits === undefined ? 3 : Number(digits)) : whole));
}
