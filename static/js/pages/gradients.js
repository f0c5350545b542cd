// /gradients: (a) gradient per layer for one depth, with and without the residual, log axis;
// (b) depth x layer heatmap from the streamed /api/sweep, drawn row by row with a progress bar.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace, streamSweep } from '../api.js';
import { layout, heatmapLayout, line, logHeatmap, markOverflow, PALETTE, t, fmt } from '../charts.js';
import { optionLabel } from '../controls.js';
import { pageData, sentences } from '../i18n.js';
import { verdict, perStep } from '../verdict.js';

/** The same model with the other residual choice: 'none' (plain stack) unless it already is one. */
function counterpart(config) {
  return { ...config, residual: config.residual === 'none' ? 'identity' : 'none', residual_scale: 1.0 };
}

function gradients(trace) {
  return [trace.embedding.grad_norm, ...trace.layers.map((l) => l.grad_norm)];
}

/** Gradient at layer 1 divided by the gradient at the last layer: how much of the signal survives the trip back. */
function survival(trace) {
  const g = trace.layers.map((l) => l.grad_norm);
  const first = g[0], last = g[g.length - 1];
  return first === null || last === null || last === 0 ? null : first / last;  // null: inf/NaN in strict JSON
}

function ratioText(value) {
  if (value === 0) return t('mark.underflowed');   // a ratio of exactly 0 is a gradient rounded away, not a true zero
  return value === null ? t('mark.overflowed') : fmt(value);
}

/** One series' sentence: its ratio, the mean factor per block, and the verdict those numbers give. */
function seriesSentence(key, ratio, depth) {
  const step = perStep(ratio, depth - 1);
  return t(key, { ratio: ratioText(ratio), per_block: step === null ? '' : t('caption.grad.per_block', { factor: fmt(step) }),
    verdict: t(`verdict.${verdict(ratio)}`) });
}

/** Why the two curves went where they went, from their verdicts: never "shrinks" under a curve that grows. */
function explanation(withVerdict, withoutVerdict, withoutStep, withStep) {
  const parts = [];
  if (withoutVerdict === 'underflowed') parts.push(t('caption.grad.plain_underflows'));
  else if (withoutVerdict === 'faded') parts.push(t('caption.grad.plain_fades', { factor: fmt(withoutStep) }));
  else if (withoutVerdict === 'overflowed') parts.push(t('caption.grad.plain_overflows'));
  else if (['grew', 'exploded'].includes(withoutVerdict)) parts.push(t('caption.grad.plain_grows', { factor: fmt(withoutStep) }));
  else parts.push(t('caption.grad.plain_kept'));
  if (withVerdict === 'kept') parts.push(t('caption.grad.shortcut_keeps'));
  else if (['grew', 'exploded', 'overflowed'].includes(withVerdict)) parts.push(t('caption.grad.shortcut_grows'));
  else if (withVerdict === 'underflowed') parts.push(t('caption.grad.shortcut_underflows'));
  else parts.push(t('caption.grad.shortcut_fades', { factor: fmt(withStep) }));
  return parts;
}

async function loadProfile(state, ctx) {
  const config = ctx.config(state);
  const [main, other] = await Promise.all([fetchTrace(config), fetchTrace(counterpart(config))]);
  return config.residual === 'none' ? { withResidual: other, without: main } : { withResidual: main, without: other };
}

function profileFigure(data, state) {
  const x = [0, ...data.withResidual.layers.map((l) => l.layer)];
  const residualSpec = { name: 'residual' };
  const fig = { data: [], layout: layout(state.theme, { title: t('chart.grad_profile.title'), x: t('axis.layer'),
    y: t('chart.grad_profile.y'), ylog: state.grad_scale === 'log' }) };
  const withName = t('series.with_residual', { residual: optionLabel(residualSpec, data.withResidual.config.residual) });
  fig.data.push(line(state.theme, { name: withName, x, y: gradients(data.withResidual), color: PALETTE.blue }));
  fig.data.push(line(state.theme, { name: t('series.without_residual'), x, y: gradients(data.without), color: PALETTE.vermillion, dash: 'dash' }));
  markOverflow(state.theme, fig, x, gradients(data.withResidual), { series: withName });  // the band is this series' alone
  return fig;
}

function profileCaption(data) {
  const depth = data.withResidual.config.depth;
  const withRatio = survival(data.withResidual), withoutRatio = survival(data.without);
  if (depth < 2) return t('caption.grad.one_block');
  return sentences(t('caption.grad.read', { depth }),
    seriesSentence('caption.grad.with', withRatio, depth), seriesSentence('caption.grad.without', withoutRatio, depth),
    ...explanation(verdict(withRatio), verdict(withoutRatio), perStep(withoutRatio, depth - 1), perStep(withRatio, depth - 1)));
}

function profileTable(data) {
  return [...traceRows(data.withResidual, { variant: 'with_residual', residual: data.withResidual.config.residual }),
    ...traceRows(data.without, { variant: 'without_residual', residual: 'none' })];
}

/** The deepest network of the sweep: sweep_to, or (0, the default) the model's own depth, so the heatmap always
 *  holds the row of the model the profile above shows. */
const sweepMax = (state) => state.sweep_to || state.depth;

async function loadSweep(state, ctx) {
  const max = sweepMax(state);
  const depths = Array.from({ length: max }, (_, i) => i + 1);
  const rows = [];
  let total = depths.length, last = 0, elapsed = 0;
  await streamSweep({ config: ctx.config(state), depths }, (msg) => {
    if (msg.type === 'start') total = msg.total;
    if (msg.type === 'done') elapsed = msg.elapsed_ms;
    if (msg.type !== 'depth') return;
    rows.push(msg);
    ctx.progress(msg.index / total, t('status.sweep', { done: msg.index, total }));
    if (performance.now() - last > 400) {  // redraw the growing heatmap a few times a second, not per line
      last = performance.now();
      ctx.partial({ rows: [...rows], max });
    }
  }, { signal: ctx.signal });
  return { rows, max, elapsed_ms: elapsed };
}

function heatmapFigure(data, state) {
  const layers = Array.from({ length: data.max + 1 }, (_, l) => l);
  const byDepth = new Map(data.rows.map((r) => [r.depth, r]));
  const depths = Array.from({ length: data.max }, (_, i) => i + 1);
  const values = depths.map((depth) => {
    const row = byDepth.get(depth);
    if (!row) return layers.map(() => null);
    const grads = [row.embedding_grad_norm, ...row.grad_norm];
    const scale = state.heat === 'relative' ? row.grad_norm[row.grad_norm.length - 1] : 1;
    return layers.map((l) => (l < grads.length && grads[l] !== null ? grads[l] / scale : null));
  });
  const fig = { data: [], layout: heatmapLayout(state.theme, { title: t('chart.grad_heatmap.title'), x: t('axis.layer'), y: t('axis.depth') }) };
  fig.layout.xaxis.range = [-0.5, data.max + 0.5];
  fig.layout.yaxis.range = [0.5, data.max + 0.5];
  fig.data.push(logHeatmap(state.theme, { x: layers, y: depths, values, diverging: state.heat === 'relative',
    colorbarTitle: t(state.heat === 'relative' ? 'chart.grad_heatmap.colorbar_rel' : 'chart.grad_heatmap.colorbar') }));
  return fig;
}

/** What the row of the model shown above says, once the sweep has reached it: layer 1's share and how many of its
 *  layers get less than a tenth of the last layer's gradient. */
function modelRowSentence(data, depth) {
  const row = data.rows.find((r) => r.depth === depth);
  if (!row || row.grad_norm.length < 2) return '';
  const grads = row.grad_norm, last = grads[grads.length - 1];
  const ratio = grads[0] === null || last === null || last === 0 ? null : grads[0] / last;
  const faint = grads.filter((g) => g !== null && last !== null && last > 0 && g / last < 0.1).length;
  return t('caption.grad_heatmap.model_row', { depth, ratio: ratioText(ratio), verdict: t(`verdict.${verdict(ratio)}`),
    faint, layers: grads.length });
}

function heatmapTable(data) {
  return data.rows.flatMap((r) => [{ depth: r.depth, layer: 0, grad_norm: r.embedding_grad_norm },
    ...r.grad_norm.map((g, i) => ({ depth: r.depth, layer: i + 1, grad_norm: g, act_norm: r.act_norm[i] }))]);
}

runPage({
  params: [
    { name: 'sweep_to', type: 'integer', default: pageData.defaults.sweep_to, min: 0, max: pageData.schema.properties.depth.maximum, group: 'page', label: 'controls.sweep_to' },
    { name: 'heat', type: 'string', enum: ['relative', 'absolute'], default: 'relative', group: 'view', label: 'controls.heat' },
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [
    { key: 'grad-profile', load: loadProfile, figure: profileFigure, caption: profileCaption, table: profileTable },
    {
      key: 'grad-heatmap',
      dataKey: (state, ctx) => ({ ...ctx.config(state), depth: null, sweep_to: sweepMax(state) }),
      load: loadSweep, figure: heatmapFigure, table: heatmapTable,
      caption: (data, state) => sentences(t('caption.grad_heatmap', { max: data.max }), t(`caption.grad_heatmap.${state.heat}`),
        t('caption.grad_heatmap.grey'), modelRowSentence(data, state.depth),
        data.elapsed_ms && t('status.sweep_done', { total: data.rows.length, seconds: fmt(data.elapsed_ms / 1000) })),
    },
  ],
});
