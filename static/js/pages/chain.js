// /chain: the chain product. A plain stack multiplies g per layer, the shortcut 1 + g (He et al. 2016, eq. 5);
// both cumulative products per layer from GET /api/chain, with the exact final values in the caption.
import { runPage, scaleParam } from '../page.js';
import { getJSON } from '../api.js';
import { layout, line, hline, PALETTE, t } from '../charts.js';
import { pageData, sentences } from '../i18n.js';
import { verdict } from '../verdict.js';
import { scalarSpecs, remember, handle, precise, queryOf, labelOnLogAxis } from '../lessons.js';

const CASES = pageData.extra.cases;

/** 1 + g without binary noise (1 + 0.1 prints as 1.1, not 1.1000000000000001). */
const factorOf = (g) => Number((1 + g).toPrecision(12));

function caseFor(state) {
  return CASES.find((c) => c.derivative === state.derivative && c.depth === state.depth);
}

function markCase(state) {
  const active = caseFor(state);
  document.querySelectorAll('.lesson-case').forEach((button) => {
    button.setAttribute('aria-pressed', String(active !== undefined && button.id === `case-${active.key}`));
  });
}

function chainFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.chain.title'), x: t('chain.axis.x'), y: t('chain.axis.y'),
    ylog: state.y_scale === 'log' }) };
  const markers = data.depth <= 128;
  fig.data.push(line(theme, { name: t('chain.series.plain', { g: data.derivative }), x: data.layers, y: data.plain,
    color: PALETTE.vermillion, markers }));
  fig.data.push(line(theme, { name: t('chain.series.residual', { factor: factorOf(data.derivative) }), x: data.layers,
    y: data.residual, color: PALETTE.blue, markers }));
  hline(theme, fig, 1, t('chain.mark.one'));
  labelOnLogAxis(fig, 1);
  return fig;
}

/** The caption judges both products from their numbers (static/js/verdict.js), so it cannot call a product that
 *  explodes "near 1"; the lesson each combination teaches follows from the two verdicts. */
function chainCaption(data, state) {
  const values = { depth: data.depth, g: data.derivative, factor: factorOf(data.derivative),
    plain: precise(data.plain_final), residual: precise(data.residual_final) };
  const plain = verdict(data.plain_final), residual = verdict(data.residual_final);
  const parts = [t('chain.caption', values),
    t('chain.verdicts', { plain: t(`verdict.${plain}`), residual: t(`verdict.${residual}`) })];
  const fades = ['faded', 'underflowed'].includes(plain), grows = (v) => ['grew', 'exploded', 'overflowed'].includes(v);
  if (fades && residual === 'kept') parts.push(t('chain.story.shortcut_keeps'));
  else if (fades) parts.push(t('chain.verdict.vanish'));
  else if (grows(plain)) parts.push(t('chain.verdict.explode'));
  else parts.push(t('chain.verdict.fine'));
  if (grows(residual)) parts.push(t('chain.shortcut.grows'));
  // What the gaps on a log axis are: an overflow to infinity (null in strict JSON), an exact 0, or a sign change.
  const products = [...data.plain, ...data.residual];
  if (products.some((v) => v === null)) parts.push(t('chain.verdict.overflow'));
  if (state.y_scale === 'log' && products.some((v) => v === 0)) parts.push(t('chain.verdict.zero'));
  if (state.y_scale === 'log' && products.some((v) => v < 0)) parts.push(t('chain.verdict.negative'));
  return sentences(...parts);
}

runPage({
  params: [...scalarSpecs('chain.field', ['derivative', 'depth']), scaleParam('y_scale', 'log')],
  charts: [{
    key: 'chain',
    dataKey: (state) => [state.derivative, state.depth],
    load: (state, ctx) => {
      remember(ctx);
      markCase(state);
      return getJSON(`/api/chain?${queryOf(state, ['derivative', 'depth'])}`, { signal: ctx.signal });
    },
    figure: chainFigure,
    caption: chainCaption,
    table: (data) => data.layers.map((layer, i) => ({ layer, plain: data.plain[i], residual: data.residual[i] })),
  }],
});

document.querySelectorAll('.lesson-case').forEach((button) => {
  button.addEventListener('click', () => handle.url?.update({
    derivative: Number(button.dataset.derivative), depth: Number(button.dataset.depth) }));
});
