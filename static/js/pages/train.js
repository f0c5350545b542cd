// /train: 1-4 real training runs streamed from POST /api/train/charts (NDJSON): the loss curves of every run live on
// one chart, the per-layer gradient (or stream norm) at the latest recorded step on a second one, both built in Python
// (app/figures/train.py, train_profile.py) and only drawn here; Start, Stop, progress. Training starts only on Start
// (a link never starts a run by itself); Stop aborts the fetch, which cancels the server run. A static copy of the
// site shows each preset's run as recorded when it was built (the same charts, baked) and has no Start.
import { runPage, scaleParam, status } from '../page.js';
import { ApiError, baked, fetchPresets, readNDJSON, postJSON, describeError } from '../api.js';
import { apiUrl, isStaticSite } from '../staticsite.js';
import { assignChart, chartView, extendChart, t, fmt } from '../charts.js';
import { pageData, lang } from '../i18n.js';
import { specsFromSchema } from '../state.js';

const extra = pageData.extra;
const KINDS = new Map(extra.kinds.map((k) => [k.key, k]));
const PRESETS = extra.presets;
const SIZE_FIELDS = Object.keys(extra.size_schema.properties);
const DEFAULTS = extra.settings_defaults;
const BOUNDS = extra.settings_bounds;
const REDRAW_MS = 250;

const label = (item) => (lang === 'zh' ? item.label_zh : item.label);
const kindLabel = (key) => (KINDS.has(key) ? label(KINDS.get(key)) : key);

function numberSpec(name, type, extraFields = {}) {
  const b = BOUNDS[name] || {};
  return { name, type, default: DEFAULTS[name], group: 'page', label: `train.${name}`,
    min: b.minimum ?? b.exclusiveMinimum, exclusiveMin: 'exclusiveMinimum' in b, max: b.maximum, ...extraFields };
}

const PARAMS = [
  { name: 'runs', type: 'list', enum: [...KINDS.keys()], default: PRESETS[0].runs.map((r) => r.kind), minItems: 1, maxItems: 4,
    group: 'page', label: 'train.runs', optionLabel: kindLabel },
  { name: 'task', type: 'string', enum: BOUNDS.task.enum, default: DEFAULTS.task, group: 'page', label: 'train.task' },
  numberSpec('steps', 'integer'),
  numberSpec('lr', 'number'),
  numberSpec('warmup_steps', 'integer'),
  { name: 'optimizer', type: 'string', enum: BOUNDS.optimizer.enum, default: DEFAULTS.optimizer, group: 'page', label: 'train.optimizer' },
  { ...numberSpec('clip', 'number'), default: DEFAULTS.clip ?? 0, min: 0, exclusiveMin: false },  // 0 here means no clipping (null)
  numberSpec('seed', 'integer'),
  ...specsFromSchema(extra.size_schema).map((s) => ({ ...s, default: extra.size_defaults[s.name] })),
  { name: 'profile', type: 'string', enum: ['grad_norm', 'param_grad_norm', 'act_norm'], default: 'grad_norm', group: 'view', label: 'train.profile' },
  scaleParam('loss_scale', 'log', 'train.loss_scale'),
  scaleParam('profile_scale', 'log', 'train.profile_scale'),
  { name: 'run', type: 'integer', default: 0, min: 0, group: 'view', internal: true },  // bumped by Start
];

// ---- One training request and the charts the server streams for it --------------------------------------

const CHARTS = ['train-loss', 'train-profile'];

/** A training session: POST /api/train/charts streams both charts built in Python (app/figures/train_stream.py):
 *  each whole once, then `extend` patches (a step's point and CSV row) and `set` patches (the values that changed),
 *  applied here as they come. */
class Session {
  constructor(body) {
    this.body = body;
    this.charts = {};
    this.step = 0;
    this.ended = false;
    this.listeners = new Set();
    this.controller = new AbortController();
    this.stoppedByUser = false;
    this.finished = false;
    this.promise = this.stream();
  }

  snapshot() {
    return { charts: this.charts };
  }

  stop() {
    this.stoppedByUser = true;
    this.controller.abort();
  }

  async post() {
    const url = `/api/train/charts?lang=${lang}`;
    if (isStaticSite) return baked('POST', url, this.body);  // a static copy: training needs the server
    for (let attempt = 0; ; attempt += 1) {  // a just-stopped run frees its slot a few milliseconds later: retry briefly
      const response = await fetch(apiUrl(url), { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(this.body), signal: this.controller.signal });
      if (response.ok) return response;
      let body = null;
      try { body = await response.json(); } catch { /* not JSON */ }
      const retry = Number(response.headers.get('Retry-After') || 0);
      const busy = response.status === 429;  // say it in the page's language; other 4xx name their field
      const error = new ApiError(response.status, busy ? { ...body, error: t('train.busy', { s: retry }), translated: true } : body, retry);
      if (!busy || attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 400 * (attempt + 1)));
    }
  }

  async stream() {
    try {
      await readNDJSON(await this.post(), (message) => this.handle(message));
    } catch (error) {
      this.refused = error instanceof ApiError && error.status < 500 && !this.charts['train-loss'];
      if (!(error.name === 'AbortError' && this.stoppedByUser)) throw error;
    } finally {
      this.finished = true;
      this.notify(true);
    }
    return this.snapshot();
  }

  handle(message) {
    if (message.type === 'error') throw new ApiError(500, message);
    if (message.type === 'chart') this.charts[message.chart] = message;
    else if (message.type === 'set') assignChart(this.charts[message.chart], message);
    else if (message.type === 'extend') {
      extendChart(this.charts[message.chart], message);
      this.step = Math.max(this.step, message.step);
    }
    this.ended = Boolean(this.charts['train-loss']?.claim.ended);
    if (CHARTS.every((key) => this.charts[key])) this.notify(false);  // both cards draw from the first snapshot on
  }

  notify(force) {
    const now = performance.now();
    showProgress(this);
    if (!force && now - (this.lastDraw || 0) < REDRAW_MS) return;
    this.lastDraw = now;
    this.listeners.forEach((fn) => fn(this.snapshot()));
  }
}

// ---- Page wiring: Start / Stop / presets --------------------------------------------------------------

let page = null;        // the framework's ctx, captured at the first load
let armed = 0;          // the run token Start created in this page view (a reloaded link shows nothing until Start)
let session = null;
let sessionReady = null;
let sessionToken = -1;
let idleText = () => t('train.idle');  // before Start: what the charts show (a recorded run, or nothing yet)

function showProgress(s) {
  const running = s && !s.finished;
  const bar = document.getElementById('train-progress');
  const text = document.getElementById('train-progress-text');
  document.getElementById('train-stop').disabled = !running;
  if (!s) return;
  bar.value = s.ended ? 1 : s.step / s.body.steps;
  if (s.ended) text.textContent = t('train.finished');
  else if (running) text.textContent = t('train.running', { step: s.step, steps: s.body.steps });
  else if (s.stoppedByUser) text.textContent = t('train.stopped', { step: s.step });
  else if (s.refused) text.textContent = t('train.not_started');
}

async function runConfigs(state) {
  // DeepNorm's α depends on the depth: the server resolves it (the page carries the default depth's)
  const archs = await fetchPresets(state.depth, extra.arch_presets);
  const sizes = Object.fromEntries(SIZE_FIELDS.map((f) => [f, state[f]]));
  return state.runs.map((kind) => {
    const spec = KINDS.get(kind);
    const arch = archs.presets.find((p) => p.key === spec.arch);
    return { ...sizes, seed: state.seed, ...arch.config, ...spec.overrides };
  });
}

async function requestBody(state) {
  return { runs: await runConfigs(state), task: state.task, steps: state.steps, lr: state.lr, warmup_steps: state.warmup_steps,
    optimizer: state.optimizer, clip: state.clip > 0 ? state.clip : null, seed: state.seed };
}

/** The body of /train's charts: the training request and the run kinds that name its curves. */
async function chartsBody(state) {
  return { ...(await requestBody(state)), kinds: [...state.runs] };
}

function presetPatch(preset) {
  const sizes = Object.fromEntries(SIZE_FIELDS.map((f) => [f, preset.base[f]]));
  return { ...sizes, ...preset.settings, clip: preset.settings.clip ?? 0, runs: preset.runs.map((r) => r.kind) };
}

function markPreset(state) {
  document.querySelectorAll('[data-train-preset]').forEach((button) => {
    const preset = PRESETS.find((p) => p.key === button.dataset.trainPreset);
    const patch = presetPatch(preset);
    const same = Object.entries(patch).every(([k, v]) => JSON.stringify(state[k]) === JSON.stringify(v));
    button.setAttribute('aria-pressed', String(same));
    document.querySelector(`[data-train-caption="${preset.key}"]`).hidden = !same;
  });
}

/** The training budget before Start (POST /api/train/budget): null when it fits, else why, in the reader's words
 *  (how many times too much, the most steps that fit). A setting the server refuses outright is named by its label. */
async function budgetProblem(state, ctx) {
  try {
    const report = await postJSON('/api/train/budget', await requestBody(state));
    if (report.fits) return null;
    const values = { runs: report.runs, steps: report.steps, times: fmt(report.times_over, { digits: 2 }), max_steps: report.max_steps };
    return t(report.max_steps > 0 ? 'train.over_budget' : 'train.over_budget_none', values);
  } catch (error) {
    return error instanceof ApiError ? describeError(error, ctx.explain) : null;  // offline: Start says it later
  }
}

/** Check the settings as they change, so the refusal stands beside Start before anyone presses it. */
async function showBudget(state, ctx) {
  const problem = await budgetProblem(state, ctx);
  const text = document.getElementById('train-progress-text');
  if (problem) {
    text.textContent = problem;
    text.classList.add('error');
  } else if (text.classList.contains('error')) {
    text.classList.remove('error');
    text.textContent = session ? text.textContent : idleText();
    if (session) showProgress(session);
  }
  return problem;
}

/** After the page's first work (at most a second later): requestIdleCallback where the browser has it. */
function whenIdle(callback) {
  if (window.requestIdleCallback) window.requestIdleCallback(callback, { timeout: 1000 });
  else setTimeout(callback, 0);
}

function wire(ctx) {
  page = ctx;
  // An /embed/ of these charts has no Start or Stop button: it shows the idle charts only. A static copy trains
  // nothing: its charts are the recorded runs.
  if (isStaticSite) document.getElementById('train-start')?.setAttribute('disabled', '');
  document.getElementById('train-start')?.addEventListener('click', async () => {
    if (await showBudget(ctx.url.state, ctx)) return;  // nothing is sent
    armed = ctx.url.state.run + 1;
    ctx.url.update({ run: armed }, { push: false });
  });
  if (document.getElementById('train-start')) {
    ctx.url.onChange((state) => showBudget(state, ctx));
    // once the page is drawn: the charts need the main thread and the server first (a refusal only matters to Start)
    whenIdle(() => showBudget(ctx.url.state, ctx));
  }
  document.getElementById('train-stop')?.addEventListener('click', () => session?.stop());
  document.querySelectorAll('[data-train-preset]').forEach((button) => button.addEventListener('click', () => {
    ctx.url.update(presetPatch(PRESETS.find((p) => p.key === button.dataset.trainPreset)));
  }));
  ctx.url.onChange((state) => markPreset(state));
  markPreset(ctx.url.state);
}

/** Before Start, say whether the charts show a run this server recorded with these settings (or nothing yet); a
 *  static copy's charts are the runs recorded when it was built. */
function showRecorded(claim) {
  const key = isStaticSite ? 'static.train_recorded' : 'train.recorded';
  idleText = claim.ended ? () => t(key, { seconds: fmt(claim.seconds) }) : () => t('train.idle');
  const text = document.getElementById('train-progress-text');
  if (text && !session && !text.classList.contains('error')) text.textContent = idleText();
}

/** Before the first Start: the chart as the server holds it (a run it recorded with these settings, else empty;
 *  POST /api/figure/<key>). After Start: both charts come from the same session; the first to ask starts it. */
async function load(key, state, ctx) {
  if (!page) wire(ctx);
  if (armed === 0) {
    const chart = await postJSON(`/api/figure/${key}?lang=${lang}`, await chartsBody(state), { signal: ctx.signal });
    if (key === 'train-loss') showRecorded(chart.claim);
    return { charts: { [key]: chart } };
  }
  if (state.run !== armed) return session.snapshot();  // a link's own run token (back, forward) starts nothing
  if (sessionToken !== state.run) {  // the second chart asks for the same token while the first is still building it
    session?.stop();
    sessionToken = state.run;
    sessionReady = chartsBody(state).then((body) => { session = new Session(body); status(''); return session; });
  }
  const mine = await sessionReady;
  const draw = (snapshot) => ctx.partial(snapshot);
  mine.listeners.add(draw);
  ctx.signal.addEventListener('abort', () => mine.controller.abort());
  try {
    return await mine.promise;
  } finally {
    mine.listeners.delete(draw);
  }
}

/** What a card draws: its chart with the slide theme's patch and the view's (the quantity, the y scale). */
function drawn(key, views) {
  return (data, state) => chartView(data.charts[key], ...(state.theme === 'slide' ? ['slide'] : []), ...views(state));
}

/** Before the first Start a card reloads when the settings change (the server may hold another recorded run);
 *  after it, when Start is pressed again. */
const dataKey = (state) => (armed === 0 ? JSON.stringify({ ...state, theme: null, profile: null, loss_scale: null, profile_scale: null }) : state.run);

runPage({
  modelControls: false,
  params: PARAMS,
  charts: [
    { key: 'train-loss', dataKey, load: (state, ctx) => load('train-loss', state, ctx),
      figure: drawn('train-loss', (state) => [state.loss_scale]),
      caption: (data) => data.charts['train-loss'].caption, table: (data) => data.charts['train-loss'].rows,
      json: (data) => data.charts['train-loss'] },
    { key: 'train-profile', dataKey, load: (state, ctx) => load('train-profile', state, ctx),
      figure: drawn('train-profile', (state) => [state.profile, state.profile_scale]),
      caption: (data) => data.charts['train-profile'].caption, table: (data) => data.charts['train-profile'].rows,
      json: (data) => data.charts['train-profile'] },
  ],
});
