// A "try it" control's typed numbers (app/experiments/lecture/build.py, try_it's `vector`): read the entries, refuse
// what the server would refuse beside them (in the page's language, nothing sent), and write an option's numbers
// back. The option the numbers make, its chart and its checked caption are built on the server.
import { t } from '../i18n.js';

/** The option key of the typed numbers ("8,2,2", as the server writes keys), or null after saying why not. */
export function typedKey(box) {
  const entries = [...box.querySelectorAll('[data-entry]')];
  const min = Number(box.dataset.min), max = Number(box.dataset.max);
  // full-width digits and the Chinese minus sign, as the lesson pages accept them
  const values = entries.map((entry) => Number(entry.value.trim().replace(/[０-９．－]/g,
    (c) => String.fromCharCode(c.charCodeAt(0) - 0xFEE0)).replace(/[−—]/g, '-')));
  const bad = values.some((v, i) => entries[i].value.trim() === '' || !Number.isFinite(v) || v < min || v > max);
  box.querySelector('.field-note')?.remove();
  if (!bad) return values.map(String).join(',');
  const note = document.createElement('span');
  note.className = 'field-note';
  note.setAttribute('role', 'alert');
  note.textContent = t('lecture.try_vector_refused', { length: entries.length, min: box.dataset.min, max: box.dataset.max });
  box.append(note);
  return null;
}

/** Show an option's numbers in the entries (a preset pressed, or the numbers just sent). */
export function showKey(box, key) {
  box.querySelector('.field-note')?.remove();
  const parts = key.split(',');
  const entries = box.querySelectorAll('[data-entry]');
  if (parts.length === entries.length) entries.forEach((entry, i) => { entry.value = parts[i]; });
}
