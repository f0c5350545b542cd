// /batchnorm: why NLP avoids BatchNorm. One POST /api/batch_dependence per norm (the same sizes for all four):
// how much a fixed sequence's output moves when its batch mates change, train vs eval mode, and what zero padding
// of the other sequences does to BatchNorm's statistics. Both charts and the table share the four answers.
import { runPage } from '../page.js';
import { postJSON } from '../api.js';
import { layout, line, themeOf, PALETTE, t } from '../charts.js';
import { pageData } from '../i18n.js';
import { scalarSpecs, remember, precise, el } from '../lessons.js';

const NORMS = pageData.extra.norms;
const SIZE_KEYS = ['d_model', 'seq_len', 'batch', 'groups', 'trials', 'seed'];
const STYLE = {   // the three per-token norms lie on top of each other at 0: different markers keep each visible
  batchnorm: { color: PALETTE.vermillion, symbol: 'circle', size: 1 },
  layernorm: { color: PALETTE.blue, symbol: 'circle-open', size: 2.2 },
  rmsnorm: { color: PALETTE.green, symbol: 'square-open', size: 1.6 },
  groupnorm: { color: PALETTE.purple, symbol: 'diamond', size: 1 },
};
const answers = new Map();   // request JSON -> promise of the four answers: both charts share one load
const HALF = 0.5;            // the table's padding column: the sweep point nearest half the batch padded

const nameOf = (norm) => t(`batchnorm.name.${norm}`);

function loadAll(state, ctx) {
  remember(ctx);
  const sizes = Object.fromEntries(SIZE_KEYS.map((k) => [k, state[k]]));
  const key = JSON.stringify(sizes);
  if (!answers.has(key)) {
    const promise = Promise.all(NORMS.map((norm) => postJSON('/api/batch_dependence', { norm, ...sizes })))
      .then((list) => Object.fromEntries(list.map((answer) => [answer.norm, answer])));
    answers.set(key, promise);
    promise.catch(() => answers.delete(key));
    if (answers.size > 20) answers.delete(answers.keys().next().value);
  }
  return answers.get(key).then((data) => { renderTable(data); return data; });
}

function nearHalf(answer) {
  return answer.padding.reduce((best, p) => (Math.abs(p.pad_fraction - HALF) < Math.abs(best.pad_fraction - HALF) ? p : best));
}

function renderTable(data) {
  const body = document.getElementById('batch-table-body');
  if (!body) return;   // embeds show the chart only
  const first = data[NORMS[0]];
  document.getElementById('batch-table-caption').textContent = t('batchnorm.table.title', { batch: first.batch, trials: first.trials });
  body.replaceChildren(...NORMS.map((norm) => {
    const a = data[norm];
    const gap = a.train_eval_change === null ? t('batchnorm.none') : precise(a.train_eval_change, 3);
    return el('tr', {}, [el('th', { scope: 'row' }, nameOf(norm)),
      el('td', { class: a.same_sequence_change > 0 ? 'lost' : '' }, precise(a.same_sequence_change, 3)),
      el('td', {}, gap), el('td', {}, precise(nearHalf(a).output_change, 3)),
      el('td', {}, precise(a.torch_check.max_abs_difference, 2))]);
  }));
}

function normLine(theme, norm, x, y, name) {
  const style = STYLE[norm];
  return line(theme, { name, x, y, color: style.color,
    marker: { size: themeOf(theme).marker * style.size, symbol: style.symbol, color: style.color, line: { color: style.color, width: 2 } } });
}

function dependenceFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.batch_dependence.title'), x: t('batchnorm.axis.batch'),
    y: t('batchnorm.axis.change'), xlog: true, legendBelow: true }) };
  const sweep = pageData.extra.batch_sweep;
  fig.layout.xaxis.tickvals = sweep;
  fig.layout.xaxis.ticktext = sweep.map(String);
  for (const norm of NORMS) {
    const rows = data[norm].by_batch;
    fig.data.push(normLine(theme, norm, rows.map((r) => r.batch), rows.map((r) => r.same_sequence_change),
      nameOf(norm)));
  }
  const bn = data.batchnorm.by_batch;
  fig.data.push(line(theme, { name: t('batchnorm.series.train_eval'), x: bn.map((r) => r.batch), y: bn.map((r) => r.train_eval_change),
    color: PALETTE.orange, dash: 'dash' }));
  fig.data.push(line(theme, { name: t('batchnorm.mark.chosen', { batch: state.batch }), x: [state.batch],
    y: [data.batchnorm.same_sequence_change], mode: 'markers', color: PALETTE.black,
    marker: { size: 14, symbol: 'diamond-open', color: PALETTE.black, line: { width: 2, color: PALETTE.black } } }));
  fig.layout.yaxis.rangemode = 'tozero';
  return fig;
}

function paddingFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.batch_padding.title'), x: t('batchnorm.axis.pad'),
    y: t('batchnorm.axis.effect'), legendBelow: true }) };
  for (const norm of NORMS) {
    const points = data[norm].padding;
    fig.data.push(normLine(theme, norm, points.map((p) => p.pad_fraction), points.map((p) => p.output_change),
      nameOf(norm)));
  }
  const bn = data.batchnorm.padding;
  fig.data.push(line(theme, { name: t('batchnorm.series.mean_shift'), x: bn.map((p) => p.pad_fraction), y: bn.map((p) => p.mean_shift),
    color: PALETTE.orange, dash: 'dot' }));
  fig.data.push(line(theme, { name: t('batchnorm.series.std_ratio'), x: bn.map((p) => p.pad_fraction), y: bn.map((p) => p.std_ratio),
    color: PALETTE.sky, dash: 'dash' }));
  fig.layout.xaxis.tickformat = '.0%';
  fig.layout.yaxis.rangemode = 'tozero';
  return fig;
}

/** The largest change any per-token norm showed (0 when they are exact), for "exactly {zero}". */
function perTokenMax(data, pick) {
  return Math.max(...NORMS.filter((n) => n !== 'batchnorm').map((n) => pick(data[n])));
}

function dependenceCaption(data) {
  const bn = data.batchnorm;
  const last = bn.by_batch[bn.by_batch.length - 1];
  return t('batchnorm.caption.dependence', { batch: bn.batch, same: precise(bn.same_sequence_change, 3),
    max: precise(bn.same_sequence_change_max, 3), gap: precise(bn.train_eval_change, 3), big: last.batch,
    big_same: precise(last.same_sequence_change, 3),
    zero: precise(perTokenMax(data, (a) => Math.max(...a.by_batch.map((r) => r.same_sequence_change))), 3) });
}

function paddingCaption(data) {
  const point = nearHalf(data.batchnorm);
  return t('batchnorm.caption.padding', { fraction: `${Math.round(point.pad_fraction * 100)}%`,
    shift: precise(point.mean_shift, 3), change: precise(point.output_change, 3),
    zero: precise(perTokenMax(data, (a) => Math.max(...a.padding.map((p) => p.output_change))), 3) });
}

const dataKey = (state) => SIZE_KEYS.map((k) => state[k]);

function rows(data, field, keys) {
  return NORMS.flatMap((norm) => data[norm][field].map((row) => ({ norm, ...Object.fromEntries(keys.map((k) => [k, row[k]])) })));
}

runPage({
  // GroupNorm's groups must divide the width (the request model's rule, group_counts in Python): a width change moves
  // them to the nearest count allowed, and a typed count outside is refused beside the field.
  params: scalarSpecs('batchnorm.field', SIZE_KEYS).map((spec) => (spec.name === 'groups'
    ? { ...spec, allowedFor: (state) => pageData.extra.group_counts[state.d_model] } : spec)),
  charts: [
    { key: 'batch-dependence', dataKey, load: loadAll, figure: dependenceFigure, caption: dependenceCaption,
      table: (data) => rows(data, 'by_batch', ['batch', 'same_sequence_change', 'same_sequence_change_max', 'train_eval_change']) },
    { key: 'batch-padding', dataKey, load: loadAll, figure: paddingFigure, caption: paddingCaption,
      table: (data) => rows(data, 'padding', ['pad_fraction', 'other_length', 'output_change', 'mean_shift', 'std_ratio']) },
  ],
});
