// /compare: 2 to 4 variants (presets or the custom settings) with the same sizes and seed, in aligned panels:
// norms on top, gradients below, shared axes so heights compare directly.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace } from '../api.js';
import { panels, line, SERIES, t, fmt } from '../charts.js';
import { pageData, lang, sentences } from '../i18n.js';
import { specsFromSchema, parseValue } from '../state.js';

const PRESET_KEYS = pageData.presets ? pageData.presets.presets.map((p) => p.key) : [];
const MODEL_SPECS = pageData.schema ? specsFromSchema(pageData.schema) : [];
const SLOTS = [1, 2, 3, 4];

/** A variant's own changes, "dtype:float16, norm:rmsnorm" -> {dtype: 'float16', norm: 'rmsnorm'}; null if any pair is invalid.
 *  Field names and allowed values are the request model's, checked against its schema. */
export function parseChanges(text) {
  const changes = {};
  for (const pair of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const [field, raw] = pair.split(':').map((part) => part.trim());
    const spec = MODEL_SPECS.find((candidate) => candidate.name === field);
    const value = spec && raw !== undefined ? parseValue(spec, raw) : undefined;
    if (value === undefined) return null;
    changes[field] = value;
  }
  return changes;
}

function changesOf(state, slot) {
  return parseChanges(state[`changes_${slot}`] || '') || {};
}

function variantName(key, ctx) {
  if (key === 'custom') return t('compare.custom').replace(/[（(].*$/, '').trim();
  const preset = ctx.presets.list().find((p) => p.key === key);
  return preset ? ctx.presets.name(preset) : key;
}

function variantTitle(variant, ctx) {
  const name = variantName(variant.key, ctx);
  return variant.changes ? `${name} + ${variant.changes}` : name;
}

async function loadVariants(state, ctx) {
  const configs = await Promise.all(state.variants.map(async (key, i) => {
    const changes = changesOf(state, i + 1);
    const base = key === 'custom' ? state : await ctx.presets.configFor(key, { ...state, ...changes });
    return ctx.config({ ...base, ...changes });
  }));
  const traces = await Promise.all(configs.map((config) => fetchTrace(config)));
  return state.variants.map((key, i) => ({ key, changes: state[`changes_${i + 1}`] || '', trace: traces[i] }));
}

function compareFigure(variants, state, ctx) {
  const columns = variants.map((v, i) => ({ text: variantTitle(v, ctx), color: SERIES[i] }));
  const rows = [{ title: t('chart.compare.y_norm'), log: state.norm_scale === 'log' },
    { title: t('chart.compare.y_grad'), log: state.grad_scale === 'log' }];
  const { layout, axisFor } = panels(state.theme, { title: t('chart.compare.title'), x: t('axis.layer'), columns, rows });
  const data = [];
  variants.forEach((v, c) => {
    const x = [0, ...v.trace.layers.map((l) => l.layer)];
    const norms = [v.trace.embedding.act_norm, ...v.trace.layers.map((l) => l.act_norm)];
    const grads = [v.trace.embedding.grad_norm, ...v.trace.layers.map((l) => l.grad_norm)];
    data.push(line(state.theme, { name: `${columns[c].text}: ‖x_l‖`, x, y: norms, color: SERIES[c], ...axisFor(0, c) }));
    data.push(line(state.theme, { name: `${columns[c].text}: ‖∂loss/∂x_l‖`, x, y: grads, color: SERIES[c], dash: 'dash', ...axisFor(1, c) }));
  });
  return { data, layout };
}

/** The plain-words caption plus each variant's measured growth and gradient survival, and what each costs when the
 *  variants differ in size (DenseFormer's weights, highway gates). */
function compareCaption(variants, state, ctx) {
  const parts = variants.map((v) => t('caption.compare.variant', { name: variantTitle(v, ctx),
    growth: fmt(v.trace.summary.norm_growth), survival: fmt(v.trace.summary.grad_survival) }));
  const sizes = new Set(variants.map((v) => v.trace.summary.parameters));
  const costs = sizes.size > 1 ? variants.map((v) => t('caption.compare.cost', { name: variantTitle(v, ctx),
    params: fmt(v.trace.summary.parameters, { digits: 0, count: true }),   // every parameter: the sizes differ by a few
    macs: fmt(v.trace.summary.forward_macs, { count: true }) })) : [];
  return sentences(t('caption.compare'), ...parts, ...costs);
}

runPage({
  params: [
    { name: 'variants', type: 'list', enum: [...PRESET_KEYS, 'custom'], default: pageData.defaults.variants, minItems: 2, maxItems: 4,
      group: 'page', label: 'controls.variants',
      optionLabel: (key) => (key === 'custom' ? t('compare.custom') : pageData.presets.presets.find((p) => p.key === key)?.[lang === 'zh' ? 'name_zh' : 'name'] ?? key) },
    ...SLOTS.map((n) => ({ name: `changes_${n}`, type: 'string', default: '', group: 'page', label: 'controls.variant_changes',
      labelValues: { n }, help: 'controls.variant_changes_help', placeholder: 'dtype:float16, norm:rmsnorm',
      validate: (text) => parseChanges(text) !== null })),
    scaleParam('norm_scale', 'linear', 'controls.norm_scale'),
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [{
    key: 'compare',
    dataKey: (state, ctx) => ({ variants: state.variants, changes: SLOTS.map((n) => state[`changes_${n}`]), config: ctx.config(state) }),
    load: loadVariants,
    figure: compareFigure,
    caption: compareCaption,
    table: (variants) => variants.flatMap((v) => traceRows(v.trace, { variant: v.key, changes: v.changes })),
  }],
});
