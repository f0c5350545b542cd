// /: the tour's live thumbnail: Post-LN vs Pre-LN stream norms at depth 24. Everything else is the request
// model's default (same init, sizes and seed), so the norm position is the only difference.
import { runPage, traceRows } from '../page.js';
import { fetchTrace } from '../api.js';
import { layout, line, hline, SERIES, t, fmt } from '../charts.js';
import { pageData } from '../i18n.js';

// The page's defaults come from its registry entry (app/pages/explorer.py), which the warm-up computes too.
const DEPTH = pageData.defaults.depth;
const SHOWN = pageData.defaults.positions;

async function loadTour() {
  const traces = await Promise.all(SHOWN.map((position) => fetchTrace({ depth: DEPTH, norm_position: position })));
  return SHOWN.map((position, i) => ({ position, trace: traces[i] }));
}

function tourFigure(variants, state) {
  const fig = { data: [], layout: layout(state.theme, { title: t('chart.tour.title'), x: t('axis.layer'), y: t('chart.norms.y') }) };
  variants.forEach(({ position, trace }, i) => {
    const x = [0, ...trace.layers.map((l) => l.layer)];
    const y = [trace.embedding.act_norm, ...trace.layers.map((l) => l.act_norm)];
    fig.data.push(line(state.theme, { name: t(`series.${position}_ln`), x, y, color: SERIES[i] }));
  });
  const width = variants[0].trace.config.d_model;
  hline(state.theme, fig, Math.sqrt(width), t('series.theory_post', { value: fmt(Math.sqrt(width)) }),
    { below: true });   // Post-LN's points sit on the line and Pre-LN's rise above it: only below is free
  return fig;
}

runPage({
  modelControls: false,
  charts: [{
    key: 'tour',
    dataKey: () => DEPTH,
    load: loadTour,
    figure: tourFigure,
    caption: (variants) => {
      const width = variants[0].trace.config.d_model;
      return t('caption.tour', { d: width, value: fmt(Math.sqrt(width)) });
    },
    table: (variants) => variants.flatMap((v) => traceRows(v.trace, { norm_position: v.position })),
  }],
});
