// Talking to the JSON API: POST and GET with errors in the reader's words, the answers a page carries or a static
// copy bakes in, presets per depth, NDJSON streams (the sweep).
import { t, lang, pageData } from './i18n.js';
import { rangeText, settingOf } from './explain.js';
import { apiUrl, isStaticSite, lookupBaked } from './staticsite.js';
import { requestKey } from './viewkeys.js';

// Answers the server handed over with the page (app/pages/handover.py): the first view's charts it held already,
// under the key of the request that asks for them. Each is taken once; later asks go to the server.
const handedBlock = document.getElementById('page-handed');
const handed = handedBlock ? JSON.parse(handedBlock.textContent) : {};

/** The handed-over answer of a request, or null; `take` removes it. */
export function handedAnswer(method, url, body = null, { take = true } = {}) {
  const key = requestKey(method, url, body);
  if (!Object.prototype.hasOwnProperty.call(handed, key)) return null;
  const value = handed[key];
  if (take) delete handed[key];
  return value;
}

export class ApiError extends Error {
  /** body: the server's error answer ({error, errors: [{field, message, allowed, input}]}); `translated` when its
   *  error text is already in the page's language (written by the page itself). */
  constructor(status, body, retryAfter = 0) {
    super(body?.error || `HTTP ${status}`);
    this.status = status;
    this.errors = body?.errors || [];
    this.fields = this.errors.map((e) => e.field).filter(Boolean);
    this.retryAfter = retryAfter;
    this.translated = Boolean(body?.translated);
  }
}

async function readError(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  return new ApiError(response.status, body, Number(response.headers.get('Retry-After') || 0));
}

/** A static site's baked answer (staticsite.js), or a refusal saying the view was not baked (staticsite.js names
 *  the nearest baked views on the line below). */
export async function baked(method, url, body = null) {
  const found = await lookupBaked(method, url, body);
  if (found) return found.value;
  const message = pageData.static?.server_only ? t('static.needs_server') : t('static.not_baked');
  throw new ApiError(404, { error: message, translated: true });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tell the page (page.js listens) that the server is busy and we retry in `seconds`. */
function announceBusy(seconds) {
  document.dispatchEvent(new CustomEvent('resnorm:busy', { detail: { seconds } }));
}

/** POST JSON; a 503 "busy" is retried twice after its Retry-After. */
export async function postJSON(url, body, { signal, onBusy } = {}) {
  if (isStaticSite) return baked('POST', url, body);
  const given = handedAnswer('POST', url, body);
  if (given) return given;
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(apiUrl(url), {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal,
    });
    if (response.ok) return response.json();
    const error = await readError(response);
    if (response.status !== 503 || attempt >= 2) throw error;
    const seconds = error.retryAfter || 2;
    (onBusy || announceBusy)(seconds);
    await sleep(1000 * (error.retryAfter || 2));
  }
}

export async function getJSON(url, { signal } = {}) {
  if (isStaticSite) return baked('GET', url);
  const response = await fetch(apiUrl(url), { signal });
  if (!response.ok) throw await readError(response);
  return response.json();
}

const presetCache = new Map();

/** GET /api/presets?depth=N: preset configs resolved for that depth (DeepNorm's α depends on it). */
export function fetchPresets(depth, seed = null) {
  if (seed && !presetCache.has(seed.depth)) presetCache.set(seed.depth, Promise.resolve(seed));
  if (!presetCache.has(depth)) presetCache.set(depth, getJSON(`/api/presets?depth=${depth}`));
  return presetCache.get(depth);
}

/** Read a streamed NDJSON answer, calling onLine with each parsed line as soon as it is complete. */
export async function readNDJSON(response, onLine) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onLine(JSON.parse(line));
    }
  }
  if (buffer.trim()) onLine(JSON.parse(buffer));
}

/** POST /api/sweep and read its NDJSON lines as they arrive; onLine gets each parsed line. */
export async function streamSweep(body, onLine, { signal, rows = true } = {}) {
  const url = rows ? '/api/sweep' : '/api/sweep?rows=false';   // false: progress lines only
  if (isStaticSite) {
    (await baked('POST', url, body)).forEach(onLine);
    return;
  }
  const response = await fetch(apiUrl(url), {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal,
  });
  if (!response.ok) throw await readError(response);
  await readNDJSON(response, onLine);
}

// A server's allowed text that reads the same in every language: numbers and their separators ("1, 2, 4, 8").
const NEUTRAL = /^[\d\s.,;:[\]()<>=≤≥+\-−×⁰-⁹]+$/;

/** A user-facing sentence for any failure, in the page's language: the setting by its label (specFor(name) finds its
 *  spec, labelOf names it) and what it allows, from the spec's schema bounds. The server's English words reach an
 *  English page only, when no spec explains the field. */
export function describeError(error, { specFor = () => null, labelOf = (spec) => spec.name } = {}) {
  if (!(error instanceof ApiError)) return t('status.network');
  if (error.translated) return error.message;
  if (error.status === 503) return t('status.busy_failed');
  if (error.status >= 500) return t('status.server_failed', { status: error.status, detail: lang === 'en' ? `: ${error.message}` : '' });
  const first = error.errors[0];
  const found = first && settingOf(first.field, specFor);
  if (!found) return t('status.refused_unknown', { status: error.status, detail: lang === 'en' ? `: ${error.message}` : '' });
  const { spec, entry } = found;
  const setting = entry === null ? labelOf(spec) : t('range.entry', { n: entry + 1, setting: labelOf(spec) });
  const listed = String(first.allowed || '').split(':').pop().trim();  // "divisors of d_model up to 16: 1, 2, 4, 8, 16"
  const serverRange = listed && NEUTRAL.test(listed) ? t('range.enum', { values: listed }) : null;
  const range = serverRange ?? (entry === null ? rangeText(spec) : t('range.finite'));
  const input = first.input === undefined || first.input === null ? '' : ` = ${first.input}`;
  return t('status.refused', { setting, input, range });
}
