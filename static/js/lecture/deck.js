// The slide deck: which slide is on screen (kept in the URL), the keys a presentation clicker sends, full screen,
// the 16:9 stage scaled to the window, and drawing each slide's chart with its measured caption, both built on the
// server (sources.js: viewFor). After the first chart every other slide is drawn in the background, so moving on is
// instant and printing shows every chart.
import { pageData, t } from '../i18n.js';
import { describeError } from '../api.js';
import { chartView, plotlyReady } from '../charts.js';
import { fitEquations } from '../legible.js';
import { isTrainingSlide, newestFirst, offline, train, viewFor } from './sources.js';
import { drawSlideChart } from './table.js';
import { sayFollowNeedsServer, wireFollow } from './follow.js';
import { showKey, typedKey } from './typed.js';

const DECK = pageData.extra.deck;
const STAGE = { width: 1280, height: 720 };
// Narrow or portrait windows (phones, tablets held upright) show one slide at its natural size, as a page with the
// site header; landscape screens (projectors, laptops, a phone turned sideways) get the scaled 16:9 stage.
const FLOW_BELOW = 700;
const SWIPE_PX = 60;
const NEXT = ['ArrowRight', 'ArrowDown', 'PageDown', ' ', 'Enter', 'n'];
const PREVIOUS = ['ArrowLeft', 'ArrowUp', 'PageUp', 'Backspace', 'p'];

/** The slide a URL points at: ?slide=N (1-based), else #id, else the first. */
export function slideFromUrl(location = window.location) {
  const number = Number(new URLSearchParams(location.search).get('slide'));
  if (Number.isInteger(number) && number >= 1 && number <= DECK.length) return number - 1;
  const byId = DECK.findIndex((s) => `#${s.id}` === decodeURIComponent(location.hash));
  return Math.max(0, byId);
}

/** ?predict=off: every answer at once (self-study, a handout); otherwise a predict slide asks first. */
export function predictFromUrl() {
  return new URLSearchParams(window.location.search).get('predict') !== 'off';
}

export function themeFromUrl() {
  return new URLSearchParams(window.location.search).get('theme') === 'normal' ? 'normal' : 'slide';
}

/** A chart's "open in the explorer" link: a static site's own page in this language (extra.pages), else the page
 *  on the server the link already points at. */
function explorerHref(target, current) {
  const [path, query] = target.split('?');
  const pages = pageData.extra.pages;
  if (pages) return `${pages[path]}${query ? `?${query}` : ''}`;
  return `${new URL(current).origin}${target}${query ? '&' : '?'}lang=${pageData.lang}`;
}

export class Deck {
  constructor(channel) {
    this.channel = channel;
    this.sections = [...document.querySelectorAll('.slide')];
    this.theme = themeFromUrl();
    this.current = -1;
    this.drawn = new Map();     // slide index -> promise of its drawing
    this.training = new Map();  // slide index -> running training promise
    this.revealed = new Set();  // indexes of predict slides whose answer is on screen
    this.choice = new Map();    // slide index -> the key of the "try it" option on screen
    this.pending = new Set();   // indexes of training slides not trained yet (on this server, or in this session)
    this.predict = predictFromUrl();
    if (!this.predict) DECK.forEach((s, i) => { if (s.predict) this.reveal(i, { broadcast: false }); });
  }

  /** Whether slide i still hides its answer behind its question (predict, then reveal). */
  asking(i) {
    return this.predict && Boolean(DECK[i]?.predict) && !this.revealed.has(i);
  }

  /** Show slide i's answer: its text, chart and caption. Told to the speaker view unless it came from there. */
  reveal(i, { broadcast = true } = {}) {
    if (!DECK[i]?.predict || this.revealed.has(i) || !this.sections[i]) return;
    this.revealed.add(i);
    this.sections[i].classList.add('revealed');
    if (broadcast) this.channel.post({ type: 'reveal', index: i });
  }

  /** Slide i as shown: the chart and claim of its chosen "try it" option in place of its own (the default); typed
   *  numbers (try_it.vector) are an option the server builds, linked to the explorer with those numbers. */
  view(i) {
    const slide = DECK[i];
    const key = this.choice.get(i);
    const option = slide.try_it?.options.find((o) => o.key === key);
    if (key === undefined || key === slide.try_it?.default) return slide;
    if (option) return { ...slide, chart: option.chart, claim: option.claim, option: key };
    if (!slide.try_it?.vector) return slide;
    return { ...slide, chart: { ...slide.chart, explorer: `${slide.try_it.vector.explorer}${key}` }, option: key };
  }

  /** Try it: show option `key` of slide i, computed live (or recorded, in the offline file). */
  choose(i, key) {
    this.choice.set(i, key);
    this.sections[i].querySelectorAll('[data-try]').forEach((button) => {
      button.setAttribute('aria-pressed', String(button.dataset.option === key));
    });
    const typed = this.sections[i].querySelector('[data-try-vector]');
    if (typed) showKey(typed, key);
    const chart = this.view(i).chart;
    const settings = this.sections[i].querySelector('.settings');
    if (settings) settings.textContent = chart.settings[pageData.lang];
    const explorer = this.sections[i].querySelector('a.explorer');
    if (explorer) explorer.href = explorerHref(chart.explorer, explorer.href);
    return this.redraw(i);
  }

  /** Forward: the answer of a predict slide first, then the next slide. */
  next() {
    if (this.asking(this.current)) this.reveal(this.current);
    else this.show(this.current + 1);
  }

  /** The ‹ QR › buttons show while the mouse moves and for 2.5 s after (lecture.css hides them over the footer). */
  wakeOnPointer() {
    let timer = 0;
    document.addEventListener('mousemove', () => {
      document.body.classList.add('pointer-awake');
      window.clearTimeout(timer);
      timer = window.setTimeout(() => document.body.classList.remove('pointer-awake'), 2500);
    }, { passive: true });
  }

  start() {
    this.fit();
    window.addEventListener('resize', () => this.fit());
    document.addEventListener('keydown', (event) => this.onKey(event));
    window.addEventListener('hashchange', () => this.show(slideFromUrl({ search: '', hash: window.location.hash })));
    this.wireTouch();
    this.wakeOnPointer();
    document.querySelectorAll('[data-try]').forEach((button) => button.addEventListener('click', () => {
      this.choose(DECK.findIndex((s) => s.id === button.dataset.try), button.dataset.option);
    }));
    document.querySelectorAll('[data-try-vector]').forEach((box) => this.wireTyped(box));
    document.querySelectorAll('[data-reveal]').forEach((button) => button.addEventListener('click', () => {
      this.reveal(DECK.findIndex((s) => s.id === button.dataset.reveal));
    }));
    document.querySelectorAll('[data-train-start]').forEach((button) => button.addEventListener('click', () => {
      this.startTraining(DECK.findIndex((s) => s.id === button.dataset.trainStart));
    }));
    const first = this.show(slideFromUrl());
    wireFollow(this);   // phones follow this deck, or this phone follows a lecturer's (follow.js)
    first.then(() => {
      performance.mark('lecture-first-chart');
      this.drawAll();
    });
    return first;
  }

  /** Typed numbers: Apply (or Enter in an entry) shows the option they make, computed on the server. */
  wireTyped(box) {
    const i = DECK.findIndex((s) => s.id === box.dataset.tryVector);
    const send = () => {
      const key = typedKey(box);
      if (key !== null) this.choose(i, key);
    };
    box.querySelector('[data-try-apply]').addEventListener('click', send);
    box.addEventListener('keydown', (event) => { if (event.key === 'Enter' && event.target.matches('[data-entry]')) send(); });
  }

  /** Scale the 1280x720 stage to the window (letterboxed), or let a phone-sized window flow. */
  fit() {
    const flow = window.innerWidth < FLOW_BELOW || window.innerHeight > window.innerWidth;
    document.body.classList.toggle('flow', flow);
    const scale = flow ? 1 : Math.min(window.innerWidth / STAGE.width, window.innerHeight / STAGE.height);
    document.getElementById('stage').style.setProperty('--scale', String(scale));
    const changed = this.flow !== undefined && flow !== this.flow;
    this.flow = flow;
    if (changed) [...this.drawn.keys()].forEach((i) => this.redraw(i));   // the other chart size and theme
    fitEquations(document);   // an equation line never breaks mid-expression (legible.js)
    document.fonts?.ready.then(() => fitEquations(document));
  }

  /** Slide-sized chart text on the 16:9 stage; the explorer's normal sizes when a phone shows the slide at its width. */
  chartTheme() {
    return this.flow ? 'normal' : this.theme;
  }

  async show(index, { broadcast = true } = {}) {
    const next = Math.max(0, Math.min(DECK.length - 1, index));
    if (next !== this.current) {
      this.sections.forEach((section, i) => {
        section.classList.toggle('current', i === next);
        section.setAttribute('aria-hidden', String(i !== next));
      });
      this.current = next;
      this.writeUrl();
      document.body.dataset.slide = String(next + 1);
      if (broadcast) this.channel.post({ type: 'slide', index: next });
    }
    await this.drawSlide(next);
  }

  writeUrl() {
    const params = new URLSearchParams(window.location.search);
    params.set('slide', String(this.current + 1));
    window.history.replaceState(null, '', `${window.location.pathname}?${params}#${DECK[this.current].id}`);
    const other = document.getElementById('lang-switch');   // the other language, on the same slide
    if (other) {
      params.set('lang', other.hreflang);
      other.href = `${window.location.pathname}?${params}`;
    }
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.target.closest?.('input, textarea, select')) return;
    if (document.getElementById('room')?.open) return;   // the QR panel is a modal dialog: Esc closes it, not the deck
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if ((key === 'Enter' || key === ' ') && event.target.closest?.('button, a')) return;   // let buttons and links work
    const actions = {
      Home: () => this.show(0), End: () => this.show(DECK.length - 1),
      f: () => toggleFullScreen(), s: () => this.channel.openSpeaker(this.current), q: () => openRoom(),
      t: () => this.startTraining(this.current), '?': () => toggleHelp(), Escape: () => toggleHelp(false),
    };
    let action = actions[key];
    if (NEXT.includes(key)) action = () => (event.shiftKey && key === ' ' ? this.show(this.current - 1) : this.next());
    if (PREVIOUS.includes(key)) action = () => this.show(this.current - 1);
    if (!action) return;
    event.preventDefault();
    action();
  }

  /** The ‹ QR › buttons (shown on touch screens and phones, faint on a projector) and a horizontal swipe. */
  wireTouch() {
    document.querySelector('[data-deck-prev]')?.addEventListener('click', () => this.show(this.current - 1));
    document.querySelector('[data-deck-next]')?.addEventListener('click', () => this.next());
    document.querySelector('[data-deck-qr]')?.addEventListener('click', () => openRoom());
    let start = null;
    const deck = document.getElementById('deck');
    deck.addEventListener('touchstart', (event) => {
      const touch = event.changedTouches[0];
      start = event.touches.length === 1 ? { x: touch.clientX, y: touch.clientY } : null;
    }, { passive: true });
    deck.addEventListener('touchend', (event) => {
      if (!start) return;
      const touch = event.changedTouches[0];
      const dx = touch.clientX - start.x, dy = touch.clientY - start.y;
      start = null;
      // a deliberate sideways swipe, not a vertical scroll of a phone's flowing slide or a tap
      if (Math.abs(dx) >= SWIPE_PX && Math.abs(dx) > 2 * Math.abs(dy)) {
        if (dx < 0) this.next();
        else this.show(this.current - 1);
      }
    }, { passive: true });
  }

  /** Draw slide i once (its chart, caption and check mark); later calls return the same promise. */
  drawSlide(i) {
    if (!this.drawn.has(i)) this.drawn.set(i, this.render(i).catch((error) => this.fail(i, error)));
    return this.drawn.get(i);
  }

  redraw(i) {
    this.drawn.delete(i);
    return this.drawSlide(i);
  }

  async drawAll() {
    const order = Array.from({ length: DECK.length - 1 }, (_, k) => (this.current + 1 + k) % DECK.length);
    // two slides at a time, the next ones first: the server computes one slide's answers one after another, and a
    // 2-core laptop has a compute slot for each core
    const next = () => (order.length ? this.drawSlide(order.shift()).then(next) : Promise.resolve());
    await Promise.all([next(), next()]);
    document.body.dataset.allDrawn = '1';
  }

  async render(i, view = null) {
    const slide = this.view(i);
    view = view || await viewFor(slide);
    this.captionText(i, view);   // first: the chart is laid out beside the caption it will have
    if (slide.chart) {
      await plotlyReady();
      await drawSlideChart(this.sections[i].querySelector('[data-slide-chart]'), this.figure(view));
    }
    if (isTrainingSlide(slide)) {
      this.pending[view.claim.pending ? 'add' : 'delete'](i);
      this.trainingState(i, view.claim.pending ? 'idle' : 'done');
    }
    this.caption(i, view);
  }

  /** A view's figure in this screen's theme (the slide patch on the 16:9 stage). */
  figure(view) {
    return chartView(view, ...(this.chartTheme() === 'slide' ? ['slide'] : []));
  }

  /** The caption the server filled with the measured values, and the verdict of its checks (none while pending). */
  caption(i, view) {
    const { claim } = view;
    this.captionText(i, view);
    const mark = this.sections[i].querySelector('[data-check]');
    mark.textContent = claim.verdict;   // a slide that measures nothing claims no ✓
    mark.classList.toggle('failed', claim.failed.length > 0);
    if (claim.pending) delete this.sections[i].dataset.claimChecked;
    else this.sections[i].dataset.claimChecked = claim.failed.length ? 'failed' : 'ok';
  }

  captionText(i, view) {
    this.sections[i].querySelector('[data-claim]').textContent = view.caption;
  }

  fail(i, error) {
    this.sections[i].querySelector('[data-claim]').textContent = describeError(error);
    this.drawn.delete(i);   // try again next time the slide is shown
  }

  /** T or the button: train slide i's runs on the server, its chart following their losses. */
  startTraining(i) {
    const slide = DECK[i];
    if (!slide || !isTrainingSlide(slide) || offline || this.training.has(i)) return undefined;
    const run = this.trainSlide(i).catch((error) => this.trainingState(i, 'idle', 0, describeError(error)))
      .finally(() => this.training.delete(i));
    this.training.set(i, run);
    return run;
  }

  async trainSlide(i) {
    const slide = DECK[i];
    await this.drawSlide(i);   // the server may have trained it already (a rehearsal): then there is nothing to run
    if (!this.pending.has(i)) return;
    this.trainingState(i, 'running');
    this.sections[i].querySelector('[data-claim]').textContent = t('lecture.train_running');
    const chart = this.sections[i].querySelector('[data-slide-chart]');
    const onView = newestFirst((view) => drawSlideChart(chart, this.figure(view)));
    const final = await train(slide, {
      onProgress: (fraction, text) => this.trainingState(i, 'running', fraction, text),
      onView,
    });
    await onView.settled();
    this.drawn.set(i, this.render(i, final));
    await this.drawn.get(i);
  }

  trainingState(i, state, fraction = 0, text = '') {
    const id = DECK[i].id;
    const button = document.querySelector(`[data-train-start="${id}"]`);
    const bar = document.querySelector(`[data-train-progress="${id}"]`);
    button.hidden = state !== 'idle';
    bar.hidden = state !== 'running';
    bar.value = fraction;
    const done = offline ? t('lecture.recorded') : t('lecture.train_done');
    document.querySelector(`[data-train-status="${id}"]`).textContent = state === 'done' ? done : text;
    this.sections[i].dataset.training = state;
  }
}

/** The room panel (templates/_room.html, static/js/room.js): the site header's QR button opens it, also when hidden.
 *  The offline file has neither the panel nor a server to follow: Q says so on the status line. */
function openRoom() {
  const opener = document.getElementById('room-open');
  if (opener) opener.click();
  else sayFollowNeedsServer();
}

function toggleFullScreen() {
  if (document.fullscreenElement) document.exitFullscreen?.();
  else document.documentElement.requestFullscreen?.().catch(() => {});
}

function toggleHelp(open) {
  const help = document.getElementById('help');
  help.hidden = open === undefined ? !help.hidden : !open;
}
