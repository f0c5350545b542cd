// /gradients: (a) gradient per layer for one depth, with and without the residual, log axis;
// (b) depth x layer heatmap from the streamed /api/sweep, drawn row by row with a progress bar.
import { runPage, scaleParam } from '../page.js';
import { postJSON, streamSweep } from '../api.js';
import { chartView, heatmapLayout, logHeatmap, t, fmt } from '../charts.js';
import { lang, pageData, sentences } from '../i18n.js';

/** The profile, built in Python (app/figures/gradients.py, POST /api/figure/gradients): the chosen seed at once,
 *  then the next three seeds, on which a verdict must hold to be stated. */
async function loadProfile(state, ctx) {
  const url = `/api/figure/gradients?lang=${lang}`;
  const body = (seeds) => ({ config: ctx.config(state), seeds });
  const first = await postJSON(url, body(1), { signal: ctx.signal });
  if (!first.claim.pending) return first;
  await ctx.partial(first);
  ctx.progress(0.5, t('status.seeds_pending'));
  return postJSON(url, body(first.claim.band), { signal: ctx.signal });
}

function profileFigure(chart, state) {
  profileClaim = chart.claim;
  return chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []), state.grad_scale);
}

function ratioText(value) {
  if (value === 0) return t('mark.underflowed');   // a ratio of exactly 0 is a gradient rounded away, not a true zero
  return value === null ? t('mark.overflowed') : fmt(value);
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

/** What the row of the model shown above says, once the sweep has reached it: the profile's own numbers for the
 *  chosen seed (app/figures/gradients.py: layer 1's share, its verdict and how many blocks get less than a tenth of
 *  the last block's gradient, over the blocks with a finite gradient), the same model and seed as that row. */
let profileClaim = null;

function modelRowSentence(data, state) {
  const reached = data.rows.some((r) => r.depth === state.depth);
  const claim = profileClaim;
  if (!reached || !claim || state.depth < 2) return '';
  const here = claim[state.residual === 'none' ? 'without' : 'with'];
  return t('caption.grad_heatmap.model_row', { depth: state.depth, ratio: ratioText(here.ratios[0]),
    verdict: t(`verdict.${here.verdicts[0]}`), faint: here.faint[0], layers: here.finite_blocks[0] });
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
    { key: 'grad-profile', load: loadProfile, figure: profileFigure, caption: (chart) => chart.caption,
      table: (chart) => chart.rows },
    {
      key: 'grad-heatmap',
      dataKey: (state, ctx) => ({ ...ctx.config(state), depth: null, sweep_to: sweepMax(state) }),
      load: loadSweep, figure: heatmapFigure, table: heatmapTable,
      caption: (data, state) => sentences(t('caption.grad_heatmap', { max: data.max }), t(`caption.grad_heatmap.${state.heat}`),
        t('caption.grad_heatmap.grey'), modelRowSentence(data, state),
        data.elapsed_ms && t('status.sweep_done', { total: data.rows.length, seconds: fmt(data.elapsed_ms / 1000) })),
    },
  ],
});
