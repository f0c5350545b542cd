// All Plotly drawing lives here: palette, themes, layouts, common marks and drawing (saving a chart: save.js).
// Page modules only map API answers to series with these helpers.
import { t, fmt } from './i18n.js';
import { forScreen, touchScreen } from './fit.js';
import { legible, scaleOf, typesetFigure } from './legible.js';

// Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
export const PALETTE = {
  blue: '#0072B2', vermillion: '#D55E00', green: '#009E73', purple: '#CC79A7',
  orange: '#E69F00', sky: '#56B4E9', yellow: '#F0E442', black: '#000000',
};
export const SERIES = [PALETTE.blue, PALETTE.vermillion, PALETTE.green, PALETTE.purple, PALETTE.orange, PALETTE.sky, PALETTE.black];

export const THEMES = {
  normal: { font: 14, title: 17, line: 2.5, marker: 6, grid: '#e2e5e9', axis: '#444', margin: 62 },
  slide: { font: 22, title: 28, line: 5, marker: 11, grid: '#cfd3d8', axis: '#000', margin: 90 },
};
const FONT = 'system-ui, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif';

export function themeOf(name) {
  return THEMES[name] || THEMES.normal;
}

/** One axis in the theme; log axes show powers of ten. */
/** The site's number rule on an axis (format.js, app/numbers.py): plain digits or powers of ten, never an SI suffix
 *  ("20B" reads as bytes or billions); Plotly writes powers of ten from 10⁴ on (its own threshold) and plain digits
 *  below. */
export const AXIS_NUMBERS = { exponentformat: 'power', separatethousands: false };

export function axis(theme, title, { log = false, ...more } = {}) {
  return {
    // standoff: a gap between tick labels and title (Plotly's default lets tall glyphs such as ‖ touch the ticks).
    title: { text: title, font: { size: theme.font + 1 }, standoff: Math.round(theme.font * 0.8) }, type: log ? 'log' : 'linear',
    gridcolor: theme.grid, linecolor: theme.axis, linewidth: theme === THEMES.slide ? 2 : 1, showline: true,
    zeroline: false, ticks: 'outside', tickfont: { size: theme.font }, automargin: true,
    ...AXIS_NUMBERS, ...more,
  };
}

/** The base layout of every chart. */
export function layout(themeName, { title, x, y, xlog = false, ylog = false, legendBelow = false } = {}) {
  const theme = themeOf(themeName);
  return {
    // Title pinned to the top edge; the legend row below it pushes the plot down (Plotly auto-margins), never over it.
    title: { text: title, font: { size: theme.title }, x: 0.01, xanchor: 'left', xref: 'container', y: 1, yanchor: 'top', yref: 'container', pad: { t: 10 } },
    font: { family: FONT, size: theme.font, color: '#111' },
    paper_bgcolor: '#ffffff', plot_bgcolor: '#ffffff',
    margin: { l: theme.margin, r: 24, t: theme.title * 2 + 8, b: theme.margin },
    xaxis: axis(theme, x, { log: xlog }), yaxis: axis(theme, y, { log: ylog }),
    // Legend in a row between the title and the plot, so it never hides data.
    legend: legendBelow
      ? { orientation: 'h', x: 0, y: -0.22, font: { size: theme.font } }
      : { orientation: 'h', x: 0, xanchor: 'left', y: 1.02, yanchor: 'bottom', font: { size: theme.font } },
    hovermode: 'x unified', hoverlabel: { font: { size: theme.font } },
    shapes: [], annotations: [],
  };
}

/** A line series; null values stay gaps (they are overflowed values, strict JSON turns inf/NaN into null). */
export function line(themeName, { name, x, y, color = SERIES[0], dash = 'solid', width = 1, markers = true, ...more }) {
  const theme = themeOf(themeName);
  return {
    type: 'scatter', mode: markers ? 'lines+markers' : 'lines', name, x, y,
    line: { color, dash, width: theme.line * width }, marker: { size: theme.marker, color },
    hovertemplate: `%{y:.4g}<extra>${escapeText(name)}</extra>`, ...more,
  };
}

/** A horizontal reference line across the plot with a label at its right end. */
export function hline(themeName, fig, value, text, { color = PALETTE.black, dash = 'dash', yref = 'y', xref = 'x', below = false } = {}) {
  const theme = themeOf(themeName);
  const domain = xref === 'x' ? 'x domain' : `${xref} domain`;
  fig.layout.shapes.push({ type: 'line', xref: domain, x0: 0, x1: 1, yref, y0: value, y1: value,
    line: { color, dash, width: Math.max(1.5, theme.line * 0.6) } });
  const axisName = yref === 'y' ? 'yaxis' : `yaxis${yref.slice(1)}`;
  const logAxis = fig.layout[axisName]?.type === 'log';  // annotations on a log axis are placed in log10 units
  fig.layout.annotations.push({ xref: domain, x: 1, yref, y: logAxis ? Math.log10(value) : value, text, showarrow: false, xanchor: 'right',
    yanchor: below ? 'top' : 'bottom', font: { size: theme.font - 1, color }, bgcolor: 'rgba(255,255,255,0.8)' });
}

/** Log10 colour heatmap (Plotly has no log colour scale): z holds log10 values, hover shows the real ones. */
// ColorBrewer RdBu (colour-blind safe): red = below 1 (signal lost), white = 1, blue = above 1 (amplified).
const DIVERGING = [[0, '#b2182b'], [0.25, '#ef8a62'], [0.5, '#f7f7f7'], [0.75, '#67a9cf'], [1, '#2166ac']];

export function logHeatmap(themeName, { x, y, values, colorbarTitle, diverging = false }) {
  const theme = themeOf(themeName);
  const z = values.map((row) => row.map((v) => (v > 0 && Number.isFinite(v) ? Math.log10(v) : null)));
  const flat = z.flat().filter((v) => v !== null);
  let low = flat.length ? Math.floor(Math.min(...flat)) : 0, high = flat.length ? Math.ceil(Math.max(...flat)) : 1;
  if (high === low) high = low + 1;
  if (diverging) {  // symmetric around log10(1) = 0 so white means "arrives intact"
    high = Math.max(1, -low, high);
    low = -high;
  }
  const step = Math.max(1, Math.ceil((high - low) / 8));
  const tickvals = [];
  for (let v = low; v <= high; v += step) tickvals.push(v);
  return {
    type: 'heatmap', x, y, z, customdata: values, colorscale: diverging ? DIVERGING : 'Viridis', zmin: low, zmax: high, hoverongaps: false,
    hovertemplate: `L=%{y}, l=%{x}: %{customdata:.3g}<extra></extra>`,
    colorbar: { title: { text: colorbarTitle, side: 'right', font: { size: theme.font } }, tickvals,
      ticktext: tickvals.map((v) => colourTick(v, diverging)), tickfont: { size: theme.font }, thickness: theme.font + 4 },
  };
}

/** A colour-bar tick for log10 value v: ×0.01 … ×100 as plain numbers, powers of ten beyond (×10⁶, not ×1000000),
 *  written like the log axes' tick labels. */
function colourTick(v, ratio) {
  const plain = Math.abs(v) <= 2 ? String(Number((10 ** v).toPrecision(1))) : `10<sup>${v}</sup>`;
  return ratio ? `×${plain}` : plain;
}

/** Layout for a heatmap: no grid lines, and a grey background so "no such layer" never looks like a value. */
export function heatmapLayout(themeName, options) {
  const base = layout(themeName, options);
  base.hovermode = 'closest';
  base.plot_bgcolor = '#bdbdbd';
  base.xaxis.showgrid = false;
  base.yaxis.showgrid = false;
  return base;
}

/** Not Plotly's `responsive` (it only follows the window): charts follow their own box, see followSize.
 *  No mode bar on touch screens: its zoom and pan tools need a drag, which there scrolls the page (see forScreen). */
export function plotlyConfig() {
  return { displaylogo: false, displayModeBar: touchScreen() ? false : 'hover', modeBarButtonsToRemove: ['toImage', 'lasso2d', 'select2d'] };
}

/** Rough rendered width of a label: CJK glyphs are about one em, others about 0.6 em. */
function textWidth(text, size) {
  let ems = 0;
  for (const ch of String(text)) ems += /[\u2e80-\u9fff\uff00-\uffef]/.test(ch) ? 1.0 : 0.6;
  return ems * size;
}

/** Reserve room between the title and the plot for the legend row(s), so neither covers the other.
 *  Plotly's own auto-margin does not count the title, hence this estimate for the given width. */
export function fitLegend(figure, width) {
  const layout = figure.layout;
  if (layout.showlegend === false || layout.legend?.orientation !== 'h' || layout.legend.y < 1) return figure;
  // the legend's type size as built, kept in meta: this runs again at every new width
  layout.meta = { legend_font: layout.legend.font?.size || layout.font?.size || 14, ...layout.meta };
  const names = figure.data.filter((trace) => trace.visible !== false && trace.showlegend !== false && trace.name)
    .map((trace) => trace.name);
  const available = Math.max(200, width - (layout.margin?.l || 60) - (layout.margin?.r || 20));
  // a phone: an entry wider than the plot would be cut off at the chart's edge, so the legend's type shrinks to fit
  const widest = Math.max(1, ...names.map((name) => textWidth(name, layout.meta.legend_font)));
  const size = Math.max(12, Math.min(layout.meta.legend_font, Math.floor(layout.meta.legend_font * (available - 40) / widest)));
  const current = layout.legend.font?.size || layout.font?.size || 14;   // shrunk at a narrower width, or as built
  if (size !== current) layout.legend = { ...layout.legend, font: { ...layout.legend.font, size } };
  const items = names.map((name) => 40 + textWidth(name, size));
  let rows = items.length ? 1 : 0, used = 0;
  for (const item of items) {
    if (used && used + item > available) { rows += 1; used = 0; }
    used += item;
  }
  const titleHeight = layout.title?.text ? (layout.title.font?.size || 17) * 1.5 + 12 : 8;
  layout.margin = { ...layout.margin, t: titleHeight + rows * size * 1.45 + 6 };
  layout.legend = { ...layout.legend, y: 1, yanchor: 'bottom', x: 0, xanchor: 'left' };
  return figure;
}

/** About five round values between low and high (steps of 1, 2 or 5 times a power of ten). */
function roundTicks(low, high) {
  const raw = (high - low) / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw) || 10 * power;
  const ticks = [];
  for (let v = Math.ceil(low / step) * step; v <= high * (1 + 1e-9); v += step) ticks.push(Number(v.toPrecision(6)));
  return ticks;
}

/** Log y axes spanning under two decades: Plotly would label every digit (0.011, 0.012, ...) or almost nothing.
 *  Give them 1-2-5 ticks (0.002, 0.005, 0.01), or round linear-spaced ticks under 0.7 decades. Axes tied by
 *  `matches` (aligned panels) get ticks from all their data together. */
export function tidyLogAxes(figure) {
  const groups = new Map();
  for (const [name, axisLayout] of Object.entries(figure.layout)) {
    if (!name.startsWith('yaxis') || axisLayout?.type !== 'log') continue;
    const id = name === 'yaxis' ? 'y' : `y${name.slice(5)}`;
    const root = axisLayout.matches || id;
    if (!groups.has(root)) groups.set(root, { axes: [], values: [] });
    const group = groups.get(root);
    group.axes.push(axisLayout);
    figure.data.filter((trace) => (trace.yaxis || 'y') === id)
      .forEach((trace) => (trace.y || []).forEach((v) => Number.isFinite(v) && v > 0 && group.values.push(v)));
  }
  for (const { axes, values } of groups.values()) {
    const decades = values.length ? Math.log10(Math.max(...values) / Math.min(...values)) : 99;
    // one value only (g = 0 on /chain: every drawn product is 1): Plotly's own ticks over the builder's range
    if (decades === 0) continue;
    const ticks = decades < 0.7 ? roundTicks(Math.min(...values), Math.max(...values)) : null;
    for (const axisLayout of axes) {
      for (const key of ['dtick', 'tickformat', 'tickvals', 'ticktext']) delete axisLayout[key];
      if (ticks) Object.assign(axisLayout, { tickvals: ticks, ticktext: ticks.map((v) => String(v)) });
      else if (decades < 2) Object.assign(axisLayout, { dtick: 'D2', tickformat: '~g' });
    }
  }
  return figure;
}

/** Plotly.js runs after the page's module (templates/base.html, lecture.html: the first answers are fetched
 *  meanwhile): wait for it before the first drawing. */
export function plotlyReady() {
  const script = document.getElementById('plotly-script');
  if (window.Plotly || !script) return Promise.resolve();
  return new Promise((resolve, reject) => {
    script.addEventListener('load', resolve, { once: true });
    script.addEventListener('error', () => reject(new Error('Plotly.js did not load')), { once: true });
  });
}

/** Draw (or redraw in place) a figure into a chart element and count the draws for tests. */
export async function draw(element, figure) {
  await plotlyReady();
  typesetFigure(figure);
  fitLegend(figure, element.clientWidth || 960);
  tidyLogAxes(figure);
  const size = `${element.clientWidth}x${element.clientHeight}`;   // what this drawing is laid out for
  await window.Plotly.react(element, figure.data, forScreen(figure, element.clientWidth || 960, element.clientHeight || 540), plotlyConfig());
  await clearTitle(element);
  await legible(element);   // legible.js: texts apart from each other and from the lines
  await clearTitle(element);
  element.dataset.drawn = String(Number(element.dataset.drawn || 0) + 1);
  element.dataset.sized = size;
  followSize(element, figure, size);
}

/** fitLegend estimates the legend's height; where Plotly's legend came out taller (its columns are as wide as
 *  the widest entry) and reaches up into the title, push the plot and legend down by the measured overlap. */
async function clearTitle(element) {
  const title = element.querySelector('.gtitle');
  const legend = element.querySelector('.legend');
  if (!title || !legend || element.layout.legend?.yanchor !== 'bottom') return;
  // in layout px: on the deck's CSS-scaled stage (1920x1080: x1.5) screen px would move the plot more than needed
  const overlap = (title.getBoundingClientRect().bottom - legend.getBoundingClientRect().top) / scaleOf(element) + 4;
  if (overlap > 0) await window.Plotly.relayout(element, { 'margin.t': element.layout.margin.t + Math.ceil(overlap) });
}

// ---- Resizing ------------------------------------------------------------------------------------
// One ResizeObserver for every chart on the page: a chart follows its own box (a phone turned sideways, a
// window dragged narrower, a panel folded away), and its legend's room is refitted to the new width.
// A resize is not a draw: data-drawn stays as it is.
let observer = null;
const drawnSize = new WeakMap();   // chart element -> "WxH" it was last laid out for
const drawnFigure = new WeakMap(); // chart element -> the figure it shows, as drawn (not as wrapped for the screen)

/** `size`: the box the drawing was laid out for. The box may change while a drawing is under way (a caption filled
 *  in beside it, the deck's stage scaled): the observer's call for that change came before the figure was known, so
 *  the drawing follows the box it has now. */
function followSize(element, figure, size) {
  drawnFigure.set(element, figure);
  drawnSize.set(element, size);
  if (typeof ResizeObserver !== 'function') return;
  observer ??= new ResizeObserver((entries) => entries.forEach((entry) => resizeChart(entry.target)));
  observer.observe(element);  // observing twice is a no-op
  if (size !== `${element.clientWidth}x${element.clientHeight}`) resizeChart(element);
}

async function resizeChart(element) {
  const size = `${element.clientWidth}x${element.clientHeight}`;
  const figure = drawnFigure.get(element);
  if (!figure || !element.clientWidth || !element._fullLayout || drawnSize.get(element) === size) return;  // hidden, or no change
  drawnSize.set(element, size);
  fitLegend(figure, element.clientWidth);
  const shown = forScreen(figure, element.clientWidth, element.clientHeight);
  const axisTitles = Object.keys(shown).filter((key) => /^[xy]axis\d*$/.test(key))
    .map((key) => [`${key}.title.text`, shown[key].title?.text]);
  await window.Plotly.Plots.resize(element);
  await window.Plotly.relayout(element, { margin: shown.margin, title: shown.title, annotations: shown.annotations,
    ...Object.fromEntries(axisTitles) });
  await clearTitle(element);
  await legible(element);
  await clearTitle(element);
  element.dataset.sized = size;   // tests: the drawing fits its box (data-sized = the box's WxH)
}

/** Merge a view patch into a figure in place, as app/figures/chart.py's apply_patch does. */
export function applyPatch(base, patch) {
  for (const [key, value] of Object.entries(patch)) {
    const here = base[key];
    if (Array.isArray(value) && Array.isArray(here) && value.length === here.length) {
      value.forEach((item, i) => {
        if (item && typeof item === 'object' && !Array.isArray(item) && here[i] && typeof here[i] === 'object') applyPatch(here[i], item);
        else if (item !== null) here[i] = item;
      });
    } else if (value && typeof value === 'object' && !Array.isArray(value) && here && typeof here === 'object' && !Array.isArray(here)) {
      applyPatch(here, value);
    } else {
      base[key] = value;
    }
  }
  return base;
}

/** A chart message with one `extend` patch applied in place (app/figures/train_stream.py's extend): each named
 *  trace's new points and the new CSV rows appended. */
export function extendChart(chart, patch) {
  patch.traces.forEach((trace, i) => {
    const series = chart.figure.data[trace];
    series.x.push(...patch.x[i]);
    series.y.push(...patch.y[i]);
  });
  chart.rows.push(...patch.rows);
  return chart;
}

/** A chart message with one `set` patch applied in place (app/figures/train_stream.py's assign): each value
 *  written at its path. */
export function assignChart(chart, patch) {
  patch.set.forEach(([path, value]) => {
    const last = path[path.length - 1];
    path.slice(0, -1).reduce((here, step) => here[step], chart)[last] = value;
  });
  return chart;
}

/** A chart built in Python (app/figures: figure in the normal theme, view patches by name) as drawn with the named
 *  views applied in order; a copy, since drawing adjusts the figure it is given. */
export function chartView(chart, ...names) {
  const figure = structuredClone(chart.figure);
  names.forEach((name) => { if (chart.patches?.[name]) applyPatch(figure, chart.patches[name]); });
  return figure;
}

/** Text safe inside HTML (chart labels, hover boxes, the exported files of save.js). */
export function escapeText(text) {
  return String(text).replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]);
}

/** Title + caption + value formatting helpers re-exported so page modules import one place. */
export { t, fmt };
