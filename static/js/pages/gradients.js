// /gradients: (a) gradient per layer for one depth, with and without the residual, log axis;
// (b) depth x layer heatmap of the streamed /api/sweep, with a progress bar. Both are built in Python.
import { runPage, scaleParam } from '../page.js';
import { handedAnswer, postJSON, streamSweep } from '../api.js';
import { chartView, t } from '../charts.js';
import { lang, pageData } from '../i18n.js';
import { isStaticSite } from '../staticsite.js';

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

/** A chart built in Python, with the slide theme's patch and (the profile's) y scale applied. */
function drawn(chart, state) {
  return chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []), state.grad_scale);
}

/** The deepest network of the sweep: sweep_to, or (0, the default) the model's own depth, so the heatmap always
 *  holds the row of the model the profile above shows. */
const sweepMax = (state) => state.sweep_to || state.depth;
const PARTIAL_AT = [1 / 3, 2 / 3];   // of the depths done: the growing heatmap redrawn twice on the way
const swept = new Set();                 // sweeps this page already streamed to the end: their depths are cached

/** The heatmap, built in Python (app/figures/heatmap.py, POST /api/figure/grad-heatmap) from the sweep's cached
 *  traces. The sweep streams first (progress only; each depth is cached as it finishes); the depths done so far
 *  are drawn at a third and two thirds, then all of them (the CSV rows only when an export asks for them). */
/** The heatmap's request for the depths `done` of the sweep the state asks for (`more`: partial, csv). */
function heatmapBody(state, ctx, done, more = {}) {
  return { config: ctx.config(state), depths: done, upto: sweepMax(state), relative: state.heat === 'relative', ...more };
}

/** The whole sweep's depths, 1..sweepMax. */
const allDepths = (state) => Array.from({ length: sweepMax(state) }, (_, i) => i + 1);

/** An export of the heatmap: the same chart with its exact CSV rows (left out of the drawn one: half its bytes). */
async function heatmapExport(state, ctx) {
  return postJSON(`/api/figure/grad-heatmap?lang=${lang}`, heatmapBody(state, ctx, allDepths(state), { csv: true }));
}

async function loadSweep(state, ctx) {
  const max = sweepMax(state);
  const depths = allDepths(state);
  const config = ctx.config(state);
  const chart = (done, partial = false) => postJSON(`/api/figure/grad-heatmap?lang=${lang}`,
    heatmapBody(state, ctx, done, partial ? { partial } : {}), { signal: ctx.signal });
  const key = JSON.stringify({ ...config, depth: null, max });
  const heatUrl = `/api/figure/grad-heatmap?lang=${lang}`;
  // every depth cached already (swept by this page, or the whole chart handed over with it): no stream
  if (swept.has(key) || handedAnswer('POST', heatUrl, heatmapBody(state, ctx, depths), { take: false })) return chart(depths);
  const done = [];
  let total = depths.length, next = 0, streamed = false;
  await streamSweep({ config, depths }, (msg) => {
    if (msg.type === 'start') total = msg.total;
    if (msg.type !== 'depth') return;
    done.push(msg.depth);
    ctx.progress(msg.index / total, t('status.sweep', { done: msg.index, total }));
    if (!isStaticSite && next < PARTIAL_AT.length && msg.index >= PARTIAL_AT[next] * total && msg.index < total) {
      next += 1;
      // drawn unless the whole sweep got there first; a failed partial costs nothing, the full chart follows
      chart([...done].sort((a, b) => a - b), true).then((c) => streamed || ctx.partial(c)).catch(() => {});
    }
  }, { signal: ctx.signal, rows: false });
  streamed = true;
  swept.add(key);
  return chart(depths);
}

runPage({
  params: [
    { name: 'sweep_to', type: 'integer', default: pageData.defaults.sweep_to, min: 0, max: pageData.schema.properties.depth.maximum, group: 'page', label: 'controls.sweep_to' },
    { name: 'heat', type: 'string', enum: ['relative', 'absolute'], default: 'relative', group: 'view', label: 'controls.heat' },
    scaleParam('grad_scale', 'log', 'controls.grad_scale'),
  ],
  charts: [
    { key: 'grad-profile', load: loadProfile, figure: drawn, caption: (chart) => chart.caption,
      table: (chart) => chart.rows },
    {
      key: 'grad-heatmap',
      dataKey: (state, ctx) => ({ ...ctx.config(state), sweep_to: sweepMax(state), heat: state.heat }),
      load: loadSweep, figure: drawn, caption: (chart) => chart.caption,
      table: async (chart, state, ctx) => (await heatmapExport(state, ctx)).rows, json: (chart, state, ctx) => heatmapExport(state, ctx),
    },
  ],
});
