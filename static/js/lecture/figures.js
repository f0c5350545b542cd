// Each chart kind of the deck as a Plotly figure, built from the slide's answers with the shared chart code
// (charts.js: layout, line, hline, overflow marks); the deck data (app/experiments/lecture) says which kind,
// which answer feeds which series, and the labels. 'table' is an HTML table, not a Plotly figure.
import { t, lang } from '../i18n.js';
import { axis, layout, line, hline, markOverflow, overflowBand, themeOf, PALETTE, FLOAT16_MAX } from '../charts.js';
import { evaluate, formatNumber, readPath } from './claims.js';

const tr = (text) => (typeof text === 'string' ? text : text[lang]);
const label = (spec) => (spec.key ? t(spec.key, { value: spec.value }) : tr(spec));

/** Per-layer values of a trace (layer 0 = the embedding) or of a chain lesson (layers 1..L). */
function perLayer(answer, field) {
  if (answer.layers && answer.layers[0]?.layer !== undefined) {
    return { x: [0, ...answer.layers.map((l) => l.layer)], y: [answer.embedding[field], ...answer.layers.map((l) => l[field])] };
  }
  return { x: answer.layers, y: readPath(answer, field) };   // a path: 'stream.mean' of a real model's trace
}

/** Two panels side by side: the second gets its own axes (x2, y2). */
function splitPanels(fig, panels, theme) {
  const style = themeOf(theme);
  fig.layout.xaxis.domain = [0, 0.4];   // the gap holds the right panel's y title and ticks
  fig.layout.xaxis2 = { ...axis(style, t('axis.layer')), domain: [0.63, 1], anchor: 'y2' };
  fig.layout.yaxis2 = { ...axis(style, tr(panels[1].y), { log: panels[1].log }), anchor: 'x2' };
  if (panels[1].range) fig.layout.yaxis2.range = panels[1].range;
  if (panels[1].log) fig.layout.yaxis2.nticks = 6;
}

function layersFigure(chart, answers, theme) {
  const [first] = chart.panels;
  // x: the layers, or the chart's own axis (the depth-scan slide: x is the depth, log)
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: chart.x ? tr(chart.x) : t('axis.layer'), y: tr(first.y),
    ylog: first.log, xlog: Boolean(chart.xlog) }) };
  if (first.range) fig.layout.yaxis.range = first.range;
  if (first.log) fig.layout.yaxis.nticks = 6;   // powers of ten, not every digit between them
  if (chart.panels.length > 1) splitPanels(fig, chart.panels, theme);
  const named = new Set();
  chart.series.forEach((s) => {
    const { x, y } = perLayer(answers[s.source], s.field);
    const name = tr(s.label);
    fig.data.push(line(theme, { name, x, y, color: PALETTE[s.color], dash: s.dash, markers: x.length <= 30,
      legendgroup: name, showlegend: !named.has(name), xaxis: s.panel ? 'x2' : 'x', yaxis: s.panel ? 'y2' : 'y' }));
    named.add(name);
    if (s.panel === 0 && y.some((v) => v === null)) {
      const before = fig.layout.annotations.length;
      markOverflow(theme, fig, x, y, { series: name });
      // two panels: keep the label inside the left one (top left, smaller, a line per part: narrow enough to stay
      // off the right panel's y title and off a line climbing at the panel's right edge), off both y titles
      if (chart.panels.length > 1) fig.layout.annotations.slice(before).forEach((a) => Object.assign(a, {
        xref: 'paper', x: 0.01, xanchor: 'left', y: 0.98, yanchor: 'top', text: a.text.replace(/([:：]) ?/g, '$1<br>'),
        font: { ...a.font, size: themeOf(theme).font - 6 } }));
    }
    if (chart.panels[s.panel].log) markUnderflow(theme, fig, x, y, name);
  });
  (chart.overlays || []).forEach((overlay) => addOverlay(theme, fig, chart, answers, overlay));
  if (chart.xlog) {   // a few depths on a log axis: a tick at each, not Plotly's 2 3 4 5 between decades
    const { x } = perLayer(answers[chart.series[0].source], chart.series[0].field);
    Object.assign(fig.layout.xaxis, { tickvals: x, ticktext: x.map(String) });
  }
  return fig;
}

/** A log axis cannot show 0: say where a series underflowed to exactly 0 instead of silently dropping the points. */
function markUnderflow(theme, fig, x, y, name) {
  const zeros = x.filter((_, i) => y[i] === 0);
  if (!zeros.length) return;
  fig.layout.annotations.push({ xref: 'paper', yref: 'paper', x: 0.01, y: 0.02, xanchor: 'left', yanchor: 'bottom', showarrow: false,
    text: t('lecture.underflow', { name, from: Math.min(...zeros), to: Math.max(...zeros) }),
    font: { size: themeOf(theme).font - 4, color: PALETTE.vermillion }, bgcolor: 'rgba(255,255,255,0.85)' });
}

const LAW_COLORS = { sqrt: 'black', line: 'purple', power: 'vermillion', independent: 'green' };
const LAW_DASHES = { independent: 'dot' };

function addOverlay(theme, fig, chart, answers, overlay) {
  if (overlay.type === 'hline') {
    hline(theme, fig, overlay.value, label(overlay.label), { color: PALETTE[overlay.color || 'black'], below: overlay.below });
    return;
  }
  // 'law_fit': a law the server fitted from ‖x₀‖ (POST /api/laws, app/experiments/laws.py): drawn, not computed here
  const laws = answers[overlay.source];
  const fit = overlay.law === 'independent' ? laws.independent : laws.fits[overlay.law];
  if (!fit) return;
  const name = t(`lecture.law.${overlay.law}`, { p: formatNumber(fit.p, 2), error: formatNumber(fit.error, 2) });
  fig.data.push(line(theme, { name, x: laws.layers, y: fit.curve, color: PALETTE[LAW_COLORS[overlay.law]],
    dash: LAW_DASHES[overlay.law] || 'dash', markers: false, width: 0.8 }));
}

function chainFigure(chart, answers, theme) {
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: t('chain.axis.x'), y: t('chain.axis.y'), ylog: true }) };
  chart.series.forEach((s) => {
    const answer = answers[s.source];
    fig.data.push(line(theme, { name: tr(s.label), x: answer.layers, y: answer[s.field], color: PALETTE[s.color], markers: false }));
  });
  hline(theme, fig, 1, t('chain.mark.one'));
  return fig;
}

function precisionFigure(chart, [answer], theme) {
  const snow = answer.snowball;
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: t('axis.layer_plain'), y: t('precision.axis.y'), ylog: true }) };
  fig.data.push(line(theme, { name: t('precision.series.float32'), x: snow.layers, y: snow.float32_max_abs, color: PALETTE.black,
    dash: 'dash', width: 0.7, markers: false }));
  fig.data.push(line(theme, { name: t('precision.series.float16'), x: snow.layers, y: snow.float16_max_abs, color: PALETTE.blue }));
  hline(theme, fig, FLOAT16_MAX, t('series.fp16_max'), { color: PALETTE.vermillion });
  if (snow.overflow_layer !== null) {
    overflowBand(theme, fig, snow.overflow_layer, snow.layers.length, t('mark.overflow', { layer: snow.overflow_layer }), { low: true });
  }
  return fig;
}

function softmaxFigure(chart, [answer], theme) {
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: t('softmax.axis.scale'), y: t('softmax.axis.value'),
    xlog: true, ylog: true }) };
  const x = answer.sweep.map((row) => row.scale);
  for (const [field, key, color] of [['entropy', 'softmax.series.entropy', 'green'], ['max_prob', 'softmax.series.max_prob', 'orange'],
    ['jacobian_norm', 'softmax.series.jacobian', 'vermillion']]) {
    fig.data.push(line(theme, { name: t(key), x, y: answer.sweep.map((row) => row[field]), color: PALETTE[color], markers: false }));
  }
  fig.layout.yaxis.range = [-16, 0.5];   // below 1e-16 a gradient is lost next to a weight of size 1, even in float64
  return fig;
}

function layernormFigure(chart, answers, theme) {
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: t('layernorm.axis.x'), y: t('layernorm.axis.y') }) };
  const colors = { x: '#8a9099', normalized: PALETTE.blue, output: PALETTE.vermillion };
  chart.bars.forEach((field) => {
    const y = field === 'x' ? chart.sources[0].body.x : answers[0][field];
    const name = t(`lecture.bar.${field}`);
    fig.data.push({ type: 'bar', name, x: y.map((_, i) => i + 1), y, marker: { color: colors[field] },
      text: y.map((v) => (field === 'x' ? String(v) : formatNumber(v, 4))), textposition: 'outside', cliponaxis: false,
      textfont: { size: themeOf(theme).font - 6 }, hovertemplate: `%{y:.4g}<extra>${name}</extra>` });
  });
  fig.layout.barmode = 'group';
  fig.layout.xaxis.dtick = 1;
  return fig;
}

function trainFigure(chart, answers, theme) {
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: t('chart.train_loss.x'), y: t('chart.train_loss.y'),
    ylog: true, legendBelow: false }) };
  const recordings = answers.filter(Boolean);
  if (!recordings.length) {   // not trained yet: titles, no made-up ticks, and what to press
    for (const a of [fig.layout.xaxis, fig.layout.yaxis]) Object.assign(a, { showticklabels: false, showgrid: false, ticks: '' });
    fig.layout.annotations.push({ xref: 'paper', yref: 'paper', x: 0.5, y: 0.5, showarrow: false, text: t('lecture.train_idle'),
      font: { size: themeOf(theme).font, color: PALETTE.blue } });
    return fig;
  }
  const colors = ['vermillion', 'blue', 'orange', 'green'];
  let index = 0;
  answers.forEach((recording, i) => chart.sources[i].body.runs.forEach((_, run) => {
    const series = recording?.runs[run];
    const name = tr(chart.labels[index]);
    fig.data.push(line(theme, { name, x: series ? [...series.steps] : [], y: series ? [...series.loss] : [], color: PALETTE[colors[index]],
      markers: false }));
    index += 1;
  }));
  const steps = chart.sources[0].body.steps;
  const symbols = chart.sources[0].body.runs[0].vocab_size - 1;
  fig.layout.xaxis.range = [0, steps];
  hline(theme, fig, Math.log(symbols), t('chart.train_loss.chance', { symbols, value: formatNumber(Math.log(symbols)) }),
    { below: true });   // the stalled runs sit on the line: its label goes under it
  return fig;
}

function barsFigure(chart, answers, theme) {
  const style = themeOf(theme);
  const values = answers.map((answer) => readPath(answer, chart.field));
  const names = chart.labels.map(tr);
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title), x: tr(chart.x), y: '', xlog: true }) };
  const shown = values.map((v) => (v > 0 ? v : null));
  fig.data.push({ type: 'bar', orientation: 'h', y: names, x: shown, showlegend: false, cliponaxis: false,
    marker: { color: values.map((v) => (v > 0.05 && v < 20 ? PALETTE.blue : PALETTE.vermillion)) },
    text: values.map((v) => (v === 0 ? t('lecture.zero') : formatNumber(v, 2))), textposition: 'outside',
    textfont: { size: style.font - 4 }, hovertemplate: '%{y}: %{x:.3g}<extra></extra>' });
  const finite = shown.filter((v) => v !== null);
  const low = Math.floor(Math.log10(Math.min(...finite))) - 1, high = Math.ceil(Math.log10(Math.max(...finite))) + 1;
  Object.assign(fig.layout.xaxis, { range: [low, high], dtick: Math.max(1, Math.ceil((high - low) / 5)), tickangle: 0 });
  values.forEach((v, i) => {   // no bar on a log axis for 0: say it where the bar would start
    if (!(v > 0)) fig.layout.annotations.push({ xref: 'x', x: low, yref: 'y', y: names[i], xanchor: 'left', showarrow: false,
      text: v === 0 ? t('lecture.zero') : t('lecture.overflow'), font: { size: style.font - 4, color: PALETTE.vermillion } });
  });
  Object.assign(fig.layout.yaxis, { type: 'category', autorange: 'reversed', tickfont: { size: style.font - 6 }, showgrid: false });
  fig.layout.margin.l = 20;
  fig.layout.hovermode = 'closest';
  // x = 1: the gradient arrives at block 1 as large as it left block 96
  fig.layout.shapes.push({ type: 'line', xref: 'x', x0: 1, x1: 1, yref: 'paper', y0: 0, y1: 1, line: { color: PALETTE.black, dash: 'dot', width: 2 } });
  return fig;
}

/** The 'table' kind: one row per source, one column per path, as a Plotly table (drawn, exported and printed like
 *  every other chart). */
function tableFigure(chart, answers, theme, slide) {
  const style = themeOf(theme);
  const fig = { data: [], layout: layout(theme, { title: tr(chart.title) }) };
  // cells: each the value its slide showed, with that slide's digits (a range low – high where seeds disagree)
  const measured = chart.cells ? evaluate(slide.claim, answers) : null;
  const cellText = (cell) => (cell.upto
    ? `${formatNumber(measured[cell.value], cell.digits)} – ${formatNumber(measured[cell.upto], cell.digits)}`
    : formatNumber(measured[cell.value], cell.digits));
  const columns = chart.columns.map((c, j) => (chart.cells
    ? chart.cells.map((row) => (row[j] ? cellText(row[j]) : ''))
    : answers.map((answer) => formatNumber(readPath(answer, c.path), 3))));
  fig.data.push({ type: 'table', columnwidth: [1.5, ...chart.columns.map(() => 1)],
    header: { values: ['', ...chart.columns.map((c) => `<b>${tr(c.label).replace(/\n/g, '<br>')}</b>`)], align: ['left', 'right'],
      font: { size: style.font - 4, color: '#111' }, height: style.font * 2.4, line: { color: '#c9cdd3' }, fill: { color: '#f1f3f6' } },
    cells: { values: [chart.rows.map((row) => `<b>${tr(row).replace(/\n/g, '<br>')}</b>`), ...columns], align: ['left', 'right'],
      font: { size: style.font - 2, color: '#111' }, height: style.font * 2.2, line: { color: '#c9cdd3' }, fill: { color: '#fff' } } });
  Object.assign(fig.layout, { margin: { l: 4, r: 4, t: style.title * 1.6, b: 4 }, showlegend: false,
    xaxis: { visible: false }, yaxis: { visible: false } });
  return fig;
}

const FIGURES = { layers: layersFigure, chain: chainFigure, precision: precisionFigure, softmax: softmaxFigure,
  layernorm: layernormFigure, train: trainFigure, bars: barsFigure, table: tableFigure };

/** The Plotly figure of a slide's chart. Its title is smaller than the slide theme's: the slide's own title is above it. */
export function figureFor(slide, answers, theme) {
  const fig = FIGURES[slide.chart.kind](slide.chart, answers, theme, slide);
  fig.layout.title.font.size = Math.round(themeOf(theme).title * 0.75);
  fig.layout.legend.font.size = themeOf(theme).font - 4;
  return fig;
}
