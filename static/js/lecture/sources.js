// What a slide shows, built on the server (app/figures/slides.py, GET /api/lecture/slide/<id>): its figure, the
// caption filled with the measured values and the verdict of its checks; in the exported file, the views baked into
// the page. Training runs stream on a key press (/api/train) and are kept in memory once finished; while and after
// they run, the slide's view is built from these recordings (POST). This module holds no chart or caption logic.
import { pageData, lang, t } from '../i18n.js';
import { ApiError, getJSON, postJSON, readNDJSON } from '../api.js';

const baked = pageData.extra.baked || null;     // offline file: {views: {"id" or "id#key": view}}
const views = new Map();                         // URL -> promise of the view
const recordings = new Map();                    // JSON of a training request -> its finished recording
export const offline = Boolean(baked);

/** The view's name: the slide's id, or "id#key" for a "try it" option other than the default. */
function nameOf(slide) {
  return slide.option ? `${slide.id}#${slide.option}` : slide.id;
}

function urlOf(slide) {
  const option = slide.option ? `&option=${encodeURIComponent(slide.option)}` : '';
  return `/api/lecture/slide/${encodeURIComponent(slide.id)}?lang=${lang}${option}`;
}

/** What slide `slide` shows (a deck slide, or one with a "try it" option's chart: `option` set), from the
 *  recordings of its training runs when it has some: {figure, patches, caption, claim: {failed, verdict, ...}}. */
export function viewFor(slide, runs = null) {
  if (baked) return Promise.resolve(baked.views[nameOf(slide)]);
  const sources = slide.chart?.sources || [];
  const given = runs || (slide.chart ? recorded(slide) : []);
  const usable = given.map((r, i) => (sources[i].api === 'train' && r?.runs.length ? sent(r) : null));
  if (usable.some(Boolean)) {   // the client's recordings draw it (not cached: they change while training)
    return postJSON(urlOf(slide), { recordings: usable });
  }
  const url = urlOf(slide);
  if (!views.has(url)) {
    const promise = getJSON(url);
    views.set(url, promise);
    promise.then((view) => { if (view.claim.pending) views.delete(url); }, () => views.delete(url));
  }
  return views.get(url);
}

/** An onProgress for train() that redraws slide `slide` from the newest recordings (drawView(view)) at most every
 *  `ms`, one request at a time; `settled()` is the drawing still under way, if any. */
export function redrawing(slide, drawView, ms = 250) {
  let last = 0;
  let busy = null;
  const progress = (recordings) => {
    if (busy || performance.now() - last < ms) return;
    last = performance.now();
    busy = viewFor(slide, recordings).then(drawView).catch(() => {}).finally(() => { busy = null; });
  };
  progress.settled = () => busy;
  return progress;
}

/** A recording as the server's SlideViewRequest reads it. */
function sent(recording) {
  const { steps, symbols, step, finished, runs } = recording;
  return { steps, symbols, step, finished, runs: runs.map(({ run, steps: s, loss, done }) => ({ run, steps: s, loss, done })) };
}

export function isTrainingSlide(slide) {
  return Boolean(slide.chart?.sources.some((source) => source.api === 'train'));
}

/** Every training source's finished recording of this session, in the order of the sources (null elsewhere). */
function recorded(slide) {
  return slide.chart.sources.map((s) => (s.api === 'train' ? recordings.get(JSON.stringify(s.body)) ?? null : null));
}

// ---- A training run's events, as app/experiments/lecture/demos.recording_from_events builds them ---------------

export function emptyRecording() {
  return { steps: 0, symbols: 0, step: 0, runs: [], finished: false };
}

export function addEvent(recording, event) {
  if (event.type === 'start') {
    recording.steps = event.steps;
    recording.symbols = event.runs[0].config.vocab_size - 1;
    recording.runs = event.runs.map((r) => ({ run: r.run, steps: [], loss: [], done: null }));
  } else if (event.type === 'step') {
    recording.runs[event.run].steps.push(event.step);
    recording.runs[event.run].loss.push(event.loss);
    recording.step = Math.max(recording.step, event.step);
  } else if (event.type === 'done') {
    recording.runs[event.run].done = event;
  } else if (event.type === 'end') {
    recording.finished = true;
  } else if (event.type === 'error') {
    throw new ApiError(500, event);
  }
}

async function postTraining(body, signal, onBusy) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch('/api/train', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body), signal });
    if (response.ok) return response;
    let answer = null;
    try { answer = await response.json(); } catch { /* not JSON */ }
    const retry = Number(response.headers.get('Retry-After') || 2);
    if (response.status !== 429 || attempt >= 5) throw new ApiError(response.status, answer, retry);
    onBusy(retry);   // another training run holds the server's slot: wait for it
    await new Promise((resolve) => setTimeout(resolve, 1000 * retry));
  }
}

/** Train every training source of a slide, one after the other; onProgress(recordings, fraction, text) while it
 *  runs. Resolves to the recordings, in the order of the sources (null for the others). */
export async function train(slide, onProgress, signal) {
  const sources = slide.chart.sources;
  const answers = recorded(slide);
  const total = sources.reduce((sum, s) => sum + (s.api === 'train' ? s.body.steps * s.body.runs.length : 0), 0);
  let done = 0;
  for (const [i, source] of sources.entries()) {
    if (source.api !== 'train' || answers[i]) continue;
    const recording = emptyRecording();
    answers[i] = recording;
    const response = await postTraining(source.body, signal,
      (s) => onProgress(answers, done / total, t('lecture.train_busy', { s })));
    await readNDJSON(response, (event) => {
      addEvent(recording, event);
      if (event.type !== 'step') return;
      const fraction = (done + recording.runs.reduce((sum, run) => sum + run.steps.length, 0)) / total;
      onProgress(answers, fraction, t('lecture.training', { step: event.step, steps: recording.steps }));
    });
    if (!recording.finished) throw new ApiError(500, { error: t('lecture.train_incomplete') });
    done += source.body.steps * source.body.runs.length;
    recordings.set(JSON.stringify(source.body), recording);
  }
  return answers;
}
