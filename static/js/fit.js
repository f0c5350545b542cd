// Fitting a drawn chart to the screen it is on (charts.js calls forScreen on every draw and resize): Plotly never
// wraps a title or a note, so on a phone they would run off the chart; and on a touch screen a chart must not
// swallow the swipe that scrolls the page. The figure itself is left as it is, so exports stay slide-sized.

let measureContext = null;
let measureFont = '';
let family = 'sans-serif';  // the chart's font, set by forScreen before it measures

/** Words (or single CJK characters, which may break anywhere) of a label, for wrapping. */
function wrapUnits(text) {
  return String(text).match(/[\u2e80-\u9fff\uff00-\uffef][，。；：、）]?|[^\s\u2e80-\u9fff\uff00-\uffef]+|\s+/g) || [];
}

/** Rendered width of a label (its HTML tags dropped) in the chart font, or the font `font` names: a canvas measures
 *  it; where there is none, 0.6 em a character (app/figures/style.py's CHAR_EM, the server's estimate). */
export function measuredWidth(text, size, bold = false, font = family) {
  measureContext ??= document.createElement('canvas').getContext('2d');
  const plain = String(text).replace(/<[^>]+>/g, '');
  if (!measureContext) return plain.length * size * 0.6;
  const wanted = `${bold ? 'bold ' : ''}${size}px ${font}`;
  if (wanted !== measureFont) {  // setting a canvas font parses it: only when it changes
    measureContext.font = wanted;
    measureFont = wanted;
  }
  return measureContext.measureText(plain).width;
}

/** Lines of at most `width` pixels: Plotly never wraps a title or a note, and on a phone they run off the chart. */
export function wrapText(text, width, size, bold = false) {
  const lines = [''];
  for (const unit of wrapUnits(text)) {
    const line = lines[lines.length - 1];
    if (line.trim() && !/^\s+$/.test(unit) && measuredWidth(line + unit, size, bold) > width) lines.push(unit);
    else lines[lines.length - 1] = line + unit;
  }
  return lines.map((line) => line.trim()).filter(Boolean);
}

/** An annotation's text in lines of at most `width` pixels ({text, lines}); bold column titles stay bold. */
function wrapNote(note, width, fallbackSize) {
  const bold = /^<b>.*<\/b>$/.test(note.text);
  const plain = bold ? note.text.slice(3, -4) : note.text;
  const lines = wrapText(plain, width, note.font?.size || fallbackSize, bold);
  const text = lines.join('<br>');
  return { text: bold ? `<b>${text}</b>` : text, lines: lines.length };
}

/** True on phones and tablets (no hover, a finger for a pointer). */
export function touchScreen() {
  return window.matchMedia?.('(hover: none) and (pointer: coarse)').matches ?? false;
}

const NARROW_CHART = 600;  // px: below this, notes inside the plot are wrapped too
// A chart whose texts leave its plots less than MIN_PLOT_HEIGHT a row (a slide-theme chart embedded at 640×400: at full
// slide size the panels of /embed/compare were 25 px tall) scales its texts and margins down with the frame, against
// FULL_FRAME, never below SMALLEST_FONT.
const MIN_PLOT_HEIGHT = 160;
const FULL_FRAME = { width: 960, height: 600 };
const SMALLEST_FONT = 14;
const SMALLEST_TITLE = 11;  // px: a narrow column's short title is made smaller to fit, not below this

const scaled = (size, factor) => (size ? Math.round(size * factor) : size);

/** Texts and margins times `factor`: the figure's fonts, title, notes, legend and every axis. */
function scaleTexts(shown, factor) {
  const withFont = (part) => (part?.font?.size ? { ...part, font: { ...part.font, size: scaled(part.font.size, factor) } } : part);
  shown.font = withFont({ font: shown.font }).font;
  shown.title = withFont(shown.title);
  shown.legend = withFont(shown.legend);
  shown.annotations = (shown.annotations || []).map(withFont);
  for (const key of ['t', 'b', 'l']) shown.margin[key] = scaled(shown.margin[key], factor);
  for (const name of Object.keys(shown).filter((key) => /^[xy]axis\d*$/.test(key))) {
    const axis = shown[name];
    shown[name] = { ...axis, tickfont: withFont({ font: axis.tickfont }).font, title: withFont(axis.title) };
  }
}

/** The factor a large-text chart (the slide theme) shrinks by in a small frame: 1 in a full one. */
function frameFactor(font, width, height) {
  const room = Math.min(1, width / FULL_FRAME.width, height / FULL_FRAME.height);
  return Math.min(1, Math.max(room, SMALLEST_FONT / font));
}

/** The layout as this screen shows it (the figure itself stays as exported): title, column titles and notes
 *  wrapped to the chart's size; on touch screens no drag-to-zoom, because Plotly swallows a swipe that starts on the
 *  plot and the page could not be scrolled past a chart that fills the screen. */
export function forScreen(figure, width, height = 480) {
  const shown = { ...figure.layout, margin: { ...figure.layout.margin } };
  if (touchScreen()) shown.dragmode = false;
  const rowHeight = (height - (shown.margin.t || 60) - (shown.margin.b || 60)) / (shown.grid?.rows || 1);
  const factor = rowHeight < MIN_PLOT_HEIGHT ? frameFactor(shown.font?.size || 14, width, height) : 1;
  if (factor < 1) scaleTexts(shown, factor);
  const font = shown.font?.size || 14;
  family = shown.font?.family || 'sans-serif';
  const title = shown.title;
  if (title?.text && !title.text.includes('<br>')) {
    const size = title.font?.size || 17;
    const lines = wrapText(title.text, width - 24, size);
    if (lines.length > 1) {  // Plotly sets a multi-line title ~0.7 em higher than one line: pad it back down
      shown.title = { ...title, text: lines.join('<br>'), pad: { ...title.pad, t: (title.pad?.t || 0) + Math.round(size * 0.7) } };
      shown.margin.t = (shown.margin.t || 60) + (lines.length - 1) * Math.round(size * 1.3);
    }
  }
  const plotWidth = width - (shown.margin.l || 60) - (shown.margin.r || 20);
  const columns = (shown.annotations || []).filter((note) => note.name === 'column-title').length;
  const shortTitles = columnsTooNarrow(shown, plotWidth / columns - 8, font) ? shown.meta?.column_short : null;
  let extraTitleLines = 0, column = 0;
  shown.annotations = (shown.annotations || []).map((note) => {
    if (note.name === 'column-title' && shortTitles) {  // the short form, smaller if even it is wider than its column
      const text = shortTitles[column++], size = note.font?.size || font;
      const fitted = Math.max(SMALLEST_TITLE, Math.min(size, Math.floor(size * (plotWidth / columns - 8) / measuredWidth(text, size, true))));
      note = { ...note, text: `<b>${text}</b>`, font: { ...note.font, size: fitted } };
    }
    if (!note.text || note.text.includes('<br>')) return note;
    const limit = note.name === 'column-title' ? plotWidth / columns - 8 : width < NARROW_CHART ? Math.max(120, plotWidth * 0.5) : Infinity;
    if (measuredWidth(note.text, note.font?.size || font) <= limit) return note;
    const { text, lines } = wrapNote(note, limit, font);
    if (note.name === 'column-title') extraTitleLines = Math.max(extraTitleLines, lines - 1);
    return { ...note, text };
  });
  shown.margin.t += extraTitleLines * Math.round(font * 1.4);
  shareXTitle(shown, plotWidth, font);
  wrapAxisTitles(shown, plotWidth, height - shown.margin.t - (shown.margin.b || 60), font);
  return shown;
}

/** True when a column title holds a word wider than its column: wrapping cannot help, its short form must. */
function columnsTooNarrow(shown, limit, font) {
  return (shown.annotations || []).some((note) => note.name === 'column-title' && wrapUnits(note.text.replace(/<[^>]+>/g, ''))
    .some((unit) => measuredWidth(unit, note.font?.size || font, true) > limit));
}

/** Side-by-side panels (a grid's columns, or x axes on domains of their own) whose bottom-row x titles (all the
 *  same) would wrap: one title under the whole row instead. */
function shareXTitle(shown, plotWidth, font) {
  const names = Object.keys(shown).filter((key) => /^xaxis\d*$/.test(key) && shown[key]?.title?.text);
  const columns = shown.grid?.columns || new Set(names.map((name) => String(shown[name].domain || [0, 1]))).size;
  const texts = new Set(names.map((name) => shown[name].title.text));
  if (columns < 2 || texts.size !== 1) return;
  const [text] = texts;
  const size = shown[names[0]].title.font?.size || font;
  if (measuredWidth(text, size) <= plotWidth / columns - 12) return;
  names.forEach((name) => { shown[name] = { ...shown[name], title: { ...shown[name].title, text: '' } }; });
  // wrapped inside 80 % of the plot: Plotly's automargin may still widen the left margin for large tick labels
  const lines = wrapText(text, plotWidth * 0.8, size);
  shown.annotations = [...(shown.annotations || []), { name: 'shared-x-title', text: lines.join('<br>'), xref: 'paper',
    x: 0.5, xanchor: 'center', yref: 'paper', y: 0, yanchor: 'top', yshift: -Math.round(size * 2), showarrow: false,
    font: { size } }];
  shown.margin.b = Math.max(shown.margin.b || 60, Math.round(size * (3.6 + 1.3 * (lines.length - 1))));
}

/** Axis titles longer than their axis (side-by-side panels on a phone) in lines; Plotly's automargin makes room. */
function wrapAxisTitles(shown, plotWidth, plotHeight, font) {
  const columns = shown.grid?.columns || 1;
  const rows = shown.grid?.rows || 1;
  for (const name of Object.keys(shown).filter((key) => /^[xy]axis\d*$/.test(key))) {
    const title = shown[name]?.title;
    if (!title?.text || title.text.includes('<br>')) continue;
    const limit = name.startsWith('x') ? plotWidth / columns - 12 : plotHeight / rows - 12;
    const size = title.font?.size || font;
    if (limit <= 40 || measuredWidth(title.text, size) <= limit) continue;
    shown[name] = { ...shown[name], title: { ...title, text: wrapText(title.text, limit, size).join('<br>') } };
  }
}
