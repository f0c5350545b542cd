// /models: real pretrained Transformers on the user's sentence, from POST /api/real_trace. The stream norm per
// layer for a Post-LN model (MiniLM: pinned by its LayerNorms) beside a pre-norm one (SmolLM2: snowballing, with a
// first-token sink), the layer x token heatmap, and the gradient of the next-token loss per layer.
import { runPage, scaleParam } from '../page.js';
import { ApiError, baked, getJSON } from '../api.js';
import { apiUrl, isStaticSite } from '../staticsite.js';
import { axis, layout, line, hline, logHeatmap, heatmapLayout, themeOf, PALETTE, t, fmt } from '../charts.js';
import { pageData, has } from '../i18n.js';

const EXTRA = pageData.extra;
const COLOURS = [PALETTE.blue, PALETTE.vermillion];
const answers = new Map();   // model + text -> promise: the three charts share the requests

function noControlCharacters(text) {
  // the server refuses C0/C1 control characters except newline and tab (app/config/real.py): the same test here
  // eslint-disable-next-line no-control-regex
  return text.trim().length > 0 && text.length <= EXTRA.max_text_chars && !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text);
}

/** An error in the page's language: what the server's field and status mean, then its own detail. */
function localised(status, body) {
  const field = body?.errors?.[0]?.field;
  const key = status === 503 && field === 'model' ? 'models.error.unavailable' : field === 'text' ? 'models.error.text'
    : null;
  const message = key ? `${t(key, { limit: EXTRA.max_tokens })} (${body?.error || status})` : body?.error;
  return new ApiError(status, { ...body, error: message });
}

/** POST, retried only when the server says it is busy (a Retry-After): a model that cannot load fails at once. */
async function postReal(url, body) {
  if (isStaticSite) return baked('POST', url, body);  // a static copy of the site: the answers baked into it, or none
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(apiUrl(url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    let answer = null;
    try { answer = await response.json(); } catch { /* not JSON */ }
    if (response.ok) return answer;
    const retryAfter = Number(response.headers.get('Retry-After') || 0);
    if (!(response.status === 503 && retryAfter > 0) || attempt >= 2) throw localised(response.status, answer);
    await new Promise((resolve) => setTimeout(resolve, 1000 * retryAfter));
  }
}

function traceOf(model, text) {
  const key = JSON.stringify([model, text]);
  if (!answers.has(key)) {
    const promise = postReal('/api/real_trace', { model, text });
    answers.set(key, promise);
    promise.catch(() => answers.delete(key));
    if (answers.size > 12) answers.delete(answers.keys().next().value);
  }
  return answers.get(key);
}

function shown(state) {
  const names = [state.model];
  if (state.compare !== 'none' && state.compare !== state.model) names.push(state.compare);
  return names;
}

const shortName = (trace) => (has(`enum.model.${trace.model.name}`) ? t(`enum.model.${trace.model.name}`) : trace.model.name);
// In a legend the model's name alone (its family and norm placement are in the title, the caption and the menu): a
// phone's chart is ~350 px wide and Plotly does not wrap legend entries.
const legendName = (trace) => shortName(trace).split(/ ?[（(]/)[0];

function streamFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.models_stream.title'), x: t('models.axis.layer'),
    y: t('chart.models_stream.y'), ylog: state.y_scale === 'log' }) };
  data.forEach((trace, i) => {
    if (trace.failed) return;
    const model = legendName(trace), color = COLOURS[i % COLOURS.length];
    fig.data.push(line(theme, { name: t('models.series.rest', { model }), x: trace.layers, y: trace.stream.mean_without_first, color }));
    fig.data.push(line(theme, { name: t('models.series.first', { model }), x: trace.layers, y: trace.stream.first, color, dash: 'dot' }));
    const theory = trace.theory;
    if (theory.pinned_level) {
      fig.data.push(line(theme, { name: t('models.series.pinned', { model }), x: trace.layers.slice(1), y: theory.pinned_level,
        color: PALETTE.green, dash: 'dash', markers: false }));
      hline(theme, fig, theory.sqrt_d, t('models.mark.sqrt_d', { value: fmt(theory.sqrt_d), model }));
    }
    if (theory.growth) {
      fig.data.push(line(theme, { name: t('models.series.fit', { model, factor: fmt(theory.growth.per_block) }),  // least squares
        x: theory.growth.layers, y: theory.growth.fitted, color: PALETTE.black, dash: 'dash', markers: false }));
    }
  });
  return fig;
}

function streamCaption(data) {
  const parts = [t('caption.models_stream')];
  for (const trace of data) {
    if (trace.failed) {
      parts.push(t('models.caption.failed', { model: trace.failed, message: trace.message }));
      continue;
    }
    const model = shortName(trace), stream = trace.stream, growth = trace.theory.growth;
    if (growth) {
      const last = stream.mean_without_first.length - 1;
      parts.push(t('models.caption.pre', { model, start: fmt(stream.mean_without_first[1]), end: fmt(stream.mean_without_first[last]),
        blocks: last, over: fmt(growth.over_blocks), per: fmt(growth.per_block_endpoints), first: fmt(Math.max(...stream.first)),
        ratio: fmt(trace.summary.first_token_ratio_max) }));
    } else if (trace.post_ln) {
      // "pinned" only where the text tokens (neither special nor [UNK]) end within 1.5x of each other after the norm
      const outputs = stream.mean.slice(1), ln = trace.post_ln;
      const spread = Math.max(...ln.text_token_spread_after_norm.filter(Number.isFinite));
      const pinned = ln.pinned.length > 0 && ln.pinned.every(Boolean);
      parts.push(t(pinned ? 'models.caption.post' : 'models.caption.post_unpinned', { model, low: fmt(Math.min(...outputs)),
        high: fmt(Math.max(...outputs)), before: fmt(Math.max(...ln.token_spread_before_norm)), after: fmt(spread),
        limit: fmt(ln.pinned_spread) }));
    }
    parts.push(t('models.caption.unknown', { model, count: trace.unknown_tokens, total: trace.tokens.length }));
  }
  return parts.join(' ');
}

/** Each shown model's trace; one that fails is named in the caption and does not blank the others. */
async function shownTraces(state) {
  const settled = await Promise.allSettled(shown(state).map((name) => traceOf(name, state.text)));
  const drawn = settled.map((result, i) => (result.status === 'fulfilled' ? result.value
    : { failed: shown(state)[i], message: result.reason?.message || '' }));
  if (drawn.every((trace) => trace.failed)) throw settled[0].reason;
  return drawn;
}

function tokensFigure(trace, state) {
  const theme = state.theme;
  const x = trace.tokens.map((_, i) => i);
  const fig = { data: [logHeatmap(theme, { x, y: trace.layers, values: trace.stream.per_token, colorbarTitle: '‖x_l‖' })],
    layout: heatmapLayout(theme, { title: `${t('chart.models_tokens.title')} · ${shortName(trace)}`, x: t('models.axis.token'),
      y: t('models.axis.layer') }) };
  fig.data[0].hovertemplate = '%{customdata:.4g}<extra></extra>';
  Object.assign(fig.layout.xaxis, { tickvals: x, ticktext: trace.tokens.map((token) => token.trim() || '␣'), tickangle: -45 });
  return fig;
}

function tokensCaption(trace) {
  const parts = [t('caption.models_tokens')];
  if (trace.summary.first_token_ratio_max > 10) {
    parts.push(t('models.caption.sink', { token: trace.tokens[0].trim(), ratio: fmt(trace.summary.first_token_ratio_max) }));
  }
  parts.push(t('models.caption.unknown', { model: shortName(trace), count: trace.unknown_tokens, total: trace.tokens.length }));
  return parts.join(' ');
}

function gradientFigure(trace, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.models_gradient.title'), x: t('models.axis.layer'),
    y: t('chart.models_gradient.y'), ylog: state.y_scale === 'log' }) };
  if (trace.gradient) {
    fig.data.push(line(theme, { name: shortName(trace), x: trace.layers, y: trace.gradient.per_block, color: PALETTE.purple }));
  }
  fig.layout.showlegend = false;
  return fig;
}

function gradientCaption(trace) {
  const model = shortName(trace), gradient = trace.gradient;
  if (!gradient) return t(`models.no_gradient.${trace.gradient_absent}`, { model });
  const perBlock = gradient.per_block;
  return t('caption.models_gradient') + ' ' + t('models.caption.gradient', { model, loss: fmt(gradient.loss), ratio: fmt(perBlock[1] / perBlock[perBlock.length - 1]) });
}

// The attention sink (the mass every query puts on token 0, per block, beside a uniform attention's) above the first
// token's norm ratio: related, not the same thing.
function sinkFigure(trace, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: `${t('chart.models_sink.title')} · ${shortName(trace)}`, x: t('models.axis.layer'),
    y: t('chart.models_sink.y') }) };
  fig.layout.yaxis.domain = [0.55, 1];
  fig.layout.yaxis.range = [0, 1];
  fig.layout.yaxis2 = { ...axis(themeOf(theme), t('chart.models_sink.y2'), { log: true }), domain: [0, 0.42], anchor: 'x' };
  const blocks = trace.layers.slice(1);
  if (trace.attention) {
    fig.data.push(line(theme, { name: t('models.series.sink'), x: blocks, y: trace.attention.mass, color: PALETTE.blue }));
    fig.data.push(line(theme, { name: t('models.series.uniform'), x: blocks, y: blocks.map(() => trace.attention.uniform),
      color: PALETTE.black, dash: 'dash', markers: false }));
  }
  fig.data.push(line(theme, { name: t('models.series.ratio'), x: blocks, y: trace.summary.first_token_ratio.slice(1),
    color: PALETTE.vermillion, yaxis: 'y2' }));
  return fig;
}

const argmax = (values) => values.reduce((best, v, i) => (v > values[best] ? i : best), 0);
const argmin = (values) => values.reduce((best, v, i) => (v < values[best] ? i : best), 0);

function sinkCaption(trace) {
  const model = shortName(trace);
  const ratios = trace.summary.first_token_ratio.slice(1);
  const top = argmax(ratios);
  const ratioPart = t('models.caption.ratio', { ratio: fmt(ratios[top]), block: top + 1 });
  if (!trace.attention) return `${t('models.caption.no_attention', { model })} ${ratioPart}`;
  const mass = trace.attention.mass, low = argmin(mass), high = argmax(mass);
  return `${t('models.caption.attention', { model, low: fmt(mass[low]), lowBlock: low + 1, high: fmt(mass[high]), highBlock: high + 1,
    uniform: fmt(trace.attention.uniform) })} ${ratioPart}`;
}

// The massive coordinate as what it is: |x_l[d]| of the largest dimensions, each at the token where it peaks.
function dimsFigure(trace, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: `${t('chart.models_dims.title')} · ${shortName(trace)}`, x: t('models.axis.layer'),
    y: t('chart.models_dims.y'), ylog: true }) };
  trace.massive.dimensions.forEach((row, i) => {
    fig.data.push(line(theme, { name: t('models.series.dim', { d: row.index, token: trace.tokens[row.token].trim() || '␣' }),
      x: trace.layers, y: row.stream.map(Math.abs), color: [PALETTE.blue, PALETTE.vermillion, PALETTE.green, PALETTE.purple][i % 4] }));
  });
  fig.data.push(line(theme, { name: t('models.series.median'), x: trace.layers, y: trace.massive.median_abs, color: PALETTE.black,
    dash: 'dot', markers: false }));
  return fig;
}

function dimsCaption(trace) {
  const massive = trace.massive, row = massive.dimensions[0];
  if (!row) return t('caption.models_dims');
  const magnitudes = row.stream.map(Math.abs), layer = argmax(magnitudes.slice(1)) + 1, value = row.stream[layer];
  const ratio = magnitudes[layer] / massive.median_abs[layer];
  const sign = Math.sign(value);
  const writes = row.mlp.map((m, b) => ({ b, kind: 'mlp', v: m * sign })).concat(row.attention.map((a, b) => ({ b, kind: 'attention', v: a * sign })));
  const written = writes.reduce((best, w) => (w.v > best.v ? w : best));
  const removed = writes.reduce((best, w) => (w.v < best.v ? w : best));
  const parts = [t('caption.models_dims'), t(trace.post_ln ? 'models.caption.dim_post' : 'models.caption.dim', { model: shortName(trace), d: row.index,
    token: trace.tokens[row.token].trim() || '␣', value: fmt(value), layer, ratio: fmt(ratio),
    verdict: t(magnitudes[layer] > massive.criterion.min_abs && ratio >= massive.criterion.min_ratio_to_median ? 'models.massive.yes' : 'models.massive.no'),
    written: written.b + 1, writtenBy: t(`models.branch.${written.kind}`), writtenAmount: fmt(written.v * sign),
    removed: removed.b + 1, removedBy: t(`models.branch.${removed.kind}`), removedAmount: fmt(removed.v * sign) })];
  if (row.gain) parts.push(t('models.caption.gain', { d: row.index, gain: fmt(row.gain[row.gain.length - 1]) }));
  parts.push(t('models.caption.found', { count: massive.found_total }));
  return parts.join(' ');
}

const models = EXTRA.models || [];
runPage({
  params: [
    { name: 'model', type: 'string', enum: models, default: EXTRA.default_model, group: 'page', label: 'models.model', help: 'models.model.help' },
    { name: 'compare', type: 'string', enum: [...models, 'none'], default: EXTRA.default_compare, group: 'page', label: 'models.compare',
      help: 'models.compare.help' },
    { name: 'text', type: 'string', default: EXTRA.default_text, group: 'page', label: 'models.text', help: 'models.text.help',
      validate: noControlCharacters },
    scaleParam('y_scale', 'log'),
  ],
  charts: [
    { key: 'models-stream', dataKey: (state) => [shown(state), state.text],
      load: shownTraces,
      figure: streamFigure, caption: streamCaption, json: (data) => data,
      table: (data) => data.filter((trace) => !trace.failed).flatMap((trace) => trace.layers.map((layer, i) => ({ model: trace.model.name, layer,
        mean_without_first: trace.stream.mean_without_first[i], first_token: trace.stream.first[i], mean: trace.stream.mean[i] }))) },
    { key: 'models-tokens', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: tokensFigure, caption: tokensCaption,
      table: (trace) => trace.layers.flatMap((layer, l) => trace.tokens.map((token, i) => ({ layer, position: i, token,
        norm: trace.stream.per_token[l][i] }))) },
    { key: 'models-gradient', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: gradientFigure, caption: gradientCaption,
      table: (trace) => trace.layers.map((layer, i) => ({ layer, gradient: trace.gradient ? trace.gradient.per_block[i] : null })) },
    { key: 'models-sink', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: sinkFigure, caption: sinkCaption,
      table: (trace) => trace.layers.slice(1).map((layer, i) => ({ layer, attention_on_first: trace.attention ? trace.attention.mass[i] : null,
        uniform: trace.attention ? trace.attention.uniform : null, first_token_ratio: trace.summary.first_token_ratio[layer] })) },
    { key: 'models-dims', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: dimsFigure, caption: dimsCaption,
      table: (trace) => trace.massive.dimensions.flatMap((row) => trace.layers.map((layer, l) => ({ dimension: row.index, token: row.token,
        layer, value: row.stream[l], attention: l ? row.attention[l - 1] : null, mlp: l ? row.mlp[l - 1] : null,
        median_abs: trace.massive.median_abs[l] }))) },
  ],
});

// The live token counter: the model's tokenizer alone (POST /api/real_tokens), with an offer to cut the text to the
// first max_tokens tokens; and the one-off GGUF conversion announced before the first trace waits for it.
const counter = document.getElementById('models-token-count');
let counting = 0;
async function countTokens() {
  const input = document.getElementById('ctl-text'), model = document.getElementById('ctl-model');
  if (!counter || !input || !model) return;
  const asked = ++counting;
  try {
    const count = await postReal('/api/real_tokens', { model: model.value, text: input.value || ' ' });
    if (asked !== counting) return;
    counter.textContent = t(count.fits ? 'models.count' : 'models.count.over', { count: count.tokens, limit: count.limit });
    counter.classList.toggle('error', !count.fits);
    if (!count.fits) {
      const cut = document.createElement('button');
      cut.type = 'button';
      cut.textContent = t('models.truncate', { limit: count.limit });
      cut.addEventListener('click', () => {
        input.value = input.value.slice(0, count.truncate_at);
        input.dispatchEvent(new Event('change', { bubbles: true }));
        countTokens();
      });
      counter.append(' ', cut);
    }
  } catch (error) {
    if (asked === counting) counter.textContent = error.message;
  }
}
let pending = null;
document.addEventListener('input', (event) => {
  if (event.target?.id !== 'ctl-text') return;
  clearTimeout(pending);
  pending = setTimeout(countTokens, 400);
});
document.addEventListener('change', (event) => { if (event.target?.id === 'ctl-model') countTokens(); });
countTokens();

getJSON('/api/real_models').then((payload) => {
  const note = document.getElementById('models-conversion');
  const waiting = payload.models.filter((m) => m.conversion_pending);
  if (!note || !waiting.length) return;
  note.textContent = t('models.conversion', { models: waiting.map((m) => m.name).join(', '), low: waiting[0].conversion_s[0],
    high: waiting[0].conversion_s[1] });
  note.hidden = false;
}).catch(() => null);
