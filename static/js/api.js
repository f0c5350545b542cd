// Talking to the JSON API: traces (coalesced and cached per config), presets per depth, the streamed sweep.
import { t } from './i18n.js';

export class ApiError extends Error {
  constructor(status, body, retryAfter = 0) {
    super(body?.error || `HTTP ${status}`);
    this.status = status;
    this.fields = (body?.errors || []).map((e) => e.field).filter(Boolean);
    this.retryAfter = retryAfter;
  }
}

async function readError(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON */ }
  return new ApiError(response.status, body, Number(response.headers.get('Retry-After') || 0));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tell the page (page.js listens) that the server is busy and we retry in `seconds`. */
function announceBusy(seconds) {
  document.dispatchEvent(new CustomEvent('resnorm:busy', { detail: { seconds } }));
}

/** POST JSON; a 503 "busy" is retried twice after its Retry-After. */
export async function postJSON(url, body, { signal, onBusy } = {}) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(url, {
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
  const response = await fetch(url, { signal });
  if (!response.ok) throw await readError(response);
  return response.json();
}

const traces = new Map();  // JSON config -> Promise of the trace; small LRU so back/forward is instant
const MAX_CACHED = 40;

/** The trace for a config (POST /api/trace). Identical concurrent requests share one fetch. */
export function fetchTrace(config, options = {}) {
  const key = JSON.stringify(config);
  if (traces.has(key)) {
    const hit = traces.get(key);
    traces.delete(key);
    traces.set(key, hit);
    return hit;
  }
  const promise = postJSON('/api/trace', config, { onBusy: options.onBusy });
  traces.set(key, promise);
  promise.catch(() => traces.delete(key));
  if (traces.size > MAX_CACHED) traces.delete(traces.keys().next().value);
  return promise;
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
export async function streamSweep(body, onLine, { signal } = {}) {
  const response = await fetch('/api/sweep', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal,
  });
  if (!response.ok) throw await readError(response);
  await readNDJSON(response, onLine);
}

/** A user-facing sentence for any failure. */
export function describeError(error) {
  if (error instanceof ApiError) return t('status.error', { message: error.message });
  return t('status.network');
}
