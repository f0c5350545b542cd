// What a slide shows, built on the server (app/figures/slides.py, GET /api/lecture/slide/<id>): its figure, the
// caption filled with the measured values and the verdict of its checks; in the exported file, the views baked into
// the page. A training slide trains on a key press: POST /api/lecture/slide/<id>/train streams its progress and its
// view built on the server from the runs so far (the server keeps the finished runs, so GET shows them afterwards).
// This module holds no chart, caption or training-curve logic.
import { pageData, lang, t } from '../i18n.js';
import { ApiError, getJSON, readNDJSON } from '../api.js';

const baked = pageData.extra.baked || null;     // offline file: {views: {"id" or "id#key": view}}
const views = new Map();                         // URL -> promise of the view
export const offline = Boolean(baked);

/** The view's name: the slide's id, or "id#key" for a "try it" option other than the default. */
function nameOf(slide) {
  return slide.option ? `${slide.id}#${slide.option}` : slide.id;
}

function urlOf(slide, action = '') {
  const option = slide.option ? `&option=${encodeURIComponent(slide.option)}` : '';
  return `/api/lecture/slide/${encodeURIComponent(slide.id)}${action}?lang=${lang}${option}`;
}

/** What slide `slide` shows (a deck slide, or one with a "try it" option's chart: `option` set):
 *  {figure, patches, caption, claim: {failed, verdict, pending, ...}}. A training slide not trained yet is pending. */
export function viewFor(slide) {
  if (baked) return Promise.resolve(baked.views[nameOf(slide)]);
  const url = urlOf(slide);
  if (!views.has(url)) {
    const promise = getJSON(url);
    views.set(url, promise);
    promise.then((view) => { if (view.claim.pending) views.delete(url); }, () => views.delete(url));
  }
  return views.get(url);
}

/** drawView for the views a training stream sends: one drawing at a time, the newest view next (the ones that came
 *  meanwhile are skipped); `settled()` is the drawing still under way, if any. */
export function newestFirst(drawView) {
  let busy = null;
  let next = null;
  const go = () => {
    const view = next;
    next = null;
    busy = Promise.resolve(drawView(view)).catch(() => {}).finally(() => {
      busy = null;
      if (next) go();
    });
  };
  const draw = (view) => {
    next = view;
    if (!busy) go();
  };
  draw.settled = async () => { while (busy) await busy; };
  return draw;
}

export function isTrainingSlide(slide) {
  return Boolean(slide.chart?.sources.some((source) => source.api === 'train'));
}

async function postTraining(url, signal, onBusy) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(url, { method: 'POST', signal });
    if (response.ok) return response;
    let answer = null;
    try { answer = await response.json(); } catch { /* not JSON */ }
    const retry = Number(response.headers.get('Retry-After') || 2);
    if (response.status !== 429 || attempt >= 5) throw new ApiError(response.status, answer, retry);
    onBusy(retry);   // another training run holds the server's slot: wait for it
    await new Promise((resolve) => setTimeout(resolve, 1000 * retry));
  }
}

/** Train every training run of a slide on the server (a finished one is replayed): onProgress(fraction, text) and
 *  onView(view) while it trains, as often as the server sends them. Resolves to the final view, which GET
 *  answers from then on. */
export async function train(slide, { onProgress = () => {}, onView = () => {}, signal } = {}) {
  const response = await postTraining(urlOf(slide, '/train'), signal, (s) => onProgress(0, t('lecture.train_busy', { s })));
  let final = null;
  await readNDJSON(response, (message) => {
    if (message.type === 'progress') {
      onProgress(message.fraction, t('lecture.training', { step: message.step, steps: message.steps }));
    } else if (message.type === 'busy') {
      onProgress(message.fraction, t('lecture.train_busy', { s: message.retry_after }));
    } else if (message.type === 'view') {
      onView(message.view);
      if (message.final) final = message.view;
    } else if (message.type === 'error') {
      throw new ApiError(500, message);
    }
  });
  if (!final) throw new ApiError(500, { error: t('lecture.train_incomplete') });
  views.delete(urlOf(slide));   // GET answers the recorded runs from now on
  return final;
}
