// Show the room: a full-screen panel with this page's address (every setting included) as a QR code and in
// large type. A page opened as localhost cannot know the address phones should use, so it asks /api/room:
// the server's LAN address when it listens on all interfaces, RESNORM_PUBLIC_URL when set (Docker), or a
// warning when it listens on this computer only. The QR code comes from /api/qr (segno, on this server).
import { t } from './i18n.js';

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
let linkFor = async (here) => here;   // the link the panel shows for this page (the deck's follow link: lecture/follow.js)

/** Let a page show another link of its own in the panel: `link(here)` resolves to a URL on this origin. */
export function setRoomLink(link) {
  linkFor = link;
}

/** The address a phone should open for `here` (a URL): same path, query and hash, on a reachable origin. */
export function roomAddress(here, room, origin = null) {
  const base = origin || room?.public_url || (LOOPBACK.test(here.hostname) ? room?.urls?.[0] : null);
  if (!base) return here.href;
  return base.replace(/\/+$/, '') + here.pathname + here.search + here.hash;
}

async function askServer() {
  const response = await fetch('/api/room', { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`/api/room: ${response.status}`);
  return response.json();
}

// How to serve the room (the same in every language; shown as code, never broken inside).
const SERVE_ROOM = ['resnorm-explorer --host 0.0.0.0', 'make run HOST=0.0.0.0'];

/** What to tell the lecturer under the address: [warning (or ''), note]. */
function explain(here, room) {
  if (!room) return ['', t('room.unknown')];
  if (room.public_url) return ['', t('room.public')];
  if (room.loopback_only) return [[t('room.loopback'), SERVE_ROOM], ''];
  if (!LOOPBACK.test(here.hostname)) return ['', t('room.kept')];
  if (!room.urls.length) return [room.in_container ? t('room.container') : t('room.no_address'), ''];
  return [room.in_container ? t('room.container') : '', t('room.lan')];
}

function showText(dialog, address) {
  const url = new URL(address);
  dialog.querySelector('.room-url-base').textContent = url.origin + url.pathname;
  dialog.querySelector('.room-url-query').textContent = url.search + url.hash;
}

function showAddress(dialog, address) {
  showText(dialog, address);
  dialog.dataset.address = address;
  const image = dialog.querySelector('#room-qr');
  image.alt = t('room.qr_alt', { url: address });
  const shown = new Promise((resolve) => {
    image.onload = resolve;
    image.onerror = () => resolve(showWarning(dialog, t('room.too_long')));  // the only 4xx left: too long a link
  });
  image.src = `/api/qr?url=${encodeURIComponent(address)}`;
  image.hidden = false;
  return shown;
}

/** A warning is a text, or [text, commands]: each command on a line of its own as code. */
function showWarning(dialog, message) {
  const [text, commands] = Array.isArray(message) ? message : [message, []];
  const warning = dialog.querySelector('#room-warning');
  const lines = commands.flatMap((command, i) => {
    const code = document.createElement('code');
    code.textContent = command;
    return i ? [document.createElement('br'), `${t('room.or')} `, code] : [document.createElement('br'), code];
  });
  warning.replaceChildren(text, ...lines);
  warning.hidden = !text;
  dialog.classList.toggle('unreachable', Boolean(text));
}

/** Other LAN addresses as buttons: a laptop on Wi-Fi and Ethernet has two, and only one may be the room's. */
function showOthers(dialog, here, room) {
  const box = dialog.querySelector('#room-others');
  const list = box.querySelector('ul');
  const usesLan = room && !room.public_url && LOOPBACK.test(here.hostname);
  const others = usesLan ? room.urls.slice(1) : [];
  list.replaceChildren(...others.map((origin) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = origin;
    button.addEventListener('click', () => showAddress(dialog, roomAddress(here, room, origin)));
    const item = document.createElement('li');
    item.append(button);
    return item;
  }));
  box.hidden = !others.length;
}

async function openRoom(dialog) {
  const here = await linkFor(new URL(window.location.href));  // now: the URL state follows every change of a setting
  dialog.querySelector('#room-note').textContent = t('room.loading');
  showWarning(dialog, '');
  showText(dialog, here.href);
  dialog.querySelector('#room-qr').hidden = true;
  dialog.dataset.ready = '';
  if (!dialog.open) dialog.showModal();
  const room = await askServer().catch(() => null);
  const [warning, note] = explain(here, room);
  showWarning(dialog, warning);
  await showAddress(dialog, roomAddress(here, room));
  dialog.querySelector('#room-note').textContent = note;
  showOthers(dialog, here, room);
  dialog.dataset.ready = '1';
}

/** Wire the header's QR button to the panel; Escape (the dialog's own cancel) and Close shut it. */
export function wireRoom() {
  const dialog = document.getElementById('room');
  const opener = document.getElementById('room-open');
  if (!dialog || !opener || typeof dialog.showModal !== 'function') return;
  opener.addEventListener('click', () => openRoom(dialog));
  dialog.querySelector('#room-close').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => opener.focus());
}
