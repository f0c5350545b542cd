// The speaker view (a second window: the current and the next slide as thumbnails, the slide's measured numbers to
// read out, notes, elapsed time in all and on this slide) and the channel that keeps it and the deck on the same slide. A BroadcastChannel reaches every window of this deck on this origin (and survives reloads);
// the window that opened the other one is also told directly, which works from a file:// copy too.
import { pageData, t } from '../i18n.js';
import { chartView, plotlyReady } from '../charts.js';
import { viewFor } from './sources.js';
import { drawSlideChart } from './table.js';
import { predictFromUrl } from './deck.js';

const DECK = pageData.extra.deck;
const CHANNEL = 'resnorm-lecture';

export class SyncChannel {
  constructor(onMessage) {
    this.peer = null;   // the speaker window we opened, if any
    this.onMessage = onMessage;
    this.broadcast = typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null;
    this.broadcast?.addEventListener('message', (event) => this.receive(event.data));
    window.addEventListener('message', (event) => {
      if (event.source && (event.source === this.peer || event.source === window.opener)) this.receive(event.data);
    });
  }

  receive(message) {
    if (message && message.channel === CHANNEL && message.lang === pageData.lang) this.onMessage(message);
  }

  post(message) {
    const full = { ...message, channel: CHANNEL, lang: pageData.lang };
    this.broadcast?.postMessage(full);
    for (const target of [this.peer, window.opener]) {
      try {
        if (target && !target.closed) target.postMessage(full, '*');
      } catch { /* a closed or foreign window */ }
    }
  }

  /** Open (or focus) the speaker window for slide `index`. */
  openSpeaker(index) {
    const url = new URL(window.location.href);
    url.searchParams.set('view', 'speaker');
    url.searchParams.set('slide', String(index + 1));
    url.hash = '';
    this.peer = window.open(url.href, 'resnorm-lecture-speaker', 'width=1100,height=720');
    return this.peer;
  }
}

function minutes(seconds) {
  const s = Math.floor(seconds % 60);
  return `${Math.floor(seconds / 60)}:${String(s).padStart(2, '0')}`;
}

/** The caption of slide `index` with the numbers measured now (the deck's own view of it: cached, or baked). */
async function measuredCaption(slide) {
  return (await viewFor(slide)).caption;
}

/** "The shortcut · 6 min planned · slide 1 of 2 here": the section of slide `index` from the agenda slide's plan. */
function sectionLine(index) {
  const agenda = DECK.find((s) => s.agenda)?.agenda;
  const section = agenda?.sections.find((s) => s.key === DECK[index].section);
  if (!section) return '';
  const members = DECK.filter((s) => s.section === section.key);
  return t('lecture.speaker.section', {
    section: section.title[pageData.lang], minutes: section.minutes,
    k: members.indexOf(DECK[index]) + 1, count: members.length,
  });
}

/** A small copy of slide `index` (its markup from this page, its chart drawn again) inside `box`. */
async function thumbnail(box, index) {
  const slide = DECK[index];
  box.replaceChildren();
  box.dataset.slide = slide ? String(index + 1) : '';
  if (!slide) return;
  const copy = document.getElementById(slide.id).cloneNode(true);
  for (const element of [copy, ...copy.querySelectorAll('[id]')]) element.removeAttribute('id');
  copy.classList.add('current', 'revealed');   // the speaker sees the answer of a predict slide
  copy.querySelector('[data-slide-chart]')?.removeAttribute('data-chart');   // not a chart of this page's own
  box.append(copy);
  const view = await viewFor(slide).catch(() => null);
  copy.querySelector('[data-claim]').textContent = view?.caption ?? '';
  if (!slide.chart || !view || view.claim.pending) return;
  await plotlyReady();
  await drawSlideChart(copy.querySelector('[data-slide-chart]'), chartView(view, 'slide'));
}

/** Run this window as the speaker view; `go(index)` moves the deck (and this view) to a slide. */
export function startSpeakerView(initial, channel) {
  document.body.classList.add('speaker-view');
  document.getElementById('speaker').hidden = false;
  let current = initial;
  let started = Date.now();
  let slideStarted = Date.now();
  const show = (index) => {
    const target = Math.max(0, Math.min(DECK.length - 1, index));
    if (target !== current) slideStarted = Date.now();
    current = target;
    const slide = DECK[current], next = DECK[current + 1];
    const lang = pageData.lang;
    document.getElementById('speaker-count').textContent = t('lecture.speaker.count', { n: current + 1, total: DECK.length });
    document.getElementById('speaker-section').textContent = sectionLine(current);
    document.getElementById('speaker-title').textContent = slide.title[lang];
    document.getElementById('speaker-notes').textContent = slide.notes[lang];
    document.getElementById('speaker-next-title').textContent = next ? next.title[lang] : t('lecture.speaker.end');
    document.getElementById('speaker-next-text').textContent = next ? next.text[lang] : '';
    document.body.dataset.slide = String(current + 1);
    const numbers = document.getElementById('speaker-numbers');
    numbers.textContent = '…';
    const shown = current;
    measuredCaption(slide).then((text) => { if (shown === current) numbers.textContent = text; })
      .catch(() => { numbers.textContent = t('lecture.speaker.no_numbers'); });
    thumbnail(document.getElementById('speaker-thumb-now'), current).catch(() => {});
    thumbnail(document.getElementById('speaker-thumb-next'), current + 1).catch(() => {});
    tick();
  };
  const shown = new Set();   // predict slides whose answer the deck shows
  const go = (index) => {
    // forward from a predict slide: the deck shows the answer first (as its own → key does), then moves on
    if (index === current + 1 && DECK[current].predict && predictFromUrl() && !shown.has(current)) {
      shown.add(current);
      channel.post({ type: 'reveal', index: current });
      return;
    }
    show(index);
    channel.post({ type: 'goto', index: current });
  };
  function tick() {
    document.getElementById('speaker-elapsed').textContent = minutes((Date.now() - started) / 1000);
    document.querySelector('#speaker-slide-elapsed b').textContent = minutes((Date.now() - slideStarted) / 1000);
  }
  setInterval(tick, 1000);
  document.getElementById('speaker-reset').addEventListener('click', () => { started = Date.now(); tick(); });
  document.getElementById('speaker-prev').addEventListener('click', () => go(current - 1));
  document.getElementById('speaker-next').addEventListener('click', () => go(current + 1));
  show(initial);
  channel.post({ type: 'hello' });   // the deck answers with the slide it shows
  return { show, go, current: () => current, revealed: (index) => shown.add(index) };
}
