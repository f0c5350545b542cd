// The page chrome every page shares (templates/base.html; embeds have none): the navigation folds behind a menu
// button unless its links fit on one line, on narrow screens the settings fold behind a "Settings" toggle, and the
// QR button opens the room panel.
// Loaded beside the page's own module, so a page that draws nothing still gets its menu.
import { wireRoom } from './room.js';

/** A button that shows and hides something (the WAI-ARIA disclosure pattern): show(open) does it; returns set(open). */
function disclosure(button, show) {
  const set = (open) => {
    button.setAttribute('aria-expanded', String(open));
    show(open);
  };
  button.addEventListener('click', () => set(button.getAttribute('aria-expanded') !== 'true'));
  return set;
}

/** Show the links in the header when they fit on one line (measured, in this language), with the QR button's
 *  label if there is room for it too, then closer together; else fold them behind the menu button. */
function fitNavigation(header, closeMenu) {
  const fits = (...classes) => {
    header.classList.remove('roomy', 'compact', 'tight');
    header.classList.add(...classes);
    return header.scrollWidth <= header.clientWidth;
  };
  const measure = () => {
    if (fits('roomy') || fits('roomy', 'compact') || fits('roomy', 'compact', 'tight')) closeMenu();
    else header.classList.remove('roomy', 'compact', 'tight');
  };
  let frame = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(measure);
  });
  // in the first frame, not now: reading the header's width would lay out the whole page before the charts do
  requestAnimationFrame(() => {
    measure();
    document.fonts?.ready.then(measure);
  });
}

function wireMenu() {
  const button = document.getElementById('menu-toggle');
  const nav = document.getElementById('site-nav');
  if (!button || !nav) return;
  const set = disclosure(button, (open) => { nav.dataset.open = String(open); });
  fitNavigation(button.closest('header'), () => set(false));
  const isOpen = () => button.getAttribute('aria-expanded') === 'true';
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !isOpen() || document.querySelector('dialog[open]')) return;
    set(false);
    button.focus();
  });
  // A tap or click anywhere else closes the menu (not on focus loss: on touch screens that fires before the link's click).
  document.addEventListener('click', (event) => {
    if (isOpen() && !button.contains(event.target) && !nav.contains(event.target)) set(false);
  });
}

function wireSettings() {
  const button = document.getElementById('settings-toggle');
  const panel = document.getElementById('controls');
  if (button && panel) disclosure(button, (open) => { panel.dataset.folded = String(!open); });
}

wireMenu();
wireSettings();
wireRoom();
