// /norms: the snowball. Render only: the figure, its caption and its CSV rows are built in Python
// (app/figures/norms.py, POST /api/figure/norms); this module applies the view patches the answer carries
// (slide theme, the y scale when the reader picks one) and draws it.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { t, lang } from '../i18n.js';
import { chartView } from '../charts.js';

/** The norm axis: "auto" keeps the builder's choice (logarithmic when the values span more than three decades). */
const SCALE = { name: 'norm_scale', type: 'string', enum: ['auto', 'linear', 'log'], default: 'auto', group: 'view',
  label: 'controls.norm_scale', optionLabel: (v) => t(`enum.yscale.${v}`) };

/** The received figure with the views the state asks for (chartView copies it: drawing adjusts what it is given). */
function view(chart, state) {
  return chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []), ...(state.norm_scale === 'auto' ? [] : [state.norm_scale]));
}

runPage({
  params: [SCALE],
  charts: [{
    key: 'norms',
    load: (state, ctx) => postJSON(`/api/figure/norms?lang=${lang}`, ctx.config(state), { signal: ctx.signal }),
    figure: view,
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});
