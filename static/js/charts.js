// Drawing a chart built in Python (app/figures: the figure, its view patches, its caption) and keeping it fitted to
// its box: Plotly's config, the legend's room, tidy log ticks, view patches and streamed patches applied, resizing.
// Nothing here builds a figure (saving a chart: save.js).
import { t, fmt } from './i18n.js';
import { forScreen, measuredWidth, touchScreen } from './fit.js';
import { legible, scaleOf, typesetFigure } from './legible.js';

/** Not Plotly's `responsive` (it only follows the window): charts follow their own box, see followSize.
 *  No mode bar on touch screens: its zoom and pan tools need a drag, which there scrolls the page (see forScreen). */
export function plotlyConfig() {
  return { displaylogo: false, displayModeBar: touchScreen() ? false : 'hover', modeBarButtonsToRemove: ['toImage', 'lasso2d', 'select2d'] };
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
  const family = layout.legend.font?.family || layout.font?.family;
  const textWidth = (name, fontSize) => measuredWidth(name, fontSize, false, family);
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

/** fitLegend estimates the legend's height; where Plotly's legend came out taller (taller rows: ‖, √ and CJK
 *  glyphs) and reaches up into the title, push the plot and legend down until it clears the title. A legend taller
 *  than the top margin stays at the chart's top edge (Plotly's auto-margin): the plot then starts below the title,
 *  a gap and the whole legend. */
async function clearTitle(element) {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const title = element.querySelector('.gtitle');
    const legend = element.querySelector('.legend');
    if (!title || !legend || element.layout.legend?.yanchor !== 'bottom') return;
    // in layout px: on the deck's CSS-scaled stage (1920x1080: x1.5) screen px would move the plot more than needed
    const scale = scaleOf(element);
    const titleBox = title.getBoundingClientRect(), legendBox = legend.getBoundingClientRect();
    const overlap = (titleBox.bottom - legendBox.top) / scale + 4;
    if (overlap <= 0) return;
    const below = (titleBox.bottom - element.getBoundingClientRect().top + legendBox.height) / scale + 4;
    await window.Plotly.relayout(element, { 'margin.t': Math.ceil(Math.max(element.layout.margin.t + overlap, below)) });
  }
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
function applyPatch(base, patch) {
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
