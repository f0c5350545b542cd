// /chain: the chain product. A plain stack multiplies g per layer, the shortcut 1 + g (He et al. 2016, eq. 5);
// both cumulative products per layer from GET /api/chain, with the exact final values in the caption.
import { runPage, scaleParam } from '../page.js';
import { getJSON } from '../api.js';
import { layout, line, hline, PALETTE, t } from '../charts.js';
import { pageData } from '../i18n.js';
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

function chainCaption(data, state) {
  const active = caseFor(state);
  const values = { depth: data.depth, g: data.derivative, factor: factorOf(data.derivative),
    plain: precise(data.plain_final), residual: precise(data.residual_final) };
  const plain = data.plain_final;
  const verdict = plain !== null && plain < 1e-3 ? 'vanish' : plain === null || plain > 1e3 ? 'explode' : 'fine';
  // A worked case says what it shows in its own words; otherwise judge the plain product.
  let text = t('chain.caption', values) + (active ? t(`chain.case.${active.key}.caption`) : t(`chain.verdict.${verdict}`));
  // The toy's other lesson: 1 + g never shrinks but explodes for large g (the chart shows it; the caption must say so).
  const residual = data.residual_final;
  if (active?.key !== 'shortcut' && (residual === null || residual > 1e3)) text += t('chain.shortcut.grows');
  if (data.nonfinite_count) text += t('chain.verdict.overflow');
  return text;
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
