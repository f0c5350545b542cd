// Shared by the four lesson pages (/chain, /layernorm, /softmax, /precision): URL specs derived from a lesson
// request model's schema (handed over in pageData.extra.schema), vector text boxes and sliders the page binds
// itself, and number formatting that keeps enough digits to be exact.
import { pageData, t, fmt } from './i18n.js';
import { LIST_SEPARATORS, asciiDigits } from './state.js';
import { rangeText } from './explain.js';

/** The page's URL state, remembered from the first chart load so the page's own buttons can update it. */
export const handle = { url: null };

export function remember(ctx) {
  handle.url = ctx.url;
}

/** Specs for scalar fields (number, integer, enum) of a schema; labels are i18n keys `<prefix>.<name>`. */
export function scalarSpecs(prefix, names, schema = pageData.extra.schema) {
  const defaults = pageData.defaults || {};  // the page's own starting values (Page.defaults), e.g. /chain's g
  return names.map((name) => {
    const p = schema[name];
    return {
      name, type: p.type, enum: p.enum, default: name in defaults ? defaults[name] : p.default,
      min: p.minimum ?? p.exclusiveMinimum, max: p.maximum ?? p.exclusiveMaximum,
      exclusiveMin: 'exclusiveMinimum' in p, exclusiveMax: 'exclusiveMaximum' in p,
      group: p.group || 'page', label: `${prefix}.${name}`, help: `${prefix}.${name}.help`,
    };
  });
}

/** A vector kept in the URL as "8,2,2,4" and edited with the page's own text box (not the settings panel); its label
 *  is the i18n key `<prefix>.<name>`, its length bounds the schema's. */
export function vectorSpec(name, prefix, schema = pageData.extra.schema) {
  const p = schema[name];
  return { name, type: 'list', default: p.default.map(String), minItems: p.minItems, maxItems: p.maxItems, internal: true,
    label: `${prefix}.${name}`, validate: (items) => vectorProblem({ minItems: p.minItems, maxItems: p.maxItems }, items) === null };
}

/** Why a typed vector cannot be sent (null: it can): too few or too many entries, or an entry that is no number. */
export function vectorProblem(spec, items) {
  if (items.length < (spec.minItems ?? 1) || items.length > (spec.maxItems ?? Infinity)) return { entry: null };
  const bad = items.findIndex((item) => item.trim() === '' || !Number.isFinite(Number(item)));
  return bad < 0 ? null : { entry: bad };
}

/** A page-only number (e.g. a slider) that lives in the URL but not in the settings panel. */
export function sliderSpec(name, fallback, min, max) {
  return { name, type: 'number', default: fallback, min, max, internal: true };
}

/** Text "8, 2 2;4" or "８，２、２；４" -> ["8", "2", "2", "4"]. */
export function splitVector(text) {
  return asciiDigits(text).split(LIST_SEPARATORS).map((s) => s.trim()).filter(Boolean);
}

/** URL list values are strings; the API wants numbers (a non-number becomes NaN -> null -> a 422 naming x.i). */
export function numbers(values) {
  return values.map(Number);
}

/** Bind a text box + Apply button to a vector key of the URL state; a vector the server would refuse is refused
 *  beside the box, in the page's language, with what it takes, and the old one is put back. */
export function bindVector(name) {
  const input = document.getElementById(`vec-${name}`);
  const button = document.getElementById(`apply-${name}`);
  if (!input) return;
  const apply = () => {
    document.getElementById(`note-${name}`)?.remove();
    const items = splitVector(input.value);
    const url = handle.url;
    const spec = url?.spec(name);
    const problem = spec ? vectorProblem(spec, items) : null;
    if (!problem) return url?.update({ [name]: items });
    const setting = t(spec.label);
    const text = problem.entry === null
      ? t('controls.refused', { value: input.value.trim() || t('controls.empty'), setting, range: rangeText(spec), old: url.state[name].join(', ') })
      : t('controls.refused', { value: items[problem.entry], setting: t('range.entry', { n: problem.entry + 1, setting }),
        range: t('range.finite'), old: url.state[name].join(', ') });
    input.value = url.state[name].join(', ');
    const note = el('p', { class: 'field-note', id: `note-${name}`, role: 'alert' }, text);
    (input.closest('.lesson-inputs') || input).after(note);
  };
  button?.addEventListener('click', apply);
  input.addEventListener('keydown', (event) => { if (event.key === 'Enter') apply(); });
}

export function syncVector(name, values) {
  const input = document.getElementById(`vec-${name}`);
  if (input && document.activeElement !== input) input.value = values.join(', ');
}

/** Bind a range slider (id slider-<name>) and its <output id="out-<name>"> to a number key; `toState` maps the slider position. */
export function bindSlider(name, { toState = Number, show = String } = {}) {
  const slider = document.getElementById(`slider-${name}`);
  const output = document.getElementById(`out-${name}`);
  if (!slider) return;
  slider.addEventListener('input', () => {
    const value = toState(Number(slider.value));
    if (output) output.textContent = show(value);
    handle.url?.update({ [name]: value }, { push: false });
  });
}

export function syncSlider(name, value, { fromState = Number, show = String } = {}) {
  const slider = document.getElementById(`slider-${name}`);
  const output = document.getElementById(`out-${name}`);
  if (slider && document.activeElement !== slider) slider.value = String(fromState(value));
  if (output) output.textContent = show(value);
}

/** A number with `digits` significant digits through the site's one formatter (format.js); null (overflow) says so. */
export function precise(value, digits = 6) {
  if (value === null || value === undefined || !Number.isFinite(value)) return t('lesson.overflow');
  return fmt(value, { digits });
}

/** Create an element with text or children, for the step lists and tables the pages render. */
export function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
  node.append(...[].concat(children).map((c) => (typeof c === 'string' ? document.createTextNode(c) : c)));
  return node;
}

/** Render a table the chart's builder made (chart.tables[name], app/figures/chart.py): its caption into
 *  #<id>-caption and its rows of text cells into #<id>-body (a header cell is <th scope="row">, a `lost` cell is
 *  marked). Embeds, which show the chart only, have no such table. */
export function renderTable(id, table) {
  const body = document.getElementById(`${id}-body`);
  if (!body || !table) return;
  document.getElementById(`${id}-caption`).textContent = table.caption;
  body.replaceChildren(...table.rows.map((cells) => el('tr', {}, cells.map((cell) => (cell.header
    ? el('th', { scope: 'row' }, cell.text)
    : el('td', cell.lost ? { class: 'lost' } : {}, cell.text))))));
}
