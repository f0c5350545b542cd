// The settings panel, generated from the specs (TraceConfig's schema + the page's own view keys).
// Presets come first; `hide=` in the URL leaves chosen controls out (classroom links).
import { t, lang, has } from './i18n.js';
import { sameValue, formatValue, asciiDigits } from './state.js';
import { rangeText } from './explain.js';

const GROUP_ORDER = ['page', 'model', 'norm', 'residual', 'size', 'numerics', 'view'];
const COLLAPSED = ['size'];  // folded unless a value differs from its default: keeps the panel within 720 px

function collapsible(fieldset, members, state) {
  const details = element('details', { class: 'group' }, [element('summary', {}, [fieldset.querySelector('legend').textContent])]);
  fieldset.querySelector('legend').classList.add('visually-hidden');
  details.open = members.some((spec) => !sameValue(spec, state[spec.name], spec.default));
  details.append(fieldset);
  return details;
}

export function labelOf(spec) {
  if (spec.model) return lang === 'zh' ? spec.label_zh || spec.label : spec.label;
  return t(spec.label, spec.labelValues);
}

export function helpOf(spec) {
  if (spec.model) return lang === 'zh' ? spec.help_zh || spec.help : spec.help;
  return spec.help ? t(spec.help) : '';
}

export function optionLabel(spec, value) {
  if (spec.optionLabel) return spec.optionLabel(value);
  const key = `enum.${spec.name}.${value}`;
  return has(key) ? t(key) : String(value);
}

function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function selectFor(spec, id, value, values, { optional = false } = {}) {
  const select = element('select', { id, name: spec.name });
  if (optional) select.append(element('option', { value: '' }, [t('controls.variant_none')]));
  for (const v of values) select.append(element('option', { value: v }, [optionLabel(spec, v)]));
  select.value = value ?? '';
  return select;
}

function inputFor(spec, value) {
  const id = `ctl-${spec.name}`;
  if (spec.enum && spec.type !== 'list') return selectFor(spec, id, value, spec.enum);
  if (spec.type === 'string') {  // free text (e.g. /compare's per-variant changes); checked by spec.validate
    const text = element('input', { id, name: spec.name, type: 'text', spellcheck: 'false', autocomplete: 'off', placeholder: spec.placeholder });
    text.value = value;
    return text;
  }
  if (spec.type === 'boolean') {
    const box = element('input', { id, name: spec.name, type: 'checkbox' });
    box.checked = Boolean(value);
    return box;
  }
  const step = spec.type === 'integer' ? '1' : 'any';
  const input = element('input', { id, name: spec.name, type: 'number', step, inputmode: 'decimal',
    min: spec.exclusiveMin ? undefined : spec.min, max: spec.exclusiveMax ? undefined : spec.max });
  input.value = value;
  return input;
}

function readInput(spec, input) {
  if (spec.type === 'boolean') return input.checked;
  if (spec.enum || spec.type === 'string') return input.value.trim();
  const text = asciiDigits(input.value).trim();
  return text === '' ? NaN : Number(text);
}

/** One labelled row; a list spec (compare's variants) becomes one select per slot. */
function controlRow(spec, value, onInput) {
  const help = helpOf(spec);
  if (spec.type === 'list') {
    const box = element('div', { class: 'control wide', 'data-control': spec.name });
    box.append(element('span', { class: 'list-label', id: `lbl-${spec.name}` }, [labelOf(spec)]));
    for (let i = 0; i < spec.maxItems; i += 1) {
      const id = `ctl-${spec.name}-${i}`;
      const select = selectFor(spec, id, value[i], spec.enum, { optional: i >= spec.minItems });
      const row = element('div', { class: 'control' }, [element('label', { for: id }, [t('controls.variant_n', { n: i + 1 })]), select]);
      select.addEventListener('change', () => onInput(spec));
      box.append(row);
    }
    return box;
  }
  const input = inputFor(spec, value);
  const label = element('label', { for: input.id, title: help }, [labelOf(spec)]);
  if (help) input.setAttribute('title', help);
  input.addEventListener('change', () => onInput(spec));
  return element('div', { class: 'control', 'data-control': spec.name }, [label, input]);
}

/** Build the panel into `container`; returns {sync(state), markInvalid(fields)}. */
export function buildControls(container, url, { presets = null, onPreset = null, onRefuse = null } = {}) {
  const hidden = url.hidden();
  const visible = url.specs.filter((s) => !hidden.has(s.name) && !s.internal);
  container.replaceChildren();
  let presetSelect = null;
  let limits = {};  // per size, the largest value that fits the compute budget with the others as they are
  if (presets && !hidden.has('preset')) presetSelect = presetPanel(container, presets, onPreset);

  const note = (spec, text) => {
    const row = container.querySelector(`[data-control="${spec.name}"]`);
    if (!row) return;
    const box = element('p', { class: 'field-note', id: `note-${spec.name}`, role: 'alert' }, [text]);
    row.after(box);
    row.querySelector('input, select')?.setAttribute('aria-describedby', box.id);
    row.closest('details')?.setAttribute('open', '');
  };
  const clearNotes = () => {
    container.querySelectorAll('.field-note').forEach((n) => n.remove());
    container.querySelectorAll('[aria-describedby^="note-"]').forEach((n) => n.removeAttribute('aria-describedby'));
  };
  /** A refused value: said beside the field in the page's language with what it allows, the old value put back. */
  const refuse = (spec, value, text) => {
    writeInput(container, spec, url.state[spec.name], { force: true });
    note(spec, text ?? refusal(spec, value, url.state));
  };
  const onInput = (spec) => {
    const input = container.querySelector(`#ctl-${spec.name}`);
    const value = spec.type === 'list' ? readList(container, spec) : readInput(spec, input);
    clearNotes();
    if (!isValid(spec, value, url.state)) return refuse(spec, value);
    const limit = limits[spec.name]?.max;
    if (limit !== undefined && limit !== null && value > limit) {  // over the compute budget: nothing is sent
      const text = t('budget.limit', { setting: labelOf(spec), max: limit, value });
      onRefuse?.(text);
      return refuse(spec, value, text);
    }
    const next = { ...url.state, [spec.name]: value };
    const patch = { [spec.name]: value, ...followers(url.specs, next, (other, old, to) => note(other, t('controls.adjusted',
      { setting: labelOf(other), old: shown(other, old), value: shown(other, to), range: rangeText(other, { state: next, label: (v) => optionLabel(other, v) }) }))) };
    url.update(patch);
  };
  for (const group of GROUP_ORDER) {
    const members = visible.filter((s) => (s.group || 'page') === group);
    if (!members.length) continue;
    const fieldset = element('fieldset', {}, [element('legend', {}, [t(`controls.group.${group}`)])]);
    members.forEach((spec) => fieldset.append(controlRow(spec, url.state[spec.name], onInput)));
    container.append(COLLAPSED.includes(group) ? collapsible(fieldset, members, url.state) : fieldset);
  }
  container.append(buttons(url));
  if (hidden.size) container.append(element('p', { class: 'hidden-note' }, [t('controls.hidden_note')]));
  else container.append(classroomPanel(url));

  return {
    sync(state) {
      for (const spec of visible) writeInput(container, spec, state[spec.name]);
      if (presetSelect && presets) presetSelect.value = presets.current() || '';
    },
    /** Limits from POST /api/budget: the number inputs stop at them and values above are refused before a request. */
    setLimits(next) {
      limits = next || {};
      for (const [name, limit] of Object.entries(limits)) {
        const input = container.querySelector(`#ctl-${name}`);
        const spec = url.spec(name);
        if (input && spec && limit.max !== null) input.setAttribute('max', String(Math.min(limit.max, spec.max ?? Infinity)));
        else if (input && spec?.max !== undefined) input.setAttribute('max', String(spec.max));
      }
    },
    markInvalid(fields) {
      container.querySelectorAll('[aria-invalid="true"]').forEach((n) => n.setAttribute('aria-invalid', 'false'));
      fields.forEach((f) => {
        const input = container.querySelector(`#ctl-${f.split('.').pop()}`);
        input?.setAttribute('aria-invalid', 'true');
        input?.closest('details')?.setAttribute('open', '');
      });
    },
  };
}

/** A value as the page shows it in a sentence: an option's label, "(empty)" for no text. */
function shown(spec, value) {
  if (value === '' || value === undefined || value === null || (typeof value === 'number' && Number.isNaN(value))) return t('controls.empty');
  if (spec.type === 'list') return value.map((v) => optionLabel(spec, v)).join(t('budget.list_sep'));
  return spec.enum ? optionLabel(spec, value) : formatValue(spec, value);
}

/** Why a value was refused, what the setting takes, and the value kept. */
export function refusal(spec, value, state) {
  const values = { setting: labelOf(spec), value: shown(spec, value), old: shown(spec, state[spec.name]),
    range: rangeText(spec, { state, label: (v) => optionLabel(spec, v) }) };
  if (spec.type === 'string' && !spec.enum) return t('controls.refused_free', { ...values, help: helpOf(spec) });
  const blank = value === '' || (typeof value === 'number' && Number.isNaN(value));
  return t(blank ? 'controls.refused_blank' : 'controls.refused', values);
}

/** Settings whose allowed values depend on another (GroupNorm's groups on the width): when a change leaves one of
 *  them outside, it moves to the nearest allowed value before anything is sent, and onMove says so. */
export function followers(specs, state, onMove = () => {}) {
  const patch = {};
  for (const spec of specs) {
    const allowed = spec.allowedFor?.(state);
    if (!allowed?.length || allowed.includes(state[spec.name])) continue;
    const to = allowed.reduce((best, v) => (Math.abs(v - state[spec.name]) < Math.abs(best - state[spec.name]) ? v : best));
    patch[spec.name] = to;
    onMove(spec, state[spec.name], to);
  }
  return patch;
}

export function isValid(spec, value, state = {}) {
  if (spec.validate) return spec.validate(value);
  if (spec.type === 'list') return value.length >= (spec.minItems ?? 0) && value.length <= (spec.maxItems ?? Infinity);
  const allowed = spec.allowedFor?.(state);
  if (allowed && !allowed.includes(value)) return false;
  if (spec.type === 'integer' && !Number.isInteger(value)) return false;
  if (spec.type === 'integer' || spec.type === 'number') {
    if (!Number.isFinite(value)) return false;
    if (spec.min !== undefined && (spec.exclusiveMin ? value <= spec.min : value < spec.min)) return false;
    if (spec.max !== undefined && (spec.exclusiveMax ? value >= spec.max : value > spec.max)) return false;
  }
  return true;
}

function readList(container, spec) {
  const values = [];
  for (let i = 0; i < spec.maxItems; i += 1) {
    const v = container.querySelector(`#ctl-${spec.name}-${i}`)?.value;
    if (v) values.push(v);
  }
  return values;
}

function writeInput(container, spec, value, { force = false } = {}) {
  if (spec.type === 'list') {
    for (let i = 0; i < spec.maxItems; i += 1) {
      const select = container.querySelector(`#ctl-${spec.name}-${i}`);
      if (select) select.value = value[i] ?? '';
    }
    return;
  }
  const input = container.querySelector(`#ctl-${spec.name}`);
  if (!input) return;
  if (spec.type === 'boolean') input.checked = Boolean(value);
  else if (force || !(document.activeElement === input && sameValue(spec, readInput(spec, input), value))) input.value = value;
  input.setAttribute('aria-invalid', 'false');
}

function presetPanel(container, presets, onPreset) {
  const select = element('select', { id: 'ctl-preset', name: 'preset' });
  select.append(element('option', { value: '' }, [t('controls.custom')]));
  for (const p of presets.list()) select.append(element('option', { value: p.key, title: presets.description(p) }, [presets.name(p)]));
  select.value = presets.current() || '';
  select.addEventListener('change', () => select.value && onPreset(select.value));
  const label = element('label', { for: 'ctl-preset' }, [t('controls.preset')]);
  container.append(element('fieldset', { class: 'presets' }, [
    element('div', { class: 'control', 'data-control': 'preset' }, [label, select]),
    element('p', { class: 'preset-help' }, [t('controls.preset_help')]),
  ]));
  return select;
}

function buttons(url) {
  const reset = element('button', { type: 'button', id: 'reset' }, [t('controls.reset')]);
  reset.addEventListener('click', () => {
    const hidden = url.hidden();
    const patch = Object.fromEntries(url.specs.filter((s) => !hidden.has(s.name)).map((s) => [s.name, structuredClone(s.default)]));
    url.update(patch);
  });
  return element('div', { class: 'row-buttons' }, [reset]);
}

/** A lecturer ticks controls to hide and copies a link that keeps the current settings. */
function classroomPanel(url) {
  const details = element('details', { class: 'classroom' }, [element('summary', {}, [t('controls.classroom')]),
    element('p', {}, [t('controls.classroom_help')])]);
  const output = element('input', { type: 'text', readonly: '', 'aria-label': t('controls.classroom') });
  const choices = [['preset', t('controls.preset')], ...url.specs.filter((s) => !s.internal).map((s) => [s.name, labelOf(s)])];
  const boxes = choices.map(([name, text]) => {
    const box = element('input', { type: 'checkbox', value: name, id: `hide-${name}` });
    box.addEventListener('change', refresh);
    details.append(element('label', { for: `hide-${name}`, title: name }, [box, text]));
    return box;
  });
  function refresh() {
    const hide = boxes.filter((b) => b.checked).map((b) => b.value).join(',');
    output.value = `${window.location.origin}${window.location.pathname}${url.query({ ...url.extra, hide })}`;
  }
  const copy = element('button', { type: 'button' }, [t('controls.copy_link')]);
  const note = element('span', { role: 'status' });
  copy.addEventListener('click', async () => {
    refresh();
    output.select();
    try { await navigator.clipboard.writeText(output.value); note.textContent = t('controls.copied'); } catch { note.textContent = t('controls.copy_failed'); }
  });
  details.addEventListener('toggle', refresh);
  url.onChange(refresh);
  details.append(output, element('div', { class: 'row-buttons' }, [copy, note]));
  return details;
}
