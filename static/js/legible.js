// Legible at projector distance: after every Plotly draw (charts.js calls legible), measure the chart's texts on
// screen and move what a student in the back row could not read. Plotly lays out ticks, notes and bar labels
// without looking at each other or at the data; here, in order:
//   1. panels apart   a side-by-side panel's y title and ticks must not reach into the panel on its left;
//   2. ticks thinned  tick labels that touch (10⁻¹²10⁻⁹…) get every other tick; every bar keeps its category name;
//   3. bar labels     labels that touch ("−0.8165−0.8165") stand upright, then shrink; heatmap cell labels wider than
//                     their cells shrink;
//   4. room for text  bar labels or titles cut off at the chart's edge widen the axis range or the margin;
//   5. notes moved    a note over a plotted line or another text moves (xshift/yshift) to the nearest clear place:
//                     flipped to the other side of its line, slid along it, or up and down the plot; on a phone a
//                     note with no clear place is hidden (the caption under the chart says the same).
// Only the drawn layout changes (Plotly.relayout / restyle); the figure object, and so every export, stays as built.
// tests/browser/legibility.js is the independent check of the same faults.

import { wrapText } from './fit.js';
import { typeset } from './format.js';
import { fmt } from './i18n.js';

const GAP = 0.1;          // of a text's height, on each side: two texts keep a fifth of their height apart
const SAMPLE_PX = 3;      // spacing of the points sampled along each drawn line
const NARROW = 600;       // px: a phone-sized chart may hide a note that has no clear place

function shown(el) {
  const r = el.getBoundingClientRect();
  return r.width > 0.5 && r.height > 0.5;
}

function rect(el) {
  const r = el.getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, h: r.height, el };
}

function turned(el) {
  const m = el?.getCTM?.();
  return !m || Math.abs(m.b) > Math.abs(m.a);
}

/** The box of a text without the font's empty ascent and descent, widened by the gap texts keep. */
function ink(b, dx = 0, dy = 0) {
  if (b.kind === 'legend') return { left: b.left + dx, right: b.right + dx, top: b.top + dy, bottom: b.bottom + dy };   // opaque
  // a text turned upright (its transform says so: a short label such as "1" is taller than wide without being turned)
  const width = b.right - b.left, upright = b.h > width * 1.5 && b.kind !== 'tick' && turned(b.el);
  const line = upright ? width : b.h, shrink = line * 0.12 + 1, grow = line * GAP;
  return upright
    ? { left: b.left + shrink + dx, right: b.right - shrink + dx, top: b.top - grow + dy, bottom: b.bottom + grow + dy }
    : { left: b.left - grow + dx, right: b.right + grow + dx, top: b.top + shrink + dy, bottom: b.bottom - shrink + dy };
}

const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
const inside = (p, r) => p.x > r.left && p.x < r.right && p.y > r.top && p.y < r.bottom;

/** Every text of the chart with its kind and, for ticks, the axis it belongs to. */
function texts(gd) {
  const out = [];
  const add = (selector, kind, extra = () => ({})) => gd.querySelectorAll(selector).forEach((el) => {
    if (kind === 'axis title' && el.closest('.colorbar')) return;
    if (shown(el) && el.textContent.trim()) out.push({ ...rect(el), kind, ...extra(el) });
  });
  add('.g-gtitle text', 'title');
  add('.infolayer text[class$="title"]:not(.gtitle):not(.cbtitle)', 'axis title', (el) => ({ axis: el.getAttribute('class').replace('title', '') }));
  add('.xaxislayer-above [class$="tick"] > text, .yaxislayer-above [class$="tick"] > text', 'tick',
    (el) => ({ axis: el.parentNode.getAttribute('class').split(' ')[0].replace('tick', '') }));
  add('.annotation', 'note', (el) => ({ index: Number(el.dataset.index) }));
  add('.bartext', 'bar label');
  add('.colorbar text', 'colour bar');
  gd.querySelectorAll('.legend rect.bg').forEach((el) => { if (shown(el)) out.push({ ...rect(el), kind: 'legend' }); });
  return out.map((b) => (b.kind === 'note' ? { ...b, ...noteBox(b) } : b));
}

/** A note's box is its text's, not its (padded, transparent) group's. */
function noteBox(note) {
  const text = note.el.querySelector('.annotation-text-g text') || note.el;
  const r = text.getBoundingClientRect();
  return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, h: r.height };
}

/** Screen points along every drawn line and at every marker. */
function linePoints(gd) {
  const points = [];
  gd.querySelectorAll('.scatterlayer .trace path.js-line, .scatterlayer .trace .points path.point').forEach((path) => {
    if (!shown(path)) return;
    if (path.classList.contains('point')) {
      const r = path.getBoundingClientRect();
      points.push({ x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 });
      return;
    }
    const m = path.getScreenCTM();
    const length = path.getTotalLength();
    for (let s = 0; s <= length; s += SAMPLE_PX) {
      const p = path.getPointAtLength(s);
      points.push({ x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f });
    }
  });
  return points;
}

/** Screen pixels per layout pixel (the deck's stage is scaled by CSS). */
export function scaleOf(gd) {
  return gd.querySelector('.main-svg').getBoundingClientRect().width / gd._fullLayout.width || 1;
}

const axisKey = (id) => `${id[0]}axis${id.slice(1)}`;   // 'x2' -> 'xaxis2'

// ---- 1. panels apart --------------------------------------------------------------------------------
/** A panel's y title and ticks to the left of its plot must end before the plot to its left does. */
function panelsApart(gd, boxes, update) {
  const full = gd._fullLayout, scale = scaleOf(gd), left0 = gd.querySelector('.main-svg').getBoundingClientRect().left;
  for (const key of Object.keys(full).filter((k) => /^yaxis\d*$/.test(k))) {
    const y = full[key];
    const x = full[axisKey(y.anchor || 'x')];
    if (!x || !x.domain || x.domain[0] < 0.05) continue;
    const id = key.replace('axis', '');
    const own = boxes.filter((b) => (b.kind === 'tick' || b.kind === 'axis title') && b.axis === id);
    if (!own.length) continue;
    const reach = Math.min(...own.map((b) => b.left)) - (y.title?.font?.size || 14) * scale * 0.5;   // half a line apart
    const neighbour = Object.keys(full).filter((k) => /^xaxis\d*$/.test(k) && full[k].domain && full[k].domain[1] <= x.domain[0])
      .sort((a, b) => full[b].domain[1] - full[a].domain[1])[0];
    if (!neighbour) continue;
    const n = full[neighbour];
    const end = left0 + (n._offset + n._length) * scale;
    if (reach >= end) continue;
    const fraction = (end - reach) / scale / full._size.w + 0.01;
    if (gd.layout[neighbour]?.domain) update.layout[`${neighbour}.domain`] = [n.domain[0], Math.max(n.domain[0] + 0.2, n.domain[1] - fraction)];
    else if (gd.layout.grid) update.layout['grid.xgap'] = (gd.layout.grid.xgap ?? 0.1) + fraction;
  }
}

// ---- 2. ticks thinned -------------------------------------------------------------------------------
function crowdedAxes(boxes) {
  const byAxis = new Map();
  boxes.filter((b) => b.kind === 'tick').forEach((b) => byAxis.set(b.axis, [...(byAxis.get(b.axis) || []), b]));
  return [...byAxis].filter(([, ticks]) => ticks.some((a, i) => ticks.slice(i + 1).some((b) => meet(ink(a), ink(b))))).map(([id]) => id);
}

function thinTicks(gd, boxes, update) {
  for (const id of crowdedAxes(boxes)) {
    const key = axisKey(id), own = gd.layout[key] || {}, full = gd._fullLayout[key];
    if (!full || full.type === 'category') continue;
    if (Array.isArray(own.tickvals)) {
      update.layout[`${key}.tickvals`] = own.tickvals.filter((_, i) => i % 2 === 0);
      if (own.ticktext) update.layout[`${key}.ticktext`] = own.ticktext.filter((_, i) => i % 2 === 0);
    } else if (typeof full.dtick === 'number') {
      update.layout[`${key}.dtick`] = full.type === 'log' ? Math.max(1, Math.ceil(full.dtick * 2)) : full.dtick * 2;
      update.layout[`${key}.tick0`] = full.type === 'log' ? 0 : full.tick0;
    } else {
      update.layout[`${key}.dtick`] = 1;   // log axis labelled at 2 and 5 (D1/D2): powers of ten only
    }
  }
}

/** Plotly drops every other category label when it guesses they would not fit; each bar needs its name (slide
 *  "alternatives"): show all of them while each has at least its font's height, shrinking the font if needed. */
function everyCategory(gd, boxes, update) {
  const scale = scaleOf(gd);
  for (const key of Object.keys(gd._fullLayout).filter((k) => /^[xy]axis\d*$/.test(k))) {
    const full = gd._fullLayout[key], id = key.replace('axis', '');
    const count = full._categories?.length || 0;
    const labelled = boxes.filter((b) => b.kind === 'tick' && b.axis === id).length;
    if (full.type !== 'category' || !count || labelled >= count || full.dtick === 1) continue;
    const spacing = (full._length / count), size = full.tickfont.size;
    if (spacing < size * 0.75 || (key.startsWith('x') && scale)) continue;   // a crowded x axis keeps Plotly's choice
    update.layout[`${key}.dtick`] = 1;
    if (spacing < size * 1.1) update.layout[`${key}.tickfont.size`] = Math.floor(spacing / 1.1);
  }
}

// ---- 3. bar labels ----------------------------------------------------------------------------------
function barLabels(gd, boxes, update) {
  const labels = boxes.filter((b) => b.kind === 'bar label');
  const touching = labels.some((a, i) => labels.slice(i + 1).some((b) => meet(ink(a), ink(b))));
  if (!touching) return;
  gd.data.forEach((trace, i) => {
    if (trace.type !== 'bar' || !trace.text) return;
    const size = trace.textfont?.size || gd._fullLayout.font.size;
    if (trace.orientation !== 'h' && trace.textangle === undefined) update.traces.push([{ textangle: -90 }, i]);
    else if (size > 11) update.traces.push([{ 'textfont.size': Math.max(11, Math.round(size * 0.85)) }, i]);
  });
}

/** Heatmap cells that each state their value (the deck's learning-rate × warm-up grid): on a phone a label wider than
 *  its cell runs into the next one. The labels shrink to fit the cells, not below 10 px. */
function heatmapCells(gd, boxes, update) {
  const traces = gd._fullData.filter((trace) => trace.type === 'heatmap' && trace.texttemplate);
  const labels = [...gd.querySelectorAll('.heatmap-label text')];
  if (!traces.length || !labels.length) return;
  const widest = Math.max(...labels.map((el) => el.getBoundingClientRect().width)) / scaleOf(gd);
  for (const trace of traces) {
    const cell = gd._fullLayout[axisKey(trace.xaxis)]._length / (trace.z[0]?.length || 1);
    const size = trace.textfont?.size || gd._fullLayout.font.size;
    if (widest > cell - 8 && size > 10) {   // 4 px clear on each side
      update.traces.push([{ 'textfont.size': Math.max(10, Math.floor(size * (cell - 8) / widest)) }, trace.index]);
    }
  }
}

// ---- 4. room for text cut off at the edge --------------------------------------------------------------
function roomForText(gd, boxes, update) {
  const svg = gd.querySelector('.main-svg').getBoundingClientRect(), scale = scaleOf(gd), full = gd._fullLayout;
  const size = full._size, plotTop = svg.top + size.t * scale, plotBottom = svg.top + (size.t + size.h) * scale;
  const labels = boxes.filter((b) => b.kind === 'bar label');
  const right = Math.max(0, ...labels.map((b) => b.right - svg.right + 2));
  const legend = boxes.find((b) => b.kind === 'legend');
  const ceiling = Math.max(plotTop, legend && legend.bottom <= plotTop + 4 ? legend.bottom : plotTop);   // the legend row sits on the plot
  const top = Math.max(0, ...labels.map((b) => ceiling - b.top + 2));
  const bottom = Math.max(0, ...labels.map((b) => b.bottom - plotBottom + 2));
  // bar labels past the plot's edge (under the legend, out of the chart): widen the value axis that much
  const widen = (key, low, high, length) => {
    const range = full[key].range, span = range[1] - range[0];
    update.layout[`${key}.range`] = [range[0] - span * (low / scale / length) * 1.5, range[1] + span * (high / scale / length) * 1.5];
  };
  if (right > 0) widen('xaxis', 0, right, full.xaxis._length);
  if ((top > 0 || bottom > 0) && full.yaxis?.type === 'linear' && labels.length) widen('yaxis', bottom, top, full.yaxis._length);
  const below = Math.max(0, ...boxes.filter((b) => b.kind === 'axis title' && b.axis?.startsWith('x')).map((b) => b.bottom - svg.bottom + 2));
  if (below > 0) update.layout['margin.b'] = full.margin.b + Math.ceil(below / scale);
  for (const b of boxes.filter((t) => t.kind === 'axis title' && full[axisKey(t.axis)])) {
    // a title longer than its axis (long category labels squeeze the plot; a phone) runs out of it: in lines
    const key = axisKey(b.axis), title = gd.layout[key]?.title, along = b.axis.startsWith('x') ? b.right - b.left : b.h;
    const tooWide = along > full[key]._length * scale + 2 || Math.max(b.right - svg.right, svg.left - b.left, svg.top - b.top) > 1
      || boxes.some((o) => o !== b && (o.kind === 'axis title' || o.kind === 'title') && meet(ink(o), ink(b)));
    if (!tooWide || !title?.text || title.text.includes('<br>')) continue;
    const size = full[key].title.font.size;
    update.layout[`${key}.title.text`] = wrapText(title.text, Math.max(80, full[key]._length - 12), size).join('<br>');
  }
}

/** A legend under the plot (legendBelow) that a wrapped x title or the ticks reach: move it down below them. */
function legendBelowText(gd, boxes, update) {
  const legend = boxes.find((b) => b.kind === 'legend'), own = gd.layout.legend;
  if (!legend || !own || !(own.y < 0)) return;
  const above = boxes.filter((b) => b.kind !== 'legend' && b.kind !== 'title' && b.top < legend.top + 2 && meet(ink(b), ink(legend)));
  if (!above.length) return;
  const overlap = Math.max(...above.map((b) => b.bottom - legend.top)) + 4;
  const scale = scaleOf(gd);
  update.layout['legend.y'] = own.y - overlap / scale / gd._fullLayout._size.h;
}

// ---- 5. notes moved ---------------------------------------------------------------------------------
function collides(box, points, others) {
  return points.some((p) => inside(p, box)) || others.some((o) => meet(box, ink(o)));
}

/** Shifts to try, nearest first: the note's own place, the other side of its line, along the line, up and down. */
function candidates(note, plot) {
  const h = note.bottom - note.top, width = note.right - note.left;
  const xs = [0, plot.left + 4 - note.left, plot.right - 4 - note.right, (plot.left + plot.right - width) / 2 - note.left];
  const ys = [0, -(h + 4), h + 4];
  for (let k = 1; k * h * 0.6 < plot.bottom - plot.top; k += 1) ys.push(-k * h * 0.6, k * h * 0.6);
  const out = [];
  for (const dy of ys) for (const dx of xs) out.push({ dx, dy, cost: Math.abs(dy) + Math.abs(dx) * 0.3 });
  return out.sort((a, b) => a.cost - b.cost);
}

function moveNotes(gd, boxes, update) {
  const svg = gd.querySelector('.main-svg').getBoundingClientRect(), scale = scaleOf(gd), size = gd._fullLayout._size;
  const plot = { left: svg.left + size.l * scale, right: svg.left + (size.l + size.w) * scale, top: svg.top + size.t * scale,
    bottom: svg.top + (size.t + size.h) * scale };
  const points = linePoints(gd);
  const fixed = boxes.filter((b) => b.kind !== 'note');
  const notes = boxes.filter((b) => b.kind === 'note');
  const placed = new Map();   // note -> its box where it now stands (moved or not)
  for (const note of notes) {
    const others = [...fixed, ...notes.filter((n) => n !== note).map((n) => placed.get(n) || n)];
    if (!collides(ink(note), points, others)) { placed.set(note, note); continue; }
    const within = (b) => b.left >= svg.left && b.right <= svg.right && b.top >= plot.top - note.h && b.bottom <= plot.bottom + note.h;
    const spot = candidates(note, plot).find(({ dx, dy }) => {
      const moved = ink(note, dx, dy);
      return within(moved) && !collides(moved, points, others);
    });
    const layoutNote = gd.layout.annotations[note.index];
    if (spot) {
      update.layout[`annotations[${note.index}].xshift`] = (layoutNote.xshift || 0) + spot.dx / scale;
      update.layout[`annotations[${note.index}].yshift`] = (layoutNote.yshift || 0) - spot.dy / scale;
      placed.set(note, { ...note, left: note.left + spot.dx, right: note.right + spot.dx, top: note.top + spot.dy, bottom: note.bottom + spot.dy });
    } else if (svg.width < NARROW) {
      update.layout[`annotations[${note.index}].visible`] = false;
    }
  }
}

// ---- symbols typeset ---------------------------------------------------------------------------------
/** Every label of the figure with x_l written xₗ and d_model as d<sub>model</sub> (format.js typeset), and every
 *  tooltip's number written by fmt; the figure itself changes, so the exports (PNG, SVG, offline HTML) say the same
 *  as the screen. */
export function typesetFigure(figure) {
  const layout = figure.layout;
  const title = (holder) => {
    if (holder?.title?.text) holder.title.text = typeset(holder.title.text);
    else if (typeof holder?.title === 'string') holder.title = typeset(holder.title);
  };
  title(layout);
  Object.keys(layout).filter((key) => /^[xy]axis\d*$/.test(key)).forEach((key) => title(layout[key]));
  (layout.annotations || []).forEach((note) => { note.text = typeset(note.text); });
  (figure.data || []).forEach((trace) => {
    if (typeof trace.name === 'string') trace.name = typeset(trace.name);
    if (typeof trace.hovertemplate === 'string') trace.hovertemplate = typeset(trace.hovertemplate);
    hoverNumbers(trace);
    title(trace.colorbar);
  });
  return figure;
}

// ---- tooltips in the one number style ----------------------------------------------------------------
const HOVER_NUMBER = /%\{(x|y|z|customdata)(?::[^}]*?\.(\d+)[gfe])?[^}]*\}/g;

/** A tooltip's one formatted number (Plotly's d3 "%{y:.4g}" writes 4.9e+2 and 1.23e-5) as fmt writes it: the
 *  values are formatted here into hovertext and the template shows that. */
function hoverNumbers(trace) {
  if (typeof trace.hovertemplate !== 'string' || trace.hovertext) return;
  const formatted = [...trace.hovertemplate.matchAll(HOVER_NUMBER)].filter((m) => m[2]);
  if (formatted.length !== 1) return;
  const [whole, field, digits] = formatted[0];
  const values = trace[field];
  if (!Array.isArray(values)) return;
  const write = (v) => (Array.isArray(v) ? v.map(write) : typeof v === 'number' ? fmt(v, { digits: Number(digits) }) : String(v ?? '—'));
  trace.hovertext = values.map(write);
  trace.hovertemplate = trace.hovertemplate.replace(whole, '%{hovertext}');
}

// ---- equations of the deck (HTML, not Plotly) ----------------------------------------------------------
/** An equation line never breaks mid-expression: shrink its type (down to 60%) until every line fits its box. */
export function fitEquations(root = document) {
  root.querySelectorAll('.equation').forEach((eq) => {
    eq.style.fontSize = '';
    const lines = eq.textContent.split('\n').filter((l) => l.trim()).length;
    const start = parseFloat(getComputedStyle(eq).fontSize);
    const wrapped = () => {
      const range = document.createRange();
      range.selectNodeContents(eq);
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size > lines;
    };
    for (let size = start; size > start * 0.6 && (wrapped() || eq.scrollWidth > eq.clientWidth + 1); size -= 1) {
      eq.style.fontSize = `${size - 1}px`;
    }
  });
}

/** Measure the drawn chart and move what collides; a few rounds, each one relayout. */
export async function legible(gd) {
  if (!gd?._fullLayout || !gd.querySelector('.main-svg') || !shown(gd)) return;
  const layoutSteps = [panelsApart, thinTicks, everyCategory, barLabels, heatmapCells, roomForText, legendBelowText];
  const notes = [moveNotes];
  let settled = null;   // the steps of a round that changed nothing: the same steps again would change nothing either
  for (const steps of [layoutSteps, layoutSteps, layoutSteps, notes, notes]) {
    if (steps === settled) continue;
    const boxes = texts(gd);   // the steps only write `update`: one measurement serves them all
    const update = { layout: {}, traces: [] };
    steps.forEach((step) => step(gd, boxes, update));
    if (!Object.keys(update.layout).length && !update.traces.length) {
      settled = steps;
      continue;
    }
    settled = null;
    for (const [change, index] of update.traces) await window.Plotly.restyle(gd, change, [index]);
    if (Object.keys(update.layout).length) await window.Plotly.relayout(gd, update.layout);
  }
}

/** A PNG or SVG export made legible the same way: drawn off screen at the export's size, fixed, then saved. */
export async function legibleImage(figure, { width, height, scale = 1 }, format) {
  const box = document.createElement('div');
  box.style.cssText = `position:fixed;left:-${width + 100}px;top:0;width:${width}px;height:${height}px;`;
  document.body.append(box);
  try {
    await window.Plotly.newPlot(box, figure.data, { ...figure.layout, width, height }, { staticPlot: true });
    await legible(box);
    return await window.Plotly.toImage(box, { format, width, height, scale });
  } finally {
    window.Plotly.purge(box);
    box.remove();
  }
}
