// /softmax: softmax(s·z) collapsing to one-hot as the scale s grows, and the spectral norm of its Jacobian
// diag(p) − p pᵀ (how much gradient flows back) vanishing with it. Both charts and their captions are built in Python
// (app/figures/softmax.py, POST /api/figure/softmax-probs and /softmax-sweep) from one cached answer: drawn here.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang, pageData } from '../i18n.js';
import { scalarSpecs, vectorSpec, remember, numbers, bindVector, syncVector, bindSlider, syncSlider, precise } from '../lessons.js';

const SWEEP = pageData.extra.sweep_scales;

function loader(key) {
  return (state, ctx) => {
    remember(ctx);
    syncVector('logits', state.logits);
    syncSlider('scale', state.scale, { fromState: Math.log10, show: (v) => precise(v, 3) });
    return postJSON(`/api/figure/${key}?lang=${lang}`, { logits: numbers(state.logits), scale: state.scale, scales: SWEEP },
      { signal: ctx.signal });
  };
}

const drawn = (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []));
const dataKey = (state) => [state.logits, state.scale];
const chart = (key) => ({ key, dataKey, load: loader(key), figure: drawn, caption: (c) => c.caption, table: (c) => c.rows });

runPage({
  params: [vectorSpec('logits', 'softmax.field'), ...scalarSpecs('softmax.field', ['scale'])],
  charts: [chart('softmax-probs'), chart('softmax-sweep')],
});

bindVector('logits');
bindSlider('scale', { toState: (v) => Number((10 ** v).toPrecision(3)), show: (v) => precise(v, 3) });
