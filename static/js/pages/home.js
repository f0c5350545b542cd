// /: the tour's live thumbnail: Post-LN vs Pre-LN stream norms at depth 24. Everything else is the request
// model's default (same init, sizes and seed), so the norm position is the only difference. Render only: the chart
// and its caption are built in Python (app/figures/tour.py, POST /api/figure/tour).
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang, pageData } from '../i18n.js';

// The page's defaults come from its registry entry (app/pages/explorer.py), which the warm-up computes too.
const DEPTH = pageData.defaults.depth;

runPage({
  modelControls: false,
  charts: [{
    key: 'tour',
    dataKey: () => DEPTH,
    load: (state, ctx) => postJSON(`/api/figure/tour?lang=${lang}`, { depth: DEPTH }, { signal: ctx.signal }),
    figure: (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : [])),
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});
