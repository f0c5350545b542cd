// /models: real pretrained Transformers on the user's sentence. Every chart is built in Python from the models'
// answers (POST /api/figure/models-*): this module keeps the controls, the requests, the live token counter and
// the one-off conversion note, and draws what it is handed.
import { runPage, scaleParam } from '../page.js';
import { ApiError, baked, getJSON } from '../api.js';
import { isStaticSite } from '../staticsite.js';
import { chartView, t } from '../charts.js';
import { pageData, lang } from '../i18n.js';

const EXTRA = pageData.extra;

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
    const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    let answer = null;
    try { answer = await response.json(); } catch { /* not JSON */ }
    if (response.ok) return answer;
    const retryAfter = Number(response.headers.get('Retry-After') || 0);
    if (!(response.status === 503 && retryAfter > 0) || attempt >= 2) throw localised(response.status, answer);
    await new Promise((resolve) => setTimeout(resolve, 1000 * retryAfter));
  }
}

/** A chart's body: one model's trace, the model with the one beside it (the stream chart), or the model's sentence
 *  set beside the reader's sentence; the request kind of each chart comes from the page (app/pages/models.py). */
function bodyOf(kind, state) {
  return kind === 'real_pair' ? { model: state.model, compare: state.compare, text: state.text } : { model: state.model, text: state.text };
}

const started = new Map();  // [chart, body] -> its request: the set's charts wait on the others of the same view

function request(key, kind, state) {
  const body = bodyOf(kind, state);
  const id = JSON.stringify([key, body]);
  if (!started.has(id)) {
    const promise = postReal(`/api/figure/${key}?lang=${lang}`, body);
    promise.catch(() => started.delete(id));
    started.set(id, promise);
    if (started.size > 64) started.delete(started.keys().next().value);
  }
  return started.get(id);
}

/** The sentence set's charts ask once the sentence's own charts are answered: its sixteen traces then queue behind
 *  nothing the reader is already waiting for. */
async function load(key, kind, state) {
  if (kind === 'real_set') {
    const others = Object.entries(EXTRA.charts).filter(([, k]) => k !== 'real_set');
    await Promise.allSettled(others.map(([other, k]) => request(other, k, state)));
  }
  return request(key, kind, state);
}

/** The views the builder's patches give: the slide theme, and the y scale where the chart has one. */
function views(chart, state) {
  return [...(state.theme === 'slide' ? ['slide'] : []), ...(chart.patches?.[state.y_scale] ? [state.y_scale] : [])];
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
  // Every chart, its caption and its rows are built in Python (app/figures/real_*.py, POST /api/figure/<key>).
  charts: Object.entries(EXTRA.charts || {}).map(([key, kind]) => ({
    key,
    dataKey: (state) => bodyOf(kind, state),
    load: (state) => load(key, kind, state),
    figure: (chart, state) => chartView(chart, ...views(chart, state)),
    caption: (chart) => chart.caption,
    table: (chart) => chart.rows,
  })),
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
