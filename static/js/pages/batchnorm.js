// /batchnorm: why NLP avoids BatchNorm. Both charts, their captions and the summary table are built in Python
// (app/figures/batchnorm.py, POST /api/figure/batch-dependence and /batch-padding) from the four norms' answers on
// one set of sizes: how much a fixed sequence's output moves when its batch mates change, train vs eval mode, and
// what zero padding of the other sequences does to BatchNorm's statistics. Drawn here.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { chartView } from '../charts.js';
import { lang, pageData } from '../i18n.js';
import { scalarSpecs, remember, renderTable } from '../lessons.js';

const SIZE_KEYS = ['d_model', 'seq_len', 'batch', 'groups', 'trials', 'seed'];

function loader(key) {
  return async (state, ctx) => {
    remember(ctx);
    const sizes = Object.fromEntries(SIZE_KEYS.map((k) => [k, state[k]]));
    const chart = await postJSON(`/api/figure/${key}?lang=${lang}`, sizes, { signal: ctx.signal });
    if (chart.tables) renderTable('batch-table', chart.tables['batch-table']);
    return chart;
  };
}

const drawn = (chart, state) => chartView(chart, ...(state.theme === 'slide' ? ['slide'] : []));
const dataKey = (state) => SIZE_KEYS.map((k) => state[k]);
const chart = (key) => ({ key, dataKey, load: loader(key), figure: drawn, caption: (c) => c.caption, table: (c) => c.rows });

runPage({
  // GroupNorm's groups must divide the width (the request model's rule, group_counts in Python): a width change moves
  // them to the nearest count allowed, and a typed count outside is refused beside the field.
  params: scalarSpecs('batchnorm.field', SIZE_KEYS).map((spec) => (spec.name === 'groups'
    ? { ...spec, allowedFor: (state) => pageData.extra.group_counts[state.d_model] } : spec)),
  charts: [chart('batch-dependence'), chart('batch-padding')],
});
