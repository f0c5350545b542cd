// Legibility detector, evaluated in the page by tests/browser/test_legibility.py: what a student in the back row
// could not read on a Plotly chart. `(root) => problems`, root an element (a slide, or the document body); each
// problem is a short sentence naming the chart and the texts involved. Four faults:
//   overlap  two text boxes of a chart cover each other or touch (they must keep a gap of a fifth of their height,
//            so ticks "10⁻¹²10⁻⁹" or bar labels "−0.8165−0.8165" running together count); the legend's area is a box;
//   on-line  a note, axis title or bar label covers a plotted line or marker of a trace (the data it explains);
//   clipped  a text box reaches out of its chart's SVG, out of the root's box (a slide, the page's width);
//   wrap     an equation line (.equation) broken in the middle of the expression;
//   typeset  a raw underscore in a chart text (x_l, not xₗ); number: a computer exponent (4.9e+2) in a chart or caption.
// A drawn picture (svg.slide-picture, a slide's diagram) is held to the same: no text overlapping another or a drawn
// line, none clipped by the picture or the slide (a box's label stays inside its box), and, on the stage, small: text
// under 24 px of the 1280x720 stage.
// On a slide (root a slide on the 1280x720 stage, measured in stage px, so any window size gives the same verdict), the
// back row's rules as well:
//   small      a title, text, caption, legend, axis title, note, bar label or table cell under 24 px, a tick label
//              under 18 px (the footer, the settings line and the speaker notes are fine print and exempt);
//   clipped    a slide's text column or caption box that hides part of its text;
//   axis       a linear axis that neither reaches 0 nor spans half of its largest value (×1.3 drawn as a cliff), a
//              log axis spanning less than a decade;
//   reference  a reference line (a line shape) not thin (≤ 2 px), not grey, or drawn over the data.
// Boxes are screen rectangles (getBoundingClientRect), so a CSS scale (the deck's stage) changes nothing but units:
// every tolerance is a fraction of the text's own height.
(root) => {
  const problems = [];
  const cut = (text) => String(text).replace(/\s+/g, ' ').trim().slice(0, 40);
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0.5 && r.height > 0.5 && getComputedStyle(el).visibility !== 'hidden' && getComputedStyle(el).display !== 'none';
  };
  const box = (el, kind, label) => {
    const r = el.getBoundingClientRect();
    return { kind, label: cut(label ?? el.textContent), left: r.left, right: r.right, top: r.top, bottom: r.bottom, h: r.height, el };
  };
  // Text boxes include the font's ascent and descent: two lines set one under the other touch without any ink
  // touching. Shrink every box vertically by 12% of its height (and by 1 px) before comparing.
  // A text turned upright (a y title, an upright bar label) has its ascent and descent left and right instead.
  const ink = (b, grow = 0) => {
    if (b.kind === 'legend') return { left: b.left, right: b.right, top: b.top, bottom: b.bottom };   // opaque to its edge
    const width = b.right - b.left, upright = b.h > width * 1.5 && !b.kind.endsWith('tick') && turned(b.el);
    const line = upright ? width : b.h, d = line * 0.12 + 1;
    return upright ? { left: b.left + d, right: b.right - d, top: b.top - grow, bottom: b.bottom + grow }
      : { left: b.left - grow, right: b.right + grow, top: b.top + d, bottom: b.bottom - d };
  };
  /** Turned a quarter (a y title, an upright bar label), as its transform says: a short label ("1") is taller than
   *  it is wide without being turned. */
  function turned(el) {
    const m = el?.getCTM?.();
    return !m || Math.abs(m.b) > Math.abs(m.a);
  }
  const lineOf = (b) => (b.kind !== 'legend' && !turned(b.el) ? b.h : Math.min(b.h, b.right - b.left));
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const inside = (p, r) => p.x > r.left && p.x < r.right && p.y > r.top && p.y < r.bottom;

  function textBoxes(gd) {
    const out = [];
    const add = (selector, kind) => gd.querySelectorAll(selector).forEach((el) => {
      if (kind === 'axis title' && el.closest('.colorbar')) return;   // a colour bar's title is the colour bar's
      if (shown(el) && (el.textContent.trim() || kind === 'legend')) out.push(box(el, kind, kind === 'legend' ? 'legend' : undefined));
    });
    add('.g-gtitle text', 'title');
    add('.infolayer text[class$="title"]:not(.gtitle):not(.cbtitle)', 'axis title');
    add('.xaxislayer-above [class$="tick"] > text, .xaxislayer-below [class$="tick"] > text', 'x tick');
    add('.yaxislayer-above [class$="tick"] > text, .yaxislayer-below [class$="tick"] > text', 'y tick');
    add('.annotation-text-g text', 'note');
    add('.bartext, .textpoint text, .heatmap-label text', 'bar label');
    add('.colorbar text', 'colour bar');
    add('.legend rect.bg', 'legend');   // the legend's whole (opaque) area: it hides what lies under it
    return out;
  }

  /** Screen points along every drawn line and every marker of the chart's traces, 3 px apart (in SVG units). */
  function linePoints(gd) {
    const points = [];
    gd.querySelectorAll('.scatterlayer .trace path.js-line, .scatterlayer .trace .points path.point').forEach((path) => {
      if (!shown(path)) return;
      const m = path.getScreenCTM();
      if (!m) return;
      const at = (p) => ({ x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f });
      if (path.classList.contains('point')) {
        const r = path.getBoundingClientRect();
        points.push({ x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 });
        return;
      }
      const length = path.getTotalLength();
      for (let s = 0; s <= length; s += 3) points.push(at(path.getPointAtLength(s)));
    });
    return points;
  }

  const TEXT_PX = 24, TICK_PX = 18;   // on the 1280x720 stage
  /** A text's size in CSS px: a transform (the stage's scale) leaves the computed size be; a scale Plotly puts on an
   *  SVG text to squeeze it into its bar counts. */
  const px = (el) => {
    const size = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.ownerSVGElement;
    if (!svg) return size;
    const m = svg.getScreenCTM().inverse().multiply(el.getScreenCTM());
    return size * Math.hypot(m.a, m.b);
  };

  /** Every text of a chart at its size: tick labels (a colour bar's too) 18 px, everything else 24 px. */
  function chartSizes(gd, name) {
    const kinds = [
      ['.g-gtitle text', 'title', TEXT_PX], ['.infolayer text[class$="title"]:not(.gtitle):not(.cbtitle)', 'axis title', TEXT_PX],
      ['.legendtext', 'legend', TEXT_PX], ['.annotation-text-g text', 'note', TEXT_PX],
      ['.bartext, .textpoint text', 'bar label', TEXT_PX], ['.table .cell-text', 'table cell', TEXT_PX],
      ['[class$="tick"] > text', 'tick label', TICK_PX], ['.colorbar text', 'colour bar', TICK_PX],
    ];
    for (const [selector, kind, least] of kinds) {
      gd.querySelectorAll(selector).forEach((el) => {
        if (!shown(el) || !el.textContent.trim()) return;
        if (kind === 'axis title' && el.closest('.colorbar')) return;
        if (px(el) < least - 0.5) problems.push(`${name}: small: ${kind} "${cut(el.textContent)}" is ${Math.round(px(el))} px (${least} px at least)`);
      });
    }
  }

  /** A linear axis reaches 0 or spans half of its largest value; a log axis spans a decade (in the drawn ranges). */
  function checkAxes(gd, name) {
    const full = gd._fullLayout;
    for (const key of Object.keys(full).filter((k) => /^[xy]axis\d*$/.test(k))) {
      const axis = full[key];
      if (!axis.visible || !axis.showticklabels || !axis._length || !['linear', 'log'].includes(axis.type)) continue;
      const low = Math.min(...axis.range), high = Math.max(...axis.range), span = high - low;
      if (axis.type === 'log' && span < 0.999) {
        problems.push(`${name}: axis: log ${key} spans ${span.toFixed(2)} of a decade (a decade at least)`);
      }
      if (axis.type === 'linear' && !(low <= 0 && high >= 0) && span < 0.5 * Math.max(Math.abs(low), Math.abs(high))) {
        problems.push(`${name}: axis: linear ${key} from ${low.toPrecision(3)} to ${high.toPrecision(3)} (start at 0, span half the largest value, or go log)`);
      }
    }
  }

  /** A reference line: thin, grey, under the data. */
  function checkReferences(gd, name) {
    const grey = (color) => {
      const c = String(color).match(/^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i)?.slice(1).map((h) => parseInt(h, 16))
        || String(color).match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)/)?.slice(1).map(Number);
      if (!c) return false;
      const mean = (c[0] + c[1] + c[2]) / 3;
      return Math.max(...c) - Math.min(...c) <= 24 && mean >= 64 && mean <= 210;
    };
    (gd._fullLayout.shapes || []).forEach((shape) => {
      if (shape.type !== 'line' || shape.visible === false) return;
      const faults = [shape.line.width > 2 && `${shape.line.width} px wide`, !grey(shape.line.color) && `coloured ${shape.line.color}`,
        shape.layer !== 'below' && 'drawn over the data'].filter(Boolean);
      if (faults.length) problems.push(`${name}: reference: a reference line is ${faults.join(', ')} (thin, grey, under the data)`);
    });
  }

  /** The slide's own texts (not its charts and pictures, checked above): 24 px, and none cut off by its box. */
  function checkSlideText() {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || seen.has(el)) continue;
      seen.add(el);
      if (el.closest('.slide-footer, .notes, .settings, .js-plotly-plot, svg, [hidden]') || !shown(el)) continue;
      if (px(el) < TEXT_PX - 0.5) problems.push(`small: "${cut(el.textContent)}" is ${Math.round(px(el))} px (${TEXT_PX} px at least)`);
    }
    root.querySelectorAll('.slide-text, figcaption, .chart-box').forEach((box) => {
      if (shown(box) && box.scrollHeight > box.clientHeight + 2) {
        problems.push(`clipped: ${box.className || box.tagName.toLowerCase()} hides ${box.scrollHeight - box.clientHeight} px of its text`);
      }
    });
  }

  function checkChart(gd, name, limit) {
    const texts = textBoxes(gd);
    const svg = gd.querySelector('.main-svg').getBoundingClientRect();
    for (let i = 0; i < texts.length; i += 1) {
      for (let j = i + 1; j < texts.length; j += 1) {
        const a = texts[i], b = texts[j];
        if (a.kind === 'legend' && b.kind === 'legend') continue;   // Plotly lays out its legend's entries itself
        // two texts side by side need a gap of a fifth of their height (else "−0.8165−0.8165" reads as one number)
        const grow = Math.min(lineOf(a), lineOf(b)) * 0.1;
        if (meet(ink(a, grow), ink(b, grow))) problems.push(`${name}: overlap: ${a.kind} "${a.label}" / ${b.kind} "${b.label}"`);
      }
    }
    const points = linePoints(gd);
    for (const t of texts.filter((b) => ['note', 'axis title', 'bar label', 'legend', 'title'].includes(b.kind))) {
      const r = ink(t);
      const hits = points.filter((p) => inside(p, r)).length;
      if (hits) problems.push(`${name}: on-line: ${t.kind} "${t.label}" covers ${hits} point(s) of a plotted line`);
    }
    for (const t of texts) {
      const r = ink(t);
      const out = Math.max(svg.left - r.left, r.right - svg.right, svg.top - r.top, r.bottom - svg.bottom,
        limit.left - r.left, r.right - limit.right, limit.top - r.top, r.bottom - limit.bottom);
      if (out > 1) problems.push(`${name}: clipped: ${t.kind} "${t.label}" reaches ${Math.round(out)} px out of its chart`);
    }
  }

  /** Symbols typeset (xₗ, not x_l) in every chart text, and numbers in one style (4.05×10⁻⁵, not 4.05e-5) in every
   *  chart text and caption. */
  function checkWriting() {
    const chartTexts = [...root.querySelectorAll('.js-plotly-plot .main-svg text, .js-plotly-plot .legendtext')];
    const captions = [...root.querySelectorAll('.claim, .caption, figcaption, .js-plotly-plot + p, table')];
    const raw = /(^|[^\w`])[A-Za-zα-ω∂]_[A-Za-z0-9{]/;
    const exponent = /\d(\.\d+)?e[+\-\u2212]?\d/;
    for (const el of chartTexts) {
      if (raw.test(el.textContent)) problems.push(`typeset: raw underscore in chart text "${cut(el.textContent)}"`);
    }
    for (const el of [...chartTexts, ...captions]) {
      if (shown(el) && exponent.test(el.textContent)) problems.push(`number: computer exponent in "${cut(el.textContent.match(/\S*\d(\.\d+)?e[+\-\u2212]?\d\S*/)[0])}"`);
    }
  }

  function checkEquations() {
    root.querySelectorAll('.equation').forEach((eq) => {
      if (!shown(eq)) return;
      const lines = eq.textContent.split('\n').filter((l) => l.trim()).length;
      const range = document.createRange();
      range.selectNodeContents(eq);
      const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
      if (tops.size > lines) problems.push(`wrap: equation "${cut(eq.textContent)}" breaks over ${tops.size} lines (it has ${lines})`);
      if (eq.scrollWidth > eq.clientWidth + 1) problems.push(`clipped: equation "${cut(eq.textContent)}" is wider than its box`);
    });
  }

  /** Every shown slide picture: its texts against each other, its lines, its boxes, its edges and the stage's rule. */
  function checkPictures(limit) {
    root.querySelectorAll('svg.slide-picture').forEach((svg, k) => {
      if (!shown(svg)) return;
      const name = `picture ${svg.closest('.slide')?.id || k + 1}`;
      const area = svg.getBoundingClientRect();
      const perUnit = area.width / svg.viewBox.baseVal.width;   // screen px per picture unit
      const stage = root === document.body ? 0 : root.getBoundingClientRect().width / 1280;   // screen px per stage px
      const texts = [...svg.querySelectorAll('text')].filter(shown).map((el) => box(el, 'picture text'));
      const lines = [...svg.querySelectorAll('line')].filter(shown).map((el) => el.getBoundingClientRect());
      texts.forEach((t, i) => {
        const r = ink(t);
        const size = parseFloat(getComputedStyle(t.el).fontSize) * perUnit;
        if (stage && size / stage < 23.5) problems.push(`${name}: small: "${t.label}" is ${Math.round(size / stage)} px on the stage (24 px at least)`);
        const out = Math.max(area.left - r.left, r.right - area.right, area.top - r.top, r.bottom - area.bottom,
          limit.left - r.left, r.right - limit.right, limit.top - r.top, r.bottom - limit.bottom);
        if (out > 1) problems.push(`${name}: clipped: "${t.label}" reaches ${Math.round(out)} px out of the picture`);
        const frame = t.el.parentNode.querySelector(':scope > rect')?.getBoundingClientRect();
        if (frame && (r.left < frame.left || r.right > frame.right || r.top < frame.top || r.bottom > frame.bottom)) {
          problems.push(`${name}: clipped: "${t.label}" reaches out of its box`);
        }
        for (const other of texts.slice(i + 1)) {
          if (meet(ink(t, lineOf(t) * 0.1), ink(other, lineOf(other) * 0.1))) problems.push(`${name}: overlap: "${t.label}" / "${other.label}"`);
        }
        if (lines.some((l) => meet(r, { left: l.left, right: l.right, top: l.top, bottom: l.bottom }))) {
          problems.push(`${name}: on-line: "${t.label}" covers a drawn line`);
        }
      });
    });
  }

  const rootBox = root.getBoundingClientRect();
  // A page scrolls down, never sideways: its limit is the window's width; a slide's is its own box.
  const limit = root === document.body
    ? { left: 0, right: document.documentElement.clientWidth, top: -Infinity, bottom: Infinity }
    : { left: rootBox.left, right: rootBox.right, top: rootBox.top, bottom: rootBox.bottom };
  const onStage = root !== document.body && root.classList.contains('slide');
  root.querySelectorAll('.js-plotly-plot').forEach((gd, k) => {
    if (!gd.querySelector('.main-svg') || !shown(gd)) return;
    const name = gd.dataset.chart || gd.id || `chart ${k + 1}`;
    checkChart(gd, name, limit);
    if (onStage) {
      chartSizes(gd, name);
      checkAxes(gd, name);
      checkReferences(gd, name);
    }
  });
  if (onStage) checkSlideText();
  checkPictures(limit);
  checkEquations();
  checkWriting();
  return [...new Set(problems)];
}
