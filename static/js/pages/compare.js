// /compare: 2 to 4 variants (presets or the custom settings) with the same sizes and seed, in aligned panels:
// norms on top, gradients below, shared axes so heights compare directly.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace } from '../api.js';
import { panels, line, SERIES, t, fmt } from '../charts.js';
import { pageData, lang, sentences } from '../i18n.js';

const PRESET_KEYS = pageData.presets ? pageData.presets.presets.map((p) => p.key) : [];

function variantName(key, ctx) {
  if (key === 'custom') return t('compare.custom').replace(/[（(].*$/, '').trim();
  const preset = ctx.presets.list().find((p) => p.key === key);
  return preset ? ctx.presets.name(preset) : key;
}

async function loadVariants(state, ctx) {
  const configs = await Promise.all(state.variants.map(async (key) => (
    key === 'custom' ? ctx.config(state) : ctx.config(await ctx.presets.configFor(key, state)))));
  const traces = await Promise.all(configs.map((config) => fetchTrace(config)));
  return state.variants.map((key, i) => ({ key, trace: traces[i] }));
}

function compareFigure(variants, state, ctx) {
  const columns = variants.map((v, i) => ({ text: variantName(v.key, ctx), color: SERIES[i] }));
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

/** The plain-words caption plus each variant's measured growth and gradient survival. */
function compareCaption(variants, state, ctx) {
  const parts = variants.map((v) => t('caption.compare.variant', { name: variantName(v.key, ctx),
    growth: fmt(v.trace.summary.norm_growth), survival: fmt(v.trace.summary.grad_survival) }));
  return sentences(t('caption.compare'), ...parts);
}

runPage({
  params: [
    { name: 'variants', type: 'list', enum: [...PRESET_KEYS, 'custom'], default: ['post_ln', 'pre_ln'], minItems: 2, maxItems: 4,
      group: 'page', label: 'controls.variants',
      optionLabel: (key) => (key === 'custom' ? t('compare.custom') : pageData.presets.presets.find((p) => p.key === key)?.[lang === 'zh' ? 'name_zh' : 'name'] ?? key) },
    scaleParam('norm_scale', 'linear', 'controls.norm_scale'),
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [{
    key: 'compare',
    dataKey: (state, ctx) => ({ variants: state.variants, config: ctx.config(state) }),
    load: loadVariants,
    figure: compareFigure,
    caption: compareCaption,
    table: (variants) => variants.flatMap((v) => traceRows(v.trace, { variant: v.key })),
  }],
});
