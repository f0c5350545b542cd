// /precision: float32 / bfloat16 / float16 limits from torch.finfo, a + b in each format, and the block where a
// snowballing stack run in float16 first overflows (a real float16 trace next to the same weights in float32). The
// chart, its caption and the formats table are built in Python (app/figures/precision.py,
// POST /api/figure/precision-overflow): drawn here.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang, pageData } from '../i18n.js';
import { scalarSpecs, remember, renderTable } from '../lessons.js';

const NUMBER_KEYS = ['big', 'small'];
const STACK_KEYS = Object.keys(pageData.extra.stack);
const KEYS = [...NUMBER_KEYS, ...STACK_KEYS];

async function load(state, ctx) {
  remember(ctx);
  const chart = await postJSON(`/api/figure/precision-overflow?lang=${lang}`,
    Object.fromEntries(KEYS.map((k) => [k, state[k]])), { signal: ctx.signal });
  renderTable('formats', chart.tables.formats);
  return chart;
}

runPage({
  params: [...scalarSpecs('precision.field', NUMBER_KEYS), ...scalarSpecs('precision.stack', STACK_KEYS, pageData.extra.stack)],
  charts: [{
    key: 'precision-overflow',
    dataKey: (state) => KEYS.map((k) => state[k]),
    load,
    figure: (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : [])),
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  }],
});
