// /chain: the chain product. A plain stack multiplies g per layer, the shortcut 1 + g (He et al. 2016, eq. 5);
// both cumulative products per layer, with the exact final values in the caption.
import { runPage, scaleParam } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang, pageData } from '../i18n.js';
import { scalarSpecs, remember, handle } from '../lessons.js';

const CASES = pageData.extra.cases;

function caseFor(state) {
  return CASES.find((c) => c.derivative === state.derivative && c.depth === state.depth);
}

function markCase(state) {
  const active = caseFor(state);
  document.querySelectorAll('.lesson-case').forEach((button) => {
    button.setAttribute('aria-pressed', String(active !== undefined && button.id === `case-${active.key}`));
  });
}

/** The chart and its caption are built in Python (app/figures/chain.py, POST /api/figure/chain): drawn here. */
const chainFigure = (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []), state.y_scale);

runPage({
  params: [...scalarSpecs('chain.field', ['derivative', 'depth']), scaleParam('y_scale', 'log')],
  charts: [{
    key: 'chain',
    dataKey: (state) => [state.derivative, state.depth],
    load: (state, ctx) => {
      remember(ctx);
      markCase(state);
      return postJSON(`/api/figure/chain?lang=${lang}`, { derivative: state.derivative, depth: state.depth },
        { signal: ctx.signal });
    },
    figure: chainFigure,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});

document.querySelectorAll('.lesson-case').forEach((button) => {
  button.addEventListener('click', () => handle.url?.update({
    derivative: Number(button.dataset.derivative), depth: Number(button.dataset.depth) }));
});
