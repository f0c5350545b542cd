// /softmax: softmax(s·z) collapsing to one-hot as the scale s grows, and the spectral norm of its Jacobian
// diag(p) − p pᵀ (how much gradient flows back) vanishing with it. One POST /api/softmax feeds both charts.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { layout, line, PALETTE, t } from '../charts.js';
import { pageData, sentences } from '../i18n.js';
import { scalarSpecs, vectorSpec, remember, numbers, bindVector, syncVector, bindSlider, syncSlider, precise } from '../lessons.js';

const SWEEP = pageData.extra.sweep_scales;
const answers = new Map();   // request JSON -> promise: the two charts share one request

function loadSoftmax(state, ctx) {
  remember(ctx);
  syncVector('logits', state.logits);
  syncSlider('scale', state.scale, { fromState: Math.log10, show: (v) => precise(v, 3) });
  const request = { logits: numbers(state.logits), scale: state.scale, scales: SWEEP };
  const key = JSON.stringify(request);
  if (!answers.has(key)) {
    const promise = postJSON('/api/softmax', request);
    answers.set(key, promise);
    promise.catch(() => answers.delete(key));
    if (answers.size > 20) answers.delete(answers.keys().next().value);
  }
  return answers.get(key);
}

function probsFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.softmax_probs.title'), x: t('softmax.axis.position'),
    y: t('softmax.axis.prob') }) };
  const index = data.probs.map((_, i) => i + 1);
  const name = t('softmax.series.at', { s: precise(data.scale, 3) });
  fig.data.push({ type: 'bar', name, x: index, y: data.probs, marker: { color: PALETTE.blue },
    hovertemplate: `%{y:.4g}<extra>${name}</extra>` });
  fig.layout.yaxis.range = [0, 1.05];
  fig.layout.showlegend = false;   // one series, named in the title and the caption: no empty legend row
  return fig;
}

function sweepFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.softmax_sweep.title'), x: t('softmax.axis.scale'),
    y: t('softmax.axis.value'), xlog: true, ylog: true }) };
  const x = data.sweep.map((row) => row.scale);
  const series = [['entropy', 'softmax.series.entropy', PALETTE.green], ['max_prob', 'softmax.series.max_prob', PALETTE.orange],
    ['jacobian_norm', 'softmax.series.jacobian', PALETTE.vermillion]];
  for (const [field, label, color] of series) {
    fig.data.push(line(theme, { name: t(label), x, y: data.sweep.map((row) => row[field]), color, markers: false }));
  }
  // Below 1e-16 a gradient is lost next to any weight of size 1 even in float64: show down to there, not to 1e-300.
  fig.layout.yaxis.range = [-16, 0.5];
  // The chosen scale: one marker per series at the exact values for s.
  fig.data.push(line(theme, { name: t('softmax.mark.current', { s: precise(data.scale, 3) }), x: series.map(() => data.scale),
    y: series.map(([field]) => data[field]), color: PALETTE.black, mode: 'markers',
    marker: { size: 13, symbol: 'diamond', color: series.map(([, , c]) => c), line: { color: PALETTE.black, width: 1.5 } } }));
  return fig;
}

function probsCaption(data) {
  return t('softmax.caption.probs', { s: precise(data.scale, 3), max: precise(data.max_prob, 4), argmax: data.argmax + 1,
    entropy: precise(data.entropy, 4), uniform: precise(data.uniform_entropy, 4) });
}

// Above this largest probability the weights count as one-hot (the caption says so only then).
const ONE_HOT = 0.99;

/** The sweep's end point speaks for the largest scale shown: said once when it prints like the chosen s (316 and
 *  316.2 are both "316"); one-hot only when its largest probability is, tied scores say so. */
function sweepCaption(data) {
  const last = data.sweep[data.sweep.length - 1];
  const s = precise(data.scale, 3);
  const sameLabel = precise(last.scale, 3) === s || data.scale > last.scale;
  const end = sameLabel ? { max_prob: data.max_prob } : last;
  const ties = data.probs.filter((p) => Math.abs(p - data.max_prob) <= 1e-9 * data.max_prob).length;
  const why = end.max_prob >= ONE_HOT ? 'one_hot' : ties > 1 ? 'tied' : 'not_yet';
  return sentences(t('softmax.caption.sweep', { s, norm: precise(data.jacobian_norm, 3) }),
    sameLabel ? '' : t('softmax.caption.sweep_last', { last: precise(last.scale, 3), last_norm: precise(last.jacobian_norm, 3) }),
    t(`softmax.caption.${why}`, { max: precise(end.max_prob, 3) }));
}

const dataKey = (state) => [state.logits, state.scale];

runPage({
  params: [vectorSpec('logits', 'softmax.field'), ...scalarSpecs('softmax.field', ['scale'])],
  charts: [
    { key: 'softmax-probs', dataKey, load: loadSoftmax, figure: probsFigure, caption: probsCaption,
      table: (data) => data.probs.map((p, i) => ({ position: i + 1, logit: data.logits[i], probability: p })) },
    { key: 'softmax-sweep', dataKey, load: loadSoftmax, figure: sweepFigure, caption: sweepCaption,
      table: (data) => data.sweep.map(({ scale, entropy, max_prob, jacobian_norm, jacobian_frobenius }) =>
        ({ scale, entropy, max_prob, jacobian_spectral_norm: jacobian_norm, jacobian_frobenius_norm: jacobian_frobenius })) },
  ],
});

bindVector('logits');
bindSlider('scale', { toState: (v) => Number((10 ** v).toPrecision(3)), show: (v) => precise(v, 3) });
