// /layernorm: LayerNorm (Ba et al. 2016) and RMSNorm (Zhang & Sennrich 2019) of the same vector, side by side, each
// step with its formula, checked against torch; and below, "is RMSNorm faster?": forward + backward times of both,
// measured on the server; between them, the same vector as geometry (the plane ⊥ (1, …, 1), the sphere of radius √n).
// Every chart, caption and step list is built in Python (app/figures/layernorm.py and layernorm_geometry.py,
// POST /api/figure/layernorm, /layernorm-geometry and /norm-speed): drawn here.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang } from '../i18n.js';
import { scalarSpecs, vectorSpec, sliderSpec, remember, numbers, bindVector, syncVector, bindSlider, syncSlider,
  el } from '../lessons.js';

const KINDS = ['layernorm', 'rmsnorm'];
const STEP_MS = 700;

/** The page's one request body (app/experiments/lessons/layernorm.py, LayerNormPage): both charts draw it. */
const body = (state) => ({ x: numbers(state.x), gamma: state.gamma, beta: state.beta, eps: state.eps });

async function loadBoth(state, ctx) {
  remember(ctx);
  syncVector('x', state.x);
  syncSlider('gamma', state.gamma);
  syncSlider('beta', state.beta);
  const chart = await postJSON(`/api/figure/layernorm?lang=${lang}`, body(state), { signal: ctx.signal });
  KINDS.forEach((kind) => renderSteps(kind, chart.tables[`steps-${kind}`]));
  return chart;
}

/** A norm's steps (label, formula, worked numbers, value: text the builder wrote) and its check against torch. */
function renderSteps(kind, steps) {
  const list = document.getElementById(`steps-${kind}`);
  if (!list) return;   // embeds show the chart only
  list.replaceChildren(...steps.rows.map(([label, formula, worked, value]) => el('li', {}, [
    el('strong', {}, label.text), ': ', el('span', { class: 'formula' }, formula.text),
    ...(worked.text ? [el('span', { class: 'worked' }, worked.text)] : []),
    el('span', { class: 'value' }, value.text),
  ])));
  document.getElementById(`check-${kind}`).textContent = steps.caption;
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

const drawn = (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []));

runPage({
  params: [vectorSpec('x', 'layernorm.field'), sliderSpec('gamma', 1, -3, 3), sliderSpec('beta', 0, -3, 3), ...scalarSpecs('layernorm.field', ['eps'])],
  charts: [{
    key: 'layernorm',
    dataKey: (state) => [state.x, state.gamma, state.beta, state.eps],
    load: loadBoth,
    figure: drawn,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }, {
    key: 'layernorm-geometry',   // the same vector as geometry: onto the plane ⊥ (1, …, 1), then the sphere of radius √n
    dataKey: (state) => [state.x, state.gamma, state.beta, state.eps],
    load: (state, ctx) => postJSON(`/api/figure/layernorm-geometry?lang=${lang}`, body(state), { signal: ctx.signal }),
    figure: drawn,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }, {
    key: 'norm-speed',
    dataKey: () => 'norm_speed',   // measured once per server and hour: no setting of this page changes it
    load: (state, ctx) => postJSON(`/api/figure/norm-speed?lang=${lang}`, {}, { signal: ctx.signal }),
    figure: drawn,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});

bindVector('x');
bindSlider('gamma');
bindSlider('beta');
document.getElementById('play-steps')?.addEventListener('click', playSteps);
