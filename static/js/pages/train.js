// /train: 1-4 real training runs streamed from POST /api/train (NDJSON); loss curves of every run live on one chart,
// the per-layer gradient (or stream norm) at the latest recorded step on a second one; Start, Stop, progress.
// Training starts only on Start (a link never starts a run by itself); Stop aborts the fetch, which cancels the server run.
import { runPage, scaleParam, status } from '../page.js';
import { ApiError, baked, fetchPresets, readNDJSON, postJSON, describeError } from '../api.js';
import { apiUrl, isStaticSite } from '../staticsite.js';
import { layout, line, hline, SERIES, PALETTE, t, fmt } from '../charts.js';
import { pageData, lang, sentences } from '../i18n.js';
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

// ---- One training request and the events it streamed --------------------------------------------------

class Session {
  constructor(body, kinds) {
    this.body = body;
    this.runs = kinds.map((kind, i) => ({ run: i, kind, label: kindLabel(kind), config: body.runs[i],
      steps: [], loss: [], gradNorm: [], lr: [], profile: null, profileStep: 0, done: null }));
    this.step = 0;
    this.listeners = new Set();
    this.controller = new AbortController();
    this.stoppedByUser = false;
    this.started = performance.now();
    this.elapsed = null;
    this.promise = this.stream();
  }

  snapshot() {
    return { runs: this.runs, step: this.step, steps: this.body.steps, stopped: this.stoppedByUser, elapsed: this.elapsed,
      symbols: this.body.runs[0].vocab_size - 1, request: this.body };
  }

  stop() {
    this.stoppedByUser = true;
    this.controller.abort();
  }

  async post() {
    for (let attempt = 0; ; attempt += 1) {  // a just-stopped run frees its slot a few milliseconds later: retry briefly
      const response = await fetch(apiUrl('/api/train'), { method: 'POST', headers: { 'Content-Type': 'application/json' },
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
      if (isStaticSite) (await baked('POST', '/api/train', this.body)).forEach((event) => this.handle(event));  // recorded
      else await readNDJSON(await this.post(), (event) => this.handle(event));
    } catch (error) {
      this.refused = error instanceof ApiError && error.status < 500 && this.step === 0;
      if (!(error.name === 'AbortError' && this.stoppedByUser)) throw error;
    } finally {
      this.elapsed = (performance.now() - this.started) / 1000;
      this.notify(true);
    }
    return this.snapshot();
  }

  handle(event) {
    if (event.type === 'error') throw new ApiError(500, event);
    const run = this.runs[event.run];
    if (event.type === 'step') {
      run.steps.push(event.step);
      run.loss.push(event.loss);
      run.gradNorm.push(event.grad_norm);
      run.lr.push(event.lr);
      if (event.layers) { run.profile = event.layers; run.profileStep = event.step; }
      this.step = Math.max(this.step, event.step);
      this.notify(false);
    } else if (event.type === 'done') {
      run.done = event;
      this.notify(false);
    } else if (event.type === 'end') {
      this.recordedSeconds = event.elapsed_ms / 1000;
    }
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

function showProgress(s) {
  const running = s && s.elapsed === null;
  const bar = document.getElementById('train-progress');
  const text = document.getElementById('train-progress-text');
  document.getElementById('train-stop').disabled = !running;
  if (!s) return;
  bar.value = s.step / s.body.steps;
  if (running) text.textContent = t('train.running', { step: s.step, steps: s.body.steps });
  else if (s.stoppedByUser) text.textContent = t('train.stopped', { step: s.step });
  else if (s.refused) text.textContent = t('train.not_started');
  else if (isStaticSite && s.recordedSeconds) text.textContent = t('static.train_recorded', { seconds: fmt(s.recordedSeconds) });
  else text.textContent = t('train.finished', { seconds: fmt(s.elapsed) });
}

async function runConfigs(state) {
  const archs = await fetchPresets(state.depth);  // DeepNorm's α depends on the depth: the server resolves it
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
    text.textContent = session ? text.textContent : t('train.idle');
    if (session) showProgress(session);
  }
  return problem;
}

function wire(ctx) {
  page = ctx;
  // An /embed/ of these charts has no Start or Stop button: it shows the idle charts only.
  document.getElementById('train-start')?.addEventListener('click', async () => {
    if (await showBudget(ctx.url.state, ctx)) return;  // nothing is sent
    armed = ctx.url.state.run + 1;
    ctx.url.update({ run: armed }, { push: false });
  });
  if (document.getElementById('train-start')) {
    ctx.url.onChange((state) => showBudget(state, ctx));
    showBudget(ctx.url.state, ctx);
  }
  document.getElementById('train-stop')?.addEventListener('click', () => session?.stop());
  document.querySelectorAll('[data-train-preset]').forEach((button) => button.addEventListener('click', () => {
    const patch = presetPatch(PRESETS.find((p) => p.key === button.dataset.trainPreset));
    ctx.url.update(isStaticSite ? { ...patch, run: ctx.url.state.run + 1 } : patch);  // a static copy: show its recording
  }));
  ctx.url.onChange((state) => markPreset(state));
  markPreset(ctx.url.state);
}

/** Both charts load the same session: the first one to ask for a token starts it. */
async function load(state, ctx) {
  if (!page) wire(ctx);
  // A static copy shows the recorded run of what the page shows at once; the server trains only after Start.
  if (!isStaticSite && (state.run !== armed || armed === 0)) return session ? session.snapshot() : null;
  if (sessionToken !== state.run) {  // the second chart asks for the same token while the first is still building it
    session?.stop();
    sessionToken = state.run;
    const kinds = [...state.runs];
    sessionReady = requestBody(state).then((body) => { session = new Session(body, kinds); status(''); return session; });
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

// ---- Figures -----------------------------------------------------------------------------------------

function runName(run) {
  return `${run.run + 1}. ${run.label}`;
}

/** A chart before any run: its titles, but no made-up ticks on the axes. */
function idle(fig) {
  for (const axis of [fig.layout.xaxis, fig.layout.yaxis]) Object.assign(axis, { showticklabels: false, showgrid: false, ticks: '' });
  return fig;
}

function lossFigure(data, state) {
  const fig = { data: [], layout: layout(state.theme, { title: t('chart.train_loss.title'), x: t('chart.train_loss.x'),
    y: t('chart.train_loss.y'), ylog: state.loss_scale === 'log', legendBelow: true }) };
  if (!data) {
    fig.layout.annotations.push({ xref: 'paper', yref: 'paper', x: 0.5, y: 0.5, text: t('train.idle'), showarrow: false, font: { size: 16 } });
    return idle(fig);
  }
  data.runs.forEach((run, i) => {
    // copies: Plotly.react only notices new arrays, and these grow in place while the run streams
    fig.data.push(line(state.theme, { name: runName(run), x: [...run.steps], y: [...run.loss], color: SERIES[i], markers: false }));
    if (run.done?.diverged) {
      const finite = run.loss.filter((v) => v !== null);
      fig.data.push({ type: 'scatter', mode: 'markers+text', x: [run.done.diverged_step], y: [finite.length ? finite[finite.length - 1] : null],
        marker: { symbol: 'x', size: 16, color: SERIES[i] }, text: [t('chart.train_loss.diverged')], textposition: 'top center',
        showlegend: false, hoverinfo: 'skip' });
    }
  });
  fig.layout.xaxis.range = [0, data.steps];
  fig.layout.yaxis.autorange = true;  // the idle chart had no data: recompute the range from the curves
  fig.layout.datarevision = data.runs.reduce((sum, run) => sum + run.steps.length, 0);
  const chance = Math.log(data.symbols);
  hline(state.theme, fig, chance, t('chart.train_loss.chance', { symbols: data.symbols, value: fmt(chance) }), { color: PALETTE.black });
  return fig;
}

function profileValues(run, quantity) {
  const p = run.profile;
  if (quantity === 'param_grad_norm') return { x: p.param_grad_norm.map((_, i) => i + 1), y: p.param_grad_norm };
  const first = quantity === 'grad_norm' ? p.embedding_grad_norm : p.embedding_act_norm;
  return { x: [0, ...p[quantity].map((_, i) => i + 1)], y: [first, ...p[quantity]] };
}

function profileFigure(data, state) {
  const runs = data ? data.runs.filter((r) => r.profile) : [];
  const step = runs.length ? Math.max(...runs.map((r) => r.profileStep)) : 0;
  const title = runs.length ? t('chart.train_profile.title', { step }) : t('chart.train_profile.title_idle');
  const fig = { data: [], layout: layout(state.theme, { title, x: t('axis.layer'), y: t(`enum.profile.${state.profile}`),
    ylog: state.profile_scale === 'log', legendBelow: true }) };
  runs.forEach((run) => {
    const { x, y } = profileValues(run, state.profile);
    fig.data.push(line(state.theme, { name: runName(run), x: [...x], y: [...y], color: SERIES[run.run] }));
  });
  if (runs.length && runs[0].profile.act_norm.length <= 16) fig.layout.xaxis.dtick = 1;  // layers are whole numbers
  fig.layout.yaxis.autorange = true;
  fig.layout.datarevision = step;
  return runs.length ? fig : idle(fig);
}

function lossCaption(data) {
  const done = data ? data.runs.filter((r) => r.done) : [];
  if (!done.length) return t('caption.train_loss');
  return sentences(...done.map((run) => (run.done.diverged
    ? t('caption.train_loss_diverged', { label: runName(run), step: run.done.diverged_step })
    : t('caption.train_loss_done', { label: runName(run), loss: fmt(run.done.final_loss),
      accuracy: `${fmt(100 * run.done.accuracy)}%`, whole: `${fmt(100 * run.done.sequence_accuracy)}%` }))));
}

function lossTable(data) {
  return (data?.runs || []).flatMap((run) => run.steps.map((step, i) => ({ run: run.run + 1, kind: run.kind, step,
    loss: run.loss[i], grad_norm: run.gradNorm[i], lr: run.lr[i] })));
}

function profileTable(data) {
  return (data?.runs || []).filter((r) => r.profile).flatMap((run) => run.profile.grad_norm.map((g, i) => ({
    run: run.run + 1, kind: run.kind, step: run.profileStep, layer: i + 1, grad_norm: g,
    param_grad_norm: run.profile.param_grad_norm[i], act_norm: run.profile.act_norm[i] })));
}

runPage({
  modelControls: false,
  params: PARAMS,
  charts: [
    { key: 'train-loss', dataKey: (state) => state.run, load, figure: lossFigure, caption: lossCaption, table: lossTable },
    { key: 'train-profile', dataKey: (state) => state.run, load, figure: profileFigure, table: profileTable },
  ],
});
