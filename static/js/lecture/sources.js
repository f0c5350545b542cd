// Where a slide's numbers come from: the live API (traces and lessons cached for the session, training streamed
// on a key press and kept in memory once finished), or, in the exported file, the answers baked into the page.
import { pageData, t } from '../i18n.js';
import { ApiError, fetchTrace, getJSON, postJSON, readNDJSON } from '../api.js';

const baked = pageData.extra.baked || null;     // offline file: {answers: [...], slides: {id: [answer index, ...]}}
const lessons = new Map();                       // GET URL or POST body -> promise of the answer
const recordings = new Map();                    // JSON of a training request -> its finished recording
export const offline = Boolean(baked);

function remembered(key, make) {
  if (!lessons.has(key)) {
    const promise = make();
    lessons.set(key, promise);
    promise.catch(() => lessons.delete(key));
  }
  return lessons.get(key);
}

function queryString(params) {
  return new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
}

/** One source's answer from the live API; a training source answers only once it has been trained (else null). */
export function loadSource(source) {
  if (source.api === 'trace') return fetchTrace(source.body);
  if (source.api === 'train') return Promise.resolve(recordings.get(JSON.stringify(source.body)) ?? null);
  if (source.query) {
    const url = `/api/${source.api}?${queryString(source.query)}`;
    return remembered(url, () => getJSON(url));
  }
  return remembered(`${source.api} ${JSON.stringify(source.body)}`, () => postJSON(`/api/${source.api}`, source.body));
}

/** Every answer a slide needs, in the order of its sources. */
export function answersFor(slide) {
  if (baked) {
    return Promise.resolve(baked.slides[slide.baked || slide.id].map((i) => {   // a "try it" option: "id#key"
      const answer = baked.answers[i];
      return Array.isArray(answer) ? recordingFrom(answer) : answer;   // training: its recorded NDJSON events
    }));
  }
  return Promise.all(slide.chart.sources.map(loadSource));
}

export function isTrainingSlide(slide) {
  return Boolean(slide.chart?.sources.some((source) => source.api === 'train'));
}

/** Trained already (in this session, or recorded into the offline file)? */
export function trained(slide) {
  return offline || slide.chart.sources.every((s) => s.api !== 'train' || recordings.has(JSON.stringify(s.body)));
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

export function recordingFrom(events) {
  const recording = emptyRecording();
  events.forEach((event) => addEvent(recording, event));
  return recording;
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

/** Train every training source of a slide, one after the other; onProgress(answers, fraction, text) while it runs. */
export async function train(slide, onProgress, signal) {
  const sources = slide.chart.sources;
  const answers = await Promise.all(sources.map(loadSource));
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
