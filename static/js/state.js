// URL <-> state, TensorFlow-Playground style: the query keys are the request model's field names.
// Model fields (names, types, defaults, bounds) come from /api/schema (TraceConfig) and are never retyped here;
// a page adds its own view keys (e.g. norm_scale) as specs of the same shape.
// Only values that differ from the default are written, so links stay short: /norms?depth=48&norm_position=post.

export const PASSTHROUGH = ['lang', 'hide'];
/** A list typed or linked: commas, semicolons and spaces separate items, in ASCII or full width (，、；). */
export const LIST_SEPARATORS = /[\s,;，、；]+/;

/** Full-width digits and signs (typed with a Chinese input method) as ASCII: "８，２" -> "8,2"; U+2212 as "-". */
export function asciiDigits(text) {
  return String(text).replace(/[\uFF01-\uFF5E]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0))
    .replace(/[\u2212\u2012\u2013]/g, '-').replace(/\u3000/g, ' ');
}

/** One spec per TraceConfig field, from its JSON schema; `defaults` are a page's own starting values (Page.defaults). */
export function specsFromSchema(schema, defaults = {}) {
  return Object.entries(schema.properties).map(([name, p]) => ({
    name, model: true, type: p.type, enum: p.enum, default: name in defaults ? defaults[name] : p.default,
    min: p.minimum ?? p.exclusiveMinimum, max: p.maximum ?? p.exclusiveMaximum,
    exclusiveMin: 'exclusiveMinimum' in p, exclusiveMax: 'exclusiveMaximum' in p,
    label: p.label, label_zh: p.label_zh, help: p.description, help_zh: p.help_zh, group: p.group,
  }));
}

function inRange(spec, n) {
  if (spec.min !== undefined && (spec.exclusiveMin ? n <= spec.min : n < spec.min)) return false;
  if (spec.max !== undefined && (spec.exclusiveMax ? n >= spec.max : n > spec.max)) return false;
  return true;
}

/** A raw query string value as a typed value, or undefined when it is not allowed. */
export function parseValue(spec, raw) {
  if (raw === null || raw === undefined) return undefined;
  if (spec.type === 'list') {
    const items = asciiDigits(raw).split(LIST_SEPARATORS).map((s) => s.trim()).filter(Boolean);
    const ok = items.every((v) => !spec.enum || spec.enum.includes(v));
    const fits = items.length >= (spec.minItems ?? 0) && items.length <= (spec.maxItems ?? Infinity);
    return ok && fits ? items : undefined;
  }
  if (spec.type === 'boolean') {
    if (['true', '1', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
    return undefined;
  }
  if (spec.type === 'integer' || spec.type === 'number') {
    const text = asciiDigits(raw).trim();
    const n = Number(text);
    if (text === '' || !Number.isFinite(n)) return undefined;
    if (spec.type === 'integer' && !Number.isInteger(n)) return undefined;
    return inRange(spec, n) ? n : undefined;
  }
  if (spec.validate && !spec.validate(raw)) return undefined;
  return !spec.enum || spec.enum.includes(raw) ? raw : undefined;
}

export function formatValue(spec, value) {
  return spec.type === 'list' ? value.join(',') : String(value);
}

export function sameValue(spec, a, b) {
  if (spec.type === 'list') return Array.isArray(a) && Array.isArray(b) && a.join(',') === b.join(',');
  if (spec.type === 'number') return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  return a === b;
}

export function defaults(specs) {
  return Object.fromEntries(specs.map((s) => [s.name, structuredClone(s.default)]));
}

/** State from a query string: defaults for missing keys; invalid values are dropped and reported by name. */
export function readQuery(specs, search) {
  const params = new URLSearchParams(search);
  const state = defaults(specs);
  const invalid = [];
  const rejected = {};  // name -> the value as the link had it, for the notice
  for (const spec of specs) {
    if (!params.has(spec.name)) continue;
    const value = parseValue(spec, params.get(spec.name));
    if (value === undefined) {
      invalid.push(spec.name);
      rejected[spec.name] = params.get(spec.name);
    } else state[spec.name] = value;
  }
  const extra = Object.fromEntries(PASSTHROUGH.filter((k) => params.has(k)).map((k) => [k, params.get(k)]));
  return { state, invalid, rejected, extra };
}

/** The query string for a state: non-default values in spec order, then lang/hide as they came. */
export function toQuery(specs, state, extra = {}) {
  const params = new URLSearchParams();
  for (const spec of specs) {
    if (!sameValue(spec, state[spec.name], spec.default)) params.set(spec.name, formatValue(spec, state[spec.name]));
  }
  for (const [key, value] of Object.entries(extra)) if (value) params.set(key, value);
  const text = params.toString().replace(/%2C/g, ',').replace(/%3A/g, ':');  // both are safe in a query: keep links readable
  return text ? `?${text}` : '';
}

/** The live page state, mirrored into the URL; back/forward restore it. */
export class UrlState {
  constructor(specs, location = window.location) {
    this.specs = specs;
    const { state, invalid, rejected, extra } = readQuery(specs, location.search);
    this.state = state;
    this.invalid = invalid;
    this.rejected = rejected;
    this.extra = extra;
    this.listeners = [];
    window.addEventListener('popstate', () => {
      const read = readQuery(this.specs, window.location.search);
      this.state = read.state;
      this.extra = read.extra;
      this.listeners.forEach((fn) => fn(this.state, 'pop'));
    });
    if (invalid.length) this.write(false);  // drop the bad values from the address bar too
  }

  spec(name) {
    return this.specs.find((s) => s.name === name);
  }

  /** Set some values; push a history entry (or replace it) and tell the listeners. */
  update(patch, { push = true } = {}) {
    const next = { ...this.state, ...patch };
    const changed = this.specs.some((s) => !sameValue(s, next[s.name], this.state[s.name]));
    this.state = next;
    if (!changed) return false;
    this.write(push);
    this.listeners.forEach((fn) => fn(this.state, 'update'));
    return true;
  }

  write(push) {
    const url = window.location.pathname + this.query() + window.location.hash;
    if (push) window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
  }

  query(extra = this.extra) {
    return toQuery(this.specs, this.state, extra);
  }

  onChange(fn) {
    this.listeners.push(fn);
  }

  /** Only the request-model fields: the body for /api/trace. */
  modelConfig(state = this.state) {
    return Object.fromEntries(this.specs.filter((s) => s.model).map((s) => [s.name, state[s.name]]));
  }

  hidden() {
    return new Set((this.extra.hide || '').split(',').map((s) => s.trim()).filter(Boolean));
  }
}
