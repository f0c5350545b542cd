// A slide's table (the summaries: a Plotly table figure built on the server) drawn as an HTML table. Plotly sizes a
// table's rows from the text it measures on screen, so on the deck's CSS-scaled stage (1920x1080: ×1.5) its rows
// grow with the scale and the last ones scroll out of sight; an HTML table lays out in stage pixels like the slide.
// The figure is the server's: this module only moves its values into cells.
import { draw } from '../charts.js';

/** Text with the figure's <b> and <br> as nodes (never as HTML). */
function cellContent(cell, value) {
  String(value ?? '').replace(/<\/?b>/g, '').split('<br>').forEach((line, k) => {
    if (k) cell.append(document.createElement('br'));
    cell.append(line);
  });
  return cell;
}

function row(values, tag, align) {
  const tr = document.createElement('tr');
  values.forEach((value, j) => {
    const cell = cellContent(document.createElement(j === 0 || tag === 'th' ? 'th' : 'td'), value);
    if (tag === 'th') cell.scope = 'col';
    else if (j === 0) cell.scope = 'row';
    cell.style.textAlign = j === 0 ? align[0] : align[1] ?? align[0];
    tr.append(cell);
  });
  return tr;
}

export function isTable(figure) {
  return figure.data.length === 1 && figure.data[0].type === 'table';
}

/** The table figure as <table>: its title a caption, its header row, one row per line of its cells' columns. */
export function drawTable(element, figure) {
  const { header, cells, columnwidth = [] } = figure.data[0];
  const table = document.createElement('table');
  table.className = 'slide-table';
  if (figure.layout.title?.text) cellContent(table.createCaption(), figure.layout.title.text);
  const total = columnwidth.reduce((sum, w) => sum + w, 0);
  const widths = document.createElement('colgroup');
  columnwidth.forEach((w) => { const col = document.createElement('col'); col.style.width = `${(100 * w) / total}%`; widths.append(col); });
  table.append(widths);
  table.createTHead().append(row(header.values, 'th', header.align));
  const body = table.createTBody();
  cells.values[0].forEach((_, r) => body.append(row(cells.values.map((column) => column[r]), 'td', cells.align)));
  element.replaceChildren(table);
  element.dataset.drawn = String(Number(element.dataset.drawn || 0) + 1);
}

/** A slide's chart: a table as HTML, anything else through Plotly (charts.js). */
export async function drawSlideChart(element, figure) {
  if (isTable(figure)) drawTable(element, figure);
  else await draw(element, figure);
}
