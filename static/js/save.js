// What a chart can be saved as: PNG or SVG sized for a slide, a standalone HTML file that opens offline, its numbers
// as JSON or CSV, and the iframe snippet that embeds it. Drawing lives in charts.js; page.js wires the buttons.
import { lang, t } from './i18n.js';
import { embedUrl } from './staticsite.js';
import { escapeText, fitLegend } from './charts.js';
import { legibleImage } from './legible.js';

function saveBlob(blob, filename) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}

/** PNG at 1920x1080 pixels (a 1280x720 layout rendered at 1.5x, so text stays slide-sized), or SVG. */
export async function downloadImage(element, figure, format, filename) {
  const size = format === 'png' ? { width: 1280, height: 720, scale: 1.5 } : { width: 1280, height: 720 };
  const sized = fitLegend(structuredClone({ data: figure.data, layout: figure.layout }), size.width);
  const url = await legibleImage(sized, size, format);   // texts apart, as on screen (legible.js)
  const link = document.createElement('a');
  link.href = url;
  link.download = `${filename}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
}

/** A standalone HTML file: Plotly.js inlined and the data baked in, so it opens offline from a USB stick.
 *  Plotly.js comes from the address the server gave this page (its versioned URL): the browser has it cached. */
export async function downloadHtml(figure, { filename, title, caption, sourceUrl }) {
  if (window.location.protocol === 'file:') throw new Error(t('static.html_export_file'));  // no fetch from file://
  const plotly = await (await fetch(document.getElementById('plotly-script').src)).text();
  const safe = (s) => s.replace(/<\/script/gi, '<\\/script');
  const data = JSON.stringify({ data: figure.data, layout: { ...figure.layout, autosize: true, width: null, height: null } })
    .replace(/</g, '\\u003c');
  const html = `<!doctype html>
<html lang="${lang === 'zh' ? 'zh-CN' : 'en'}"><head><meta charset="utf-8"><title>${escapeText(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>html,body{margin:0;height:100%;font-family:system-ui,sans-serif}#chart{width:100vw;height:88vh}p{margin:.5rem 1rem;font-size:16px}</style>
</head><body><div id="chart"></div><p>${escapeText(caption || '')}</p><p><small>${escapeText(sourceUrl || '')}</small></p>
<script>${safe(plotly)}</script>
<script>var figure = ${data}; Plotly.newPlot('chart', figure.data, figure.layout, {responsive: true, displaylogo: false});</script>
</body></html>`;
  saveBlob(new Blob([html], { type: 'text/html' }), `${filename}.html`);
}

export function downloadJson(object, filename) {
  saveBlob(new Blob([JSON.stringify(object, null, 1)], { type: 'application/json' }), `${filename}.json`);
}

/** CSV from a list of flat objects (columns: the union of keys, in first-seen order); null stays empty. */
export function toCsv(rows) {
  const columns = [];
  rows.forEach((row) => Object.keys(row).forEach((k) => columns.includes(k) || columns.push(k)));
  const cell = (v) => (v === null || v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  return [columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c])).join(','))].join('\n') + '\n';
}

export function downloadCsv(rows, filename) {
  saveBlob(new Blob([toCsv(rows)], { type: 'text/csv' }), `${filename}.csv`);
}

/** The iframe snippet for the chart alone (the server's /embed/<chart>, a static copy's embed file) with the same
 *  state. */
export function embedSnippet(chartKey, query, title) {
  const src = embedUrl(chartKey, query);
  return `<iframe src="${escapeText(src)}" width="960" height="540" style="border:0" loading="lazy" title="${escapeText(title)}"></iframe>`;
}
