// /compare: 2 to 4 variants (presets or the custom settings) with the same sizes and seed, in aligned panels:
// norms on top, gradients below, shared axes so heights compare directly.
import { runPage, scaleParam } from '../page.js';
import { postJSON } from '../api.js';
import { chartView, t } from '../charts.js';
import { pageData, lang } from '../i18n.js';
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

/** The variants' models, resolved here (a preset on the page's sizes, plus the variant's own changes); the chart,
 *  its caption and rows are built in Python (app/figures/compare.py, POST /api/figure/compare). */
async function loadVariants(state, ctx) {
  const variants = await Promise.all(state.variants.map(async (key, i) => {
    const changes = changesOf(state, i + 1);
    const base = key === 'custom' ? state : await ctx.presets.configFor(key, { ...state, ...changes });
    return { key, changes: state[`changes_${i + 1}`] || '', config: ctx.config({ ...base, ...changes }) };
  }));
  return postJSON(`/api/figure/compare?lang=${lang}`, { variants }, { signal: ctx.signal });
}

/** The norms row: auto keeps the builder's choice (log when the values span more than three decades). */
function compareFigure(chart, state) {
  const views = [...(state.theme === 'slide' ? ['slide'] : []), `grad_${state.grad_scale}`];
  if (state.norm_scale !== 'auto') views.push(`norm_${state.norm_scale}`);
  return chartView(chart, ...views);
}

runPage({
  params: [
    { name: 'variants', type: 'list', enum: [...PRESET_KEYS, 'custom'], default: pageData.defaults.variants, minItems: 2, maxItems: 4,
      group: 'page', label: 'controls.variants',
      optionLabel: (key) => (key === 'custom' ? t('compare.custom') : pageData.presets.presets.find((p) => p.key === key)?.[lang === 'zh' ? 'name_zh' : 'name'] ?? key) },
    ...SLOTS.map((n) => ({ name: `changes_${n}`, type: 'string', default: '', group: 'page', label: 'controls.variant_changes',
      labelValues: { n }, help: 'controls.variant_changes_help', placeholder: 'dtype:float16, norm:rmsnorm',
      validate: (text) => parseChanges(text) !== null })),
    { name: 'norm_scale', type: 'string', enum: ['auto', 'linear', 'log'], default: 'auto', group: 'view',
      label: 'controls.norm_scale', optionLabel: (v) => t(`enum.yscale.${v}`) },
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [{
    key: 'compare',
    dataKey: (state, ctx) => ({ variants: state.variants, changes: SLOTS.map((n) => state[`changes_${n}`]), config: ctx.config(state) }),
    load: loadVariants,
    figure: compareFigure,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});
