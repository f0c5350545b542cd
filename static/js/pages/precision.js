// /precision: float32 / bfloat16 / float16 limits from torch.finfo, a + b in each format, and the block where a
// snowballing stack run in float16 first overflows (a real float16 trace next to the same weights in float32).
import { runPage } from '../page.js';
import { getJSON } from '../api.js';
import { layout, line, hline, overflowBand, PALETTE, FLOAT16_MAX, t } from '../charts.js';
import { pageData } from '../i18n.js';
import { scalarSpecs, remember, precise, el, queryOf, labelOnLogAxis } from '../lessons.js';

const NUMBER_KEYS = ['big', 'small'];
const STACK_KEYS = Object.keys(pageData.extra.stack);

function verdict(row) {
  if (row.overflowed) return 'overflow';
  if (row.update_lost) return 'lost';
  return row.sum_error === 0 ? 'kept' : 'rounded';
}

/** Every digit of a stored value (JavaScript prints the shortest decimal that is exactly this double). */
function exact(value) {
  return value === null ? t('lesson.overflow') : String(value);
}

function renderFormats(data) {
  const body = document.getElementById('formats-body');
  if (!body) return;   // embeds show the chart only
  document.getElementById('formats-caption').textContent = t('precision.table.title', {
    big: exact(data.big), small: exact(data.small), exact: exact(data.float64_sum) });
  body.replaceChildren(...data.formats.map((row) => {
    const outcome = verdict(row);
    return el('tr', {}, [
      el('th', { scope: 'row' }, row.dtype),
      ...[row.max, row.eps, row.tiny].map((v) => el('td', {}, precise(v, 5))),
      ...[row.stored_big, row.spacing_at_big, row.sum].map((v) => el('td', {}, exact(v))),
      el('td', { class: outcome === 'kept' ? '' : 'lost' }, t(`precision.verdict.${outcome}`)),
    ]);
  }));
}

async function loadPrecision(state, ctx) {
  remember(ctx);
  const data = await getJSON(`/api/precision?${queryOf(state, [...NUMBER_KEYS, ...STACK_KEYS])}`, { signal: ctx.signal });
  renderFormats(data);
  return data;
}

function overflowFigure(data, state) {
  const theme = state.theme;
  const snow = data.snowball;
  const fig = { data: [], layout: layout(theme, { title: t('chart.precision_overflow.title'), x: t('axis.layer_plain'),
    y: t('precision.axis.y'), ylog: true }) };
  fig.data.push(line(theme, { name: t('precision.series.float32'), x: snow.layers, y: snow.float32_max_abs,
    color: PALETTE.black, dash: 'dash', width: 0.7 }));
  fig.data.push(line(theme, { name: t('precision.series.float16'), x: snow.layers, y: snow.float16_max_abs, color: PALETTE.blue }));
  hline(theme, fig, FLOAT16_MAX, t('series.fp16_max'), { color: PALETTE.vermillion });
  labelOnLogAxis(fig, FLOAT16_MAX);
  if (snow.overflow_layer !== null) {
    overflowBand(theme, fig, snow.overflow_layer, snow.layers.length, t('mark.overflow', { layer: snow.overflow_layer }),
      { low: true });   // the float32 reference climbs through the band's middle; its bottom stays empty
  }
  return fig;
}

function overflowCaption(data) {
  const snow = data.snowball;
  if (snow.overflow_layer === null) {
    return t('precision.caption.safe', { depth: snow.layers.length, peak: precise(Math.max(...snow.float16_max_abs), 4) });
  }
  const sublayer = t(`precision.sublayer.${snow.overflow_sublayer.split('.').pop()}`);
  return t('precision.caption.overflow', { layer: snow.overflow_layer, sublayer,
    f32: snow.float32_exceeds_float16_max_at ?? '—' });
}

runPage({
  params: [...scalarSpecs('precision.field', NUMBER_KEYS), ...scalarSpecs('precision.stack', STACK_KEYS, pageData.extra.stack)],
  charts: [{
    key: 'precision-overflow',
    dataKey: (state) => [...NUMBER_KEYS, ...STACK_KEYS].map((k) => state[k]),
    load: loadPrecision,
    figure: overflowFigure,
    caption: overflowCaption,
    table: (data) => data.snowball.layers.map((layer, i) => ({ layer, float16_max_abs: data.snowball.float16_max_abs[i],
      float32_max_abs: data.snowball.float32_max_abs[i], float16_act_norm: data.snowball.float16_act_norm[i],
      float32_act_norm: data.snowball.float32_act_norm[i] })),
    json: (data) => data,
  }],
});
