// Follow the lecturer (docs/lecture.md, "Students follow the slides"). The lecturer's deck opens a follow session
// from the QR panel and sends every slide it shows; the panel's QR code becomes the follow link (?follow=ROOM). A
// phone that opens that link listens to server-sent events (/api/follow/ROOM/events) and shows the same slide. The
// presenter key lives in this tab's sessionStorage only: the link carries no key, so no phone can drive the deck.
import { t } from '../i18n.js';
import { setRoomLink } from '../room.js';

const STORED = 'resnorm-follow';
const SILENCE_MS = 40000;   // the server sends a ping every 15 s: this long without a word, the link is dead
const RETRY_MS = [1000, 2000, 5000, 10000];
const RESEND_MS = 1000;

function storedSession() {
  try {
    return JSON.parse(sessionStorage.getItem(STORED) || 'null');
  } catch {
    return null;
  }
}

async function ask(method, url, body) {
  const response = await fetch(url, {
    method, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(body),
  });
  if (!response.ok) throw Object.assign(new Error(`${url}: ${response.status}`), { status: response.status });
  return response.json();
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** The lecturer's side: the panel's button opens a session; then every slide shown is sent, newest first. */
class Presenter {
  constructor(deck) {
    this.deck = deck;
    this.session = storedSession();
    this.sending = false;
    this.sent = null;
  }

  wire() {
    const box = document.getElementById('room-follow');
    if (!box) return;
    box.hidden = false;
    document.getElementById('room-follow-start').addEventListener('click', () => this.toggle());
    setRoomLink(async (here) => (this.session ? this.link(here) : here));
    new MutationObserver(() => this.send()).observe(document.body, { attributeFilter: ['data-slide'] });
    this.showState();
    this.send();
  }

  link(here) {
    const url = new URL(here.pathname, here.origin);
    url.searchParams.set('follow', this.session.room);
    url.searchParams.set('lang', document.documentElement.lang.startsWith('zh') ? 'zh' : 'en');
    return url;
  }

  async toggle() {
    if (this.session) this.forget();
    else {
      this.session = await ask('POST', '/api/follow', { slide: Math.max(0, this.deck.current) }).catch(() => null);
      if (this.session) sessionStorage.setItem(STORED, JSON.stringify(this.session));
      this.sent = this.deck.current;
    }
    this.showState();
    document.getElementById('room-open')?.click();   // the panel again, with the link it should show now
  }

  forget() {
    this.session = null;
    sessionStorage.removeItem(STORED);
    this.showState();
  }

  showState() {
    const button = document.getElementById('room-follow-start');
    const key = document.getElementById('room-follow-key');
    button.textContent = t(this.session ? 'follow.stop' : 'follow.start');
    button.setAttribute('aria-pressed', String(Boolean(this.session)));
    key.hidden = !this.session;
    key.textContent = this.session ? t('follow.key', { key: this.session.key }) : '';
    document.body.dataset.followRoom = this.session?.room || '';
  }

  /** One request at a time, always the slide shown now: a burst of key presses sends the last one. */
  async send() {
    if (this.sending) return;
    this.sending = true;
    while (this.session && this.sent !== this.deck.current) {
      const slide = this.deck.current, { room, key } = this.session;
      try {
        await ask('PUT', `/api/follow/${room}`, { key, slide });
        this.sent = slide;
      } catch (error) {
        if (error.status === 404 || error.status === 403) this.forget();   // forgotten by the server: start again
        else await sleep(RESEND_MS);
      }
    }
    this.sending = false;
  }
}

/** A phone's side: the slide the lecturer shows, live; reconnects after sleep, a Wi-Fi change or a dead link. */
class Follower {
  constructor(deck, room) {
    this.deck = deck;
    this.room = room;
    this.source = null;
    this.heard = 0;
    this.failures = 0;
  }

  wire() {
    this.bar = this.makeBar();
    this.connect();
    // A phone that slept or changed networks may hold a connection that is silently gone: a fresh one costs little.
    document.addEventListener('visibilitychange', () => { if (!document.hidden) this.connect(); });
    window.addEventListener('online', () => this.connect());
    this.watchdog = setInterval(() => {
      if (this.source && Date.now() - this.heard > SILENCE_MS) this.connect();
    }, SILENCE_MS / 4);
  }

  makeBar() {
    const bar = document.createElement('div');
    bar.className = 'follow-bar';
    bar.id = 'follow-bar';
    bar.setAttribute('role', 'status');
    const text = document.createElement('span');
    const stop = document.createElement('button');
    stop.type = 'button';
    stop.textContent = t('follow.leave');
    stop.addEventListener('click', () => this.leave());
    bar.append(text, stop);
    document.getElementById('deck').before(bar);
    return bar;
  }

  state(name, values = {}) {
    document.body.dataset.follow = name;
    this.bar.querySelector('span').textContent = t(`follow.${name}`, values);
  }

  connect() {
    this.source?.close();
    this.heard = Date.now();
    this.state('connecting');
    const source = new EventSource(`/api/follow/${encodeURIComponent(this.room)}/events`);
    this.source = source;
    source.addEventListener('slide', (event) => {
      const { slide } = JSON.parse(event.data);
      this.heard = Date.now();
      this.failures = 0;
      this.deck.show(slide, { broadcast: false });
      this.state('following', { n: slide + 1 });
    });
    source.addEventListener('ping', () => { this.heard = Date.now(); });
    source.addEventListener('error', () => {
      if (source !== this.source) return;
      this.state('reconnecting');
      if (source.readyState === EventSource.CLOSED) this.retry(source);   // else the browser reconnects itself
    });
  }

  /** The server refused the stream (restarting, busy, or the session is gone): ask which, then wait and retry. */
  async retry(source) {
    const response = await fetch(`/api/follow/${encodeURIComponent(this.room)}`).catch(() => null);
    if (source !== this.source) return;
    if (response?.status === 404 || response?.status === 422) {
      this.stop();
      this.state('ended');
      return;
    }
    await sleep(RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]);
    this.failures += 1;
    if (source === this.source) this.connect();
  }

  stop() {
    this.source?.close();
    this.source = null;
    clearInterval(this.watchdog);
  }

  leave() {
    this.stop();
    this.bar.remove();
    delete document.body.dataset.follow;
    const url = new URL(window.location.href);
    url.searchParams.delete('follow');
    window.history.replaceState(null, '', url.href);
  }
}

/** The offline file (a static site's deck too) has no server to follow nor a room panel: the status line says so. */
export function sayFollowNeedsServer() {
  const status = document.getElementById('status');
  if (status) status.textContent = t('lecture.follow_offline');
}

/** Called once by the deck: a phone that opened a follow link follows; any other deck can be followed. */
export function wireFollow(deck) {
  const room = new URLSearchParams(window.location.search).get('follow');
  const served = !document.body.classList.contains('offline');   // the offline file has no server to follow
  if (!served && room) sayFollowNeedsServer();   // a follow link that reached a copy of the deck
  if (!served || typeof EventSource !== 'function') return null;
  const role = room ? new Follower(deck, room) : new Presenter(deck);
  role.wire();
  return role;
}
