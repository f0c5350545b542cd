// /norms: the snowball. Per-layer mean token norm of the residual stream and of each block's output,
// with the theory curve where one exists, the float16 limit when it matters, and overflow marked.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace } from '../api.js';
import { sentences } from '../i18n.js';
import { layout, line, hline, markOverflow, firstOverflow, PALETTE, FLOAT16_MAX, t, fmt } from '../charts.js';
import { fitSqrtGrowth } from '../theory.js';


function hasGrowthTheory(cfg) {
  return ['pre', 'sandwich'].includes(cfg.norm_position) && cfg.norm !== 'none' && cfg.residual === 'identity'
    && Math.abs(cfg.residual_scale - 1) < 1e-9 && !cfg.depth_scaled_norm;
}

function isPinned(cfg) {
  return cfg.norm_position === 'post' && ['layernorm', 'rmsnorm'].includes(cfg.norm);
}

function normsFigure(trace, state) {
  const cfg = trace.config;
  const x = [0, ...trace.layers.map((l) => l.layer)];
  const act = [trace.embedding.act_norm, ...trace.layers.map((l) => l.act_norm)];
  const maxAbs = [trace.embedding.act_max_abs, ...trace.layers.map((l) => l.act_max_abs)];
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.norms.title'), x: t('axis.layer'), y: t('chart.norms.y'),
    ylog: state.norm_scale === 'log' }) };
  fig.data.push(line(theme, { name: t('series.act_norm'), x, y: act, color: PALETTE.blue }));
  fig.data.push(line(theme, { name: t('series.branch_norm'), x: x.slice(1), y: trace.layers.map((l) => l.branch_norm),
    color: PALETTE.vermillion, width: 0.8 }));
  if (hasGrowthTheory(cfg)) {
    const { c, curve } = fitSqrtGrowth(act);
    fig.data.push(line(theme, { name: t('series.theory_pre', { c: fmt(c) }), x, y: curve, color: PALETTE.black, dash: 'dash', markers: false, width: 0.6 }));
  }
  if (isPinned(cfg)) hline(theme, fig, Math.sqrt(cfg.d_model), t('series.theory_post', { value: fmt(Math.sqrt(cfg.d_model)) }));
  const peak = Math.max(...maxAbs.filter(Number.isFinite), ...act.filter(Number.isFinite));
  const lowPrecision = cfg.dtype !== 'float32';
  if (lowPrecision || peak > FLOAT16_MAX / 10) {
    fig.data.push(line(theme, { name: t('series.max_abs'), x, y: maxAbs, color: PALETTE.green, dash: 'dot', width: 0.7 }));
  }
  const overflowed = firstOverflow(x, maxAbs) !== null;
  // The float16 limit matters once values come within 10x of it (and stays readable on a linear axis up to 1e3x);
  // in bfloat16 the format's own limit (about 3.4e38) is the one that overflows.
  if ((peak > FLOAT16_MAX / 10 && peak < FLOAT16_MAX * 1e3) || (cfg.dtype === 'float16' && overflowed)) {
    hline(theme, fig, FLOAT16_MAX, t('series.fp16_max'), { color: PALETTE.vermillion });
  }
  const limit = trace.summary.dtype_max;
  if (cfg.dtype === 'bfloat16' && (peak > limit / 10 || overflowed)) {
    hline(theme, fig, limit, t('series.dtype_max', { dtype: cfg.dtype, value: fmt(limit) }), { color: PALETTE.vermillion });
  }
  markOverflow(theme, fig, x, maxAbs);  // entries became inf/NaN (a norm alone can overflow while entries are finite)
  return fig;
}

function overflowLayer(trace) {
  const x = [0, ...trace.layers.map((l) => l.layer)];
  return firstOverflow(x, [trace.embedding.act_max_abs, ...trace.layers.map((l) => l.act_max_abs)]);
}

function normsCaption(trace) {
  const cfg = trace.config;
  const kind = isPinned(cfg) ? 'post' : hasGrowthTheory(cfg) && cfg.norm_position === 'pre' ? 'pre' : 'other';
  const growth = trace.summary.norm_growth;
  const first = overflowLayer(trace);
  return sentences(t(`caption.norms.${kind}`),
    Number.isFinite(growth) && t('caption.norms.growth', { growth: fmt(growth), depth: cfg.depth }),
    first !== null && t('caption.norms.overflow', { dtype: cfg.dtype, layer: first }));
}

runPage({
  params: [scaleParam('norm_scale', 'linear', 'controls.norm_scale')],
  charts: [{
    key: 'norms',
    load: (state, ctx) => fetchTrace(ctx.config(state)),
    figure: normsFigure,
    caption: normsCaption,
    table: (trace) => traceRows(trace),
  }],
});
