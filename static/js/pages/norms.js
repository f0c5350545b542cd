// /norms: the snowball. Per-layer mean token norm of the residual stream and of each block's output,
// with the growth law that fits best (√l, a line or a fitted power) or the √d line of a norm that pins, the float16 limit when it matters, and overflow marked.
import { runPage, scaleParam, traceRows } from '../page.js';
import { fetchTrace } from '../api.js';
import { pageData, sentences } from '../i18n.js';
import { layout, line, hline, markOverflow, firstOverflow, PALETTE, FLOAT16_MAX, t, fmt } from '../charts.js';
import { growthLaws } from '../theory.js';

const GROWS_ABOVE = 1.5;  // a stream that grew less than this from layer 1 to L is not fitted with a growth law

/** The norms that pin every token to √d after the add: their `pins_token` in the variant table (app/config/variants.py). */
function isPinned(cfg) {
  return cfg.norm_position === 'post' && Boolean(pageData.variants.norm[cfg.norm]?.pins_token);
}

function actNorms(trace) {
  return [trace.embedding.act_norm, ...trace.layers.map((l) => l.act_norm)];
}

/** √l, a line and a fitted power, compared on this trace, when the stream grew (null otherwise). */
function lawsFor(trace) {
  const growth = trace.summary.norm_growth;
  return isPinned(trace.config) || !(growth > GROWS_ABOVE) ? null : growthLaws(actNorms(trace));
}

function lawName(law) {
  return t(`series.law.${law.key}`, { c: fmt(law.c), slope: fmt(law.slope), p: fmt(law.p) });
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
  const laws = lawsFor(trace);
  if (laws) {
    fig.data.push(line(theme, { name: lawName(laws.best), x, y: laws.best.curve, color: PALETTE.black, dash: 'dash', markers: false, width: 0.6 }));
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

/** Which law fits best and what that says about the blocks' updates, with every fit's error beside it. */
function lawSentences(laws) {
  if (!laws) return [];
  const { best } = laws;
  const errors = Object.fromEntries(laws.laws.map((law) => [law.key, fmt(law.error)]));
  const p = laws.laws.find((law) => law.key === 'power').p;
  let why = `caption.norms.law.${best.key}`;
  if (best.key === 'power') why += p < 0.5 ? '_slow' : p > 1 ? '_fast' : '_between';
  return [t(why, { p: fmt(best.p) }), t('caption.norms.law_errors', { ...errors, p: fmt(p) })];
}

/** The first layer whose stream is exactly 0: values too small for the number format, rounded away. */
function firstZero(trace) {
  const zero = trace.layers.find((l) => l.act_norm === 0);
  return zero ? zero.layer : null;
}

function leadSentences(cfg, trace) {
  if (isPinned(cfg)) {
    const target = Math.sqrt(cfg.d_model);
    const worst = Math.max(...trace.layers.map((l) => Math.abs(l.act_norm / target - 1)));
    const percent = 100 * worst < 0.01 ? '0.01' : fmt(100 * worst);  // float32 rounding: never "within 0%"
    return [t('caption.norms.post', { norm: optionName('norm', cfg.norm) }),
      Number.isFinite(worst) && t('caption.norms.pinned', { percent, d: cfg.d_model, value: fmt(target) })];
  }
  if (cfg.norm_position === 'pre' && cfg.norm !== 'none') return [t('caption.norms.pre')];
  const free = cfg.norm_position === 'post' && cfg.norm !== 'none';
  return [t('caption.norms.other'), free && t('caption.norms.post_free', { norm: optionName('norm', cfg.norm) })];
}

function optionName(field, value) {
  return t(`enum.${field}.${value}`);
}

function growthSentence(trace) {
  const cfg = trace.config, growth = trace.summary.norm_growth;
  const zero = firstZero(trace);
  if (zero !== null) return t('caption.norms.underflow', { layer: zero, dtype: cfg.dtype });
  if (!Number.isFinite(growth)) return '';
  const step = growth > 0 && cfg.depth > 1 ? growth ** (1 / (cfg.depth - 1)) : null;
  if (growth < 1 / GROWS_ABOVE && step !== null) return t('caption.norms.shrink', { growth: fmt(growth), depth: cfg.depth, step: fmt(step) });
  return t('caption.norms.growth', { growth: fmt(growth), depth: cfg.depth });
}

function normsCaption(trace) {
  const cfg = trace.config;
  const first = overflowLayer(trace);
  const text = sentences(...leadSentences(cfg, trace), !isPinned(cfg) && growthSentence(trace), ...lawSentences(lawsFor(trace)),
    first !== null && t('caption.norms.overflow', { dtype: cfg.dtype, layer: first }));
  return text.replace(/([）」])\s+/g, '$1');  // a Latin name before CJK keeps its space, a full-width bracket does not
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
