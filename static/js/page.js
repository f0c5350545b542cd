// The page framework: every explorer, lesson and training page runs through runPage(definition).
// It builds the URL state from the schema, the controls, the chart cards (busy overlay, caption, exports,
// embed code), and redraws each chart when the state changes; it reloads data only when a chart's dataKey changes.
import { pageData, t, lang } from './i18n.js';
import { specsFromSchema, UrlState, toQuery } from './state.js';
import { buildControls, labelOf, optionLabel } from './controls.js';
import { rangeText } from './explain.js';
import { checkBudget, budgetMessage } from './budget.js';
import { Presets } from './presets.js';
import { describeError } from './api.js';
import * as charts from './charts.js';
import * as save from './save.js';

const BUSY_DELAY_MS = 300;

// Charts whose answers are ready together (a warm page hands them over with its HTML) are drawn one at a time, in
// the page's order, each given a frame to reach the screen before the next starts: the first chart does not wait for
// the drawing of the ones below it. The page's first chart starts at once (nothing can come before it: no yield to
// the event loop, so the page is not laid out and painted once without it); another waits a task, so that the
// charts ready with it join and go in order.
const turns = [];
let flushing = null;
const nextFrame = () => new Promise((resolve) => {
  requestAnimationFrame(() => setTimeout(resolve, 0));   // after the frame that paints the last drawing
  setTimeout(resolve, 50);   // a hidden tab has no frames: never wait on one
});

function drawInTurn(order, job) {
  return new Promise((resolve, reject) => {
    turns.push({ order, job, resolve, reject });
    flushing ??= (order === 0 ? Promise.resolve() : new Promise((wait) => setTimeout(wait, 0))).then(drawTurns);
  });
}

async function drawTurns() {
  while (turns.length) {
    turns.sort((a, b) => a.order - b.order);
    const { job, resolve, reject } = turns.shift();
    await job().then(resolve, reject);
    if (turns.length) await nextFrame();
  }
  flushing = null;
}

/** View keys every page shares. */
export const THEME_PARAM = { name: 'theme', type: 'string', enum: ['normal', 'slide'], default: 'normal', group: 'view', label: 'controls.theme' };

/** A y-axis scale key, e.g. scaleParam('norm_scale', 'linear'). */
export function scaleParam(name, fallback, label = 'controls.yscale') {
  return { name, type: 'string', enum: ['linear', 'log'], default: fallback, group: 'view', label, optionLabel: (v) => t(`enum.yscale.${v}`) };
}

let statusFromLoad = false;

/** Write the shared status line (aria-live). Messages from a failed load are cleared by the next good one. */
export function status(text, { error = false, fromLoad = false } = {}) {
  const node = document.getElementById('status');
  if (!node) return;
  node.textContent = text;
  node.classList.toggle('error', error);
  statusFromLoad = fromLoad;
}

function clearLoadStatus() {
  if (statusFromLoad) status('');
}

function chartTitle(key) {
  return t(`chart.${key.replace(/-/g, '_')}.title`);
}

/**
 * definition = {params: [spec...], charts: [{key, dataKey(state, ctx), load(state, ctx), figure(data, state, ctx),
 *               caption?(data, state, ctx), table?(data, state, ctx), json?(data, state, ctx)}], modelControls?: bool}
 * (table and json may return a promise: an export that asks the server for more than the drawn chart)
 */
export async function runPage(definition) {
  const modelControls = definition.modelControls ?? pageData.model_controls;
  const specs = [...(definition.params || []), ...(modelControls ? specsFromSchema(pageData.schema, pageData.defaults) : []), THEME_PARAM];
  const url = new UrlState(specs);
  const presets = modelControls && pageData.presets ? new Presets(pageData.presets, url) : null;
  const ctx = { url, presets, t, lang, embed: pageData.embed, config: (state) => url.modelConfig(state), charts };
  const explain = { specFor: (name) => url.spec(name), labelOf };
  ctx.explain = explain;
  if (url.invalid.length) status(badLinkNotice(url), { error: true });

  const panel = document.getElementById('controls');
  const controls = panel && !pageData.embed
    ? buildControls(panel, url, { presets, onPreset: (key) => presets.apply(key),
      onRefuse: (message) => status(message, { error: true, fromLoad: true }) })
    : { sync() {}, markInvalid() {}, setLimits() {} };
  const cards = definition.charts.filter((c) => document.querySelector(`[data-chart="${c.key}"]`))
    .map((c, order) => new ChartCard(c, ctx, controls, order));
  cards.forEach((card) => card.wireExports());

  let previousDepth = url.state.depth;
  const refresh = async (state, reason) => {
    document.body.classList.toggle('theme-slide', state.theme === 'slide');
    if (presets && reason === 'update' && state.depth !== previousDepth) {
      const oldDepth = previousDepth;
      previousDepth = state.depth;
      await followPreset(presets, state, oldDepth);
    }
    previousDepth = url.state.depth;
    if (presets) await presets.load(url.state.depth).catch(() => null);
    controls.sync(url.state);
    carryStateToNav(url);
    if (modelControls && !(await withinBudget(url, ctx, controls, cards))) return;
    await Promise.all(cards.map((card) => card.update(url.state)));
  };
  url.onChange(refresh);
  document.addEventListener('resnorm:busy', (event) => status(t('status.busy', { s: event.detail.seconds }), { fromLoad: true }));
  await refresh(url.state, 'start');
  document.body.dataset.ready = '1';
}

/** The link's refused values, each by its label with what it allows: "Residual scale = 0 (allowed: a number above 0,
 *  at most 16)". */
function badLinkNotice(url) {
  const names = url.invalid.map((name) => {
    const spec = url.spec(name);
    return t('status.invalid_item', { setting: labelOf(spec), value: url.rejected[name],
      range: rangeText(spec, { state: url.state, label: (v) => optionLabel(spec, v) }) });
  });
  return t('status.invalid_url', { names: names.join(t('budget.list_sep')) });
}

/** Ask the server whether the model fits its compute budget before asking for the model: over it, name the setting
 *  to blame and the largest value that fits (in the page's language), keep every chart as it was, send nothing. */
async function withinBudget(url, ctx, controls, cards) {
  const report = await checkBudget(ctx.config(url.state));
  if (!report) return true;  // the budget could not be asked: the model's own request names any problem
  if (report.refused) {  // a combination the request model refuses (heads that do not divide the width): not sent
    const message = describeError(report.refused, ctx.explain);
    status(message, { error: true, fromLoad: true });
    controls.markInvalid(report.refused.fields);
    cards.forEach((card) => card.blocked(message));
    return false;
  }
  controls.setLimits(report.limits);
  if (report.fits) return true;
  const message = budgetMessage(report, (name) => labelOf(url.spec(name)));
  status(message, { error: true, fromLoad: true });
  controls.markInvalid(report.cause ? [report.cause] : []);
  cards.forEach((card) => card.blocked(message));
  return false;
}

/** Navigation links keep the model settings, so /norms?depth=48 leads to /gradients?depth=48; a value is written
 *  when it differs from the target page's own default (Page.defaults), so the model shown stays the same. */
function carryStateToNav(url) {
  const modelSpecs = url.specs.filter((s) => s.model);
  if (!modelSpecs.length) return;
  const schema = pageData.schema?.properties;  // null on pages with their own model specs (e.g. /train)
  const schemaDefaults = schema ? Object.fromEntries(Object.entries(schema).map(([name, p]) => [name, p.default]))
    : Object.fromEntries(modelSpecs.map((s) => [s.name, s.default]));
  document.querySelectorAll('a[data-nav]').forEach((link) => {
    const target = { ...schemaDefaults, ...(pageData.nav_defaults?.[link.dataset.nav] || {}) };
    const specs = modelSpecs.map((s) => ({ ...s, default: target[s.name] }));
    link.href = `${pageData.nav[link.dataset.nav]}${toQuery(specs, url.state, { lang })}`;
  });
}

/** If the old state was a preset, re-apply it at the new depth (DeepNorm's α follows L). */
async function followPreset(presets, state, oldDepth) {
  await presets.load(oldDepth).catch(() => null);
  const key = presets.current({ ...state, depth: oldDepth });
  if (key) presets.url.update(await presets.patchFor(key, state.depth), { push: false });
}

class ChartCard {
  constructor(def, ctx, controls, order) {
    this.def = def;
    this.order = order;   // its place on the page: charts ready together are drawn top first
    this.ctx = ctx;
    this.controls = controls;
    this.element = document.querySelector(`[data-chart="${def.key}"]`);
    this.busy = document.querySelector(`[data-busy="${def.key}"]`);
    this.progressBar = document.querySelector(`[data-progress="${def.key}"]`);
    this.caption = document.querySelector(`[data-caption="${def.key}"]`);
    this.dataKey = null;
    this.data = null;
    this.figure = null;
    this.abort = null;
  }

  async update(state) {
    const key = JSON.stringify(this.def.dataKey ? this.def.dataKey(state, this.ctx) : this.ctx.config(state));
    if (key !== this.dataKey) {
      this.dataKey = key;
      this.abort?.abort();
      this.abort = new AbortController();
      this.pending = this.load(state, this.abort.signal, key);
    }
    const ok = await this.pending;
    if (ok && key === this.dataKey) await this.render(this.data, this.ctx.url.state);
  }

  async load(state, signal, key) {
    const timer = setTimeout(() => { this.busy.hidden = false; }, BUSY_DELAY_MS);
    this.element.setAttribute('aria-busy', 'true');
    const loadCtx = { ...this.ctx, signal,
      progress: (fraction, text) => this.progress(fraction, text),
      partial: (data) => key === this.dataKey && this.render(data, this.ctx.url.state) };
    try {
      const result = await this.def.load(state, loadCtx);
      if (key !== this.dataKey) return false;
      this.data = result;
      clearLoadStatus();
      this.controls.markInvalid([]);
      return true;
    } catch (error) {
      if (error.name === 'AbortError' || key !== this.dataKey) return false;
      this.data = null;
      status(describeError(error, this.ctx.explain), { error: true, fromLoad: true });
      this.controls.markInvalid(error.fields || []);
      return false;
    } finally {
      if (key === this.dataKey) {
        clearTimeout(timer);
        this.busy.hidden = true;
        this.busy.classList.remove('streaming');
        this.progressBar.hidden = true;
        this.element.removeAttribute('aria-busy');
      }
    }
  }

  /** The model was not requested (over the budget): the chart keeps its last good state; a card that never drew
   *  says why instead of its placeholder. */
  blocked(message) {
    if (!this.data && this.caption) this.caption.textContent = message;
  }

  progress(fraction, text) {
    this.busy.hidden = false;
    this.busy.classList.add('streaming');  // a slim bar on top: the chart fills in underneath
    this.progressBar.hidden = false;
    this.progressBar.value = fraction;
    if (text) this.busy.querySelector('.busy-text').textContent = text;
  }

  render(data, state) {
    return drawInTurn(this.order, async () => {
      this.figure = this.def.figure(data, state, this.ctx);
      await charts.draw(this.element, this.figure);
      if (this.caption && this.def.caption) this.caption.textContent = this.def.caption(data, state, this.ctx);
    });
  }

  filename() {
    return `resnorm-${this.def.key}`;
  }

  wireExports() {
    document.querySelectorAll(`[data-export][data-chart-key="${this.def.key}"]`).forEach((button) => {
      button.addEventListener('click', () => this.export(button.dataset.export).catch((error) => status(error.message, { error: true })));
    });
  }

  async export(kind) {
    if (!this.data || !this.figure) return;
    const state = this.ctx.url.state;
    const name = this.filename();
    if (kind === 'png' || kind === 'svg') return save.downloadImage(this.element, this.figure, kind, name);
    if (kind === 'html') {
      return save.downloadHtml(this.figure, { filename: name, title: chartTitle(this.def.key),
        caption: this.caption?.textContent, sourceUrl: window.location.href });
    }
    if (kind === 'embed') return this.copyEmbed();
    try {  // a chart may ask the server for what only an export reads (the heatmap's exact rows)
      if (kind === 'json') return save.downloadJson(this.def.json ? await this.def.json(this.data, state, this.ctx) : this.data, name);
      if (kind === 'csv') return save.downloadCsv(await this.def.table(this.data, state, this.ctx), name);
    } catch (error) {
      status(describeError(error, this.ctx.explain), { error: true });
    }
  }

  async copyEmbed() {
    const snippet = save.embedSnippet(this.def.key, this.ctx.url.query({ lang }), chartTitle(this.def.key));
    const box = document.querySelector(`[data-embed-code="${this.def.key}"]`);
    const area = box.querySelector('textarea');
    area.value = snippet;
    box.hidden = false;
    area.select();
    try {
      await navigator.clipboard.writeText(snippet);
      status(t('controls.copied'));
    } catch {
      status(t('controls.copy_failed'));
    }
  }
}
