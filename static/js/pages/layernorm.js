// /layernorm: LayerNorm (Ba et al. 2016) and RMSNorm (Zhang & Sennrich 2019) of the same vector, side by side,
// each step with its formula, from two POST /api/layernorm calls (the server checks itself against torch);
// and below, "is RMSNorm faster?": forward + backward times of both, measured on the server (GET /api/norm_speed).
import { runPage } from '../page.js';
import { postJSON, getJSON } from '../api.js';
import { layout, line, PALETTE, t } from '../charts.js';
import { lang, sentences } from '../i18n.js';
import { scalarSpecs, vectorSpec, sliderSpec, remember, numbers, bindVector, syncVector, bindSlider, syncSlider,
  precise, el } from '../lessons.js';

const KINDS = ['layernorm', 'rmsnorm'];
const SHOWN_VALUES = 12;   // a step lists at most this many coordinates
const STEP_MS = 700;

/** γ and β are page sliders applied to every coordinate; RMSNorm has no β. */
function body(state, kind) {
  const x = numbers(state.x);
  const request = { x, kind, eps: state.eps };
  if (state.gamma !== 1) request.gamma = x.map(() => state.gamma);
  if (kind === 'layernorm' && state.beta !== 0) request.beta = x.map(() => state.beta);
  return request;
}

async function loadBoth(state, ctx) {
  remember(ctx);
  syncVector('x', state.x);
  syncSlider('gamma', state.gamma);
  syncSlider('beta', state.beta);
  const [layernorm, rmsnorm] = await Promise.all(KINDS.map((kind) => postJSON('/api/layernorm', body(state, kind), { signal: ctx.signal })));
  const data = { layernorm, rmsnorm, x: numbers(state.x), gamma: state.gamma, beta: state.beta };
  renderSteps(data);
  return data;
}

function valueText(step) {
  if (step.scalar) return precise(step.value);
  const shown = step.value.slice(0, SHOWN_VALUES).map((v) => precise(v, 4)).join(', ');
  return `[${shown}${step.value.length > SHOWN_VALUES ? ', …' : ''}]`;
}

function renderSteps(data) {
  for (const kind of KINDS) {
    const list = document.getElementById(`steps-${kind}`);
    if (!list) continue;   // embeds show the chart only
    const answer = data[kind];
    list.replaceChildren(...answer.steps.map((step) => el('li', {}, [
      el('strong', {}, lang === 'zh' ? step.label_zh : step.label), ': ',
      el('span', { class: 'formula' }, lang === 'zh' ? step.formula_zh : step.formula),
      ...(step.worked ? [el('span', { class: 'worked' }, step.worked)] : []),
      el('span', { class: 'value' }, `= ${valueText(step)}`),
    ])));
    const check = answer.torch_check;
    document.getElementById(`check-${kind}`).textContent = t('layernorm.check', {
      op: check.op.split('.').pop(), diff: precise(check.max_abs_difference, 2) });
  }
}

/** Reveal the steps one at a time, both columns together, so a class can follow the arithmetic. */
function playSteps() {
  const columns = KINDS.map((kind) => [...document.querySelectorAll(`#steps-${kind} li`)]);
  columns.flat().forEach((item) => item.classList.add('pending'));
  const rows = Math.max(...columns.map((c) => c.length));
  for (let i = 0; i < rows; i += 1) {
    setTimeout(() => columns.forEach((c) => c[i]?.classList.remove('pending')), STEP_MS * (i + 1));
  }
}

function layernormFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.layernorm.title'), x: t('layernorm.axis.x'),
    y: t('layernorm.axis.y') }) };
  const index = data.x.map((_, i) => i + 1);
  const bar = (name, y, color) => ({ type: 'bar', name, x: index, y, marker: { color },
    hovertemplate: `%{y:.4g}<extra>${name}</extra>` });
  fig.data.push(bar(t('layernorm.series.x'), data.x, '#8a9099'));
  fig.data.push(bar(t('layernorm.series.layernorm'), data.layernorm.output, PALETTE.blue));
  fig.data.push(bar(t('layernorm.series.rmsnorm'), data.rmsnorm.output, PALETTE.vermillion));
  fig.layout.barmode = 'group';
  return fig;
}

function layernormCaption(data) {
  const ln = data.layernorm;
  const rmsOut = data.rmsnorm.output;
  const rmsMean = rmsOut.every(Number.isFinite) ? rmsOut.reduce((a, b) => a + b, 0) / rmsOut.length : null;
  return t('layernorm.caption', { mean: precise(ln.mean), variance: precise(ln.variance), n: ln.n,   // as many digits as the steps below
    rms: precise(ln.rms), beta: precise(data.beta, 3), rms_mean: precise(rmsMean, 3) });
}

const SPEED_SERIES = [['layernorm', PALETTE.blue, 'solid'], ['rmsnorm', PALETTE.vermillion, 'solid'],
  ['layernorm_composed', PALETTE.blue, 'dot']];

function speedFigure(data, state) {
  const fig = { data: [], layout: layout(state.theme, { title: t('chart.norm_speed.title'),
    x: t('normspeed.axis.width', { tokens: data.tokens }), y: t('normspeed.axis.time'), xlog: true, ylog: true }) };
  const widths = data.rows.map((row) => row.width);
  for (const [kind, color, dash] of SPEED_SERIES) {
    const spread = data.rows.map((row) => row[kind]);
    fig.data.push(line(state.theme, { name: t(`normspeed.series.${kind}`), x: widths, y: spread.map((s) => s.median_us), color, dash,
      error_y: { type: 'data', symmetric: false, array: spread.map((s) => s.p75_us - s.median_us),
        arrayminus: spread.map((s) => s.median_us - s.p25_us), color, thickness: 1.5 } }));
  }
  fig.layout.xaxis.tickvals = widths;
  fig.layout.xaxis.ticktext = widths.map(String);
  return fig;
}

/** A range of ratios, "1.4× to 2.9×" style numbers. */
function range(values) {
  return { low: precise(Math.min(...values), 2), high: precise(Math.max(...values), 2) };
}

/** Every sentence follows the measurement: slower, faster or no clear winner (ratios on both sides of 1 ± 5%);
 *  the formula's saving only when op-by-op LayerNorm was slower at every width; a warning when the spread is wide. */
function speedCaption(data) {
  const ratios = data.rows.map((row) => row.ratio);
  const composed = data.rows.map((row) => row.composed_ratio);
  const verdict = ratios.every((r) => r > 1.05) ? 'slower' : ratios.every((r) => r < 0.95) ? 'faster' : 'mixed';
  const wide = data.rows.some((row) => SPEED_SERIES.some(([kind]) => (row[kind].p75_us - row[kind].p25_us) > 0.5 * row[kind].median_us));
  const ops = { layernorm_ops: data.operator_calls.layernorm, rmsnorm_ops: data.operator_calls.rmsnorm };
  return sentences(
    t('normspeed.caption.head', { time: data.measured_at ?? '—', torch: data.torch, threads: data.threads, tokens: data.tokens,
      repeats: data.repeats }),
    t(`normspeed.verdict.${verdict}`, range(ratios)),
    t(`normspeed.composed.${composed.every((r) => r > 1.05) ? 'cheaper' : 'unclear'}`, range(composed)),
    t(`normspeed.why.${verdict}`, ops),
    wide ? t('normspeed.noisy') : '');
}

function speedRows(data) {
  return data.rows.flatMap((row) => SPEED_SERIES.map(([kind]) => ({ width: row.width, kernel: data.kernels[kind], ...row[kind],
    rms_over_layernorm: row.ratio })));
}

runPage({
  params: [vectorSpec('x', 'layernorm.field'), sliderSpec('gamma', 1, -3, 3), sliderSpec('beta', 0, -3, 3), ...scalarSpecs('layernorm.field', ['eps'])],
  charts: [{
    key: 'layernorm',
    dataKey: (state) => [state.x, state.gamma, state.beta, state.eps],
    load: loadBoth,
    figure: layernormFigure,
    caption: layernormCaption,
    table: (data) => data.x.map((x, i) => ({ i: i + 1, x, layernorm: data.layernorm.output[i], rmsnorm: data.rmsnorm.output[i],
      layernorm_normalized: data.layernorm.normalized[i], rmsnorm_normalized: data.rmsnorm.normalized[i] })),
  }, {
    key: 'norm-speed',
    dataKey: () => 'norm_speed',   // measured once per server: no setting of this page changes it
    load: (state, ctx) => getJSON('/api/norm_speed', { signal: ctx.signal }),
    figure: speedFigure,
    caption: speedCaption,
    table: speedRows,
  }],
});

bindVector('x');
bindSlider('gamma');
bindSlider('beta');
document.getElementById('play-steps')?.addEventListener('click', playSteps);
