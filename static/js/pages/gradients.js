// /gradients: (a) gradient per layer for one depth, with and without the residual, log axis;
// (b) depth x layer heatmap from the streamed /api/sweep, drawn row by row with a progress bar.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace, streamSweep } from '../api.js';
import { layout, heatmapLayout, line, logHeatmap, markOverflow, PALETTE, t, fmt } from '../charts.js';
import { optionLabel } from '../controls.js';
import { pageData, sentences } from '../i18n.js';

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
  return t('caption.grad_profile', { with_ratio: ratioText(survival(data.withResidual)), without_ratio: ratioText(survival(data.without)),
    depth: data.withResidual.config.depth });
}

function profileTable(data) {
  return [...traceRows(data.withResidual, { variant: 'with_residual', residual: data.withResidual.config.residual }),
    ...traceRows(data.without, { variant: 'without_residual', residual: 'none' })];
}

async function loadSweep(state, ctx) {
  const depths = Array.from({ length: state.sweep_to }, (_, i) => i + 1);
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
      ctx.partial({ rows: [...rows], max: state.sweep_to });
    }
  }, { signal: ctx.signal });
  return { rows, max: state.sweep_to, elapsed_ms: elapsed };
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

function heatmapTable(data) {
  return data.rows.flatMap((r) => [{ depth: r.depth, layer: 0, grad_norm: r.embedding_grad_norm },
    ...r.grad_norm.map((g, i) => ({ depth: r.depth, layer: i + 1, grad_norm: g, act_norm: r.act_norm[i] }))]);
}

runPage({
  params: [
    { name: 'sweep_to', type: 'integer', default: pageData.defaults.sweep_to, min: 1, max: pageData.schema.properties.depth.maximum, group: 'page', label: 'controls.sweep_to' },
    { name: 'heat', type: 'string', enum: ['relative', 'absolute'], default: 'relative', group: 'view', label: 'controls.heat' },
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [
    { key: 'grad-profile', load: loadProfile, figure: profileFigure, caption: profileCaption, table: profileTable },
    {
      key: 'grad-heatmap',
      dataKey: (state, ctx) => ({ ...ctx.config(state), depth: null, sweep_to: state.sweep_to }),
      load: loadSweep, figure: heatmapFigure, table: heatmapTable,
      caption: (data, state) => sentences(t('caption.grad_heatmap', { max: data.max }), t(`caption.grad_heatmap.${state.heat}`),
        t('caption.grad_heatmap.grey'), data.elapsed_ms && t('status.sweep_done', { total: data.rows.length, seconds: fmt(data.elapsed_ms / 1000) })),
    },
  ],
});
