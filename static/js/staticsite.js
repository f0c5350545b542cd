// The static site's fetch layer (`resnorm-explorer site`): a page built there carries its manifest in the page data
// (pageData.static) and its answers in classic scripts (window.RESNORM_ANSWERS: data/<page>.js with the page, each
// other view's data/<page>/<n>.js when first asked for), so it works from any static host and from file://. api.js asks here first; a view that was not baked says so in one line and links
// the nearest baked views of the same page. A copy built with --server bakes nothing: every request goes to that
// explorer server (apiUrl). On the live server pageData.static is absent and nothing here runs.
import { pageData, t, lang } from './i18n.js';
import { keyHash, requestKey, nearestViews, resolveShared } from './viewkeys.js';

const site = pageData.static || null;
const server = site?.server || '';
/** A static copy whose answers are baked into it (not one that asks a server). */
export const isStaticSite = Boolean(site) && !server;

/** Where a page's request goes: this server, or the server a static copy was built to ask. */
export function apiUrl(path) {
  return server + path;
}

/** The address of the page showing one chart alone, for an iframe: the live server's /embed/<chart>, or the
 *  static copy's embed/<chart>.html (its URL state kept, its language the file's). */
export function embedUrl(chartKey, query) {
  if (!site) return `${window.location.origin}/embed/${chartKey}${query}`;
  const params = new URLSearchParams(query);
  params.delete('lang');
  const state = params.toString().replace(/%2C/g, ',');
  return new URL(`${site.embeds[chartKey]}${state ? `?${state}` : ''}`, window.location.href).href;
}

/** A page opened over https may not fetch from an http server (mixed content), loopback excepted: say so. */
function mixedContent() {
  if (window.location.protocol !== 'https:' || !server.startsWith('http:')) return false;
  return !/^(localhost|127(\.\d+){3}|\[::1\])$/.test(new URL(server).hostname);
}
const missedAt = new Set();  // addresses (URL state) where a request was not baked
let queued = false;

/** The baked answer of a request, as {value}, or null (then the notice names the nearest baked views unless quiet). */
export function lookup(method, url, body = null, { quiet = false } = {}) {
  const answers = window.RESNORM_ANSWERS || {};
  const key = requestKey(method, url, body);
  queueNotice();
  if (Object.prototype.hasOwnProperty.call(answers, key)) return { value: resolveShared(answers[key], window.RESNORM_SHARED || {}) };
  if (!quiet) {
    missedAt.add(window.location.href);
    console.info('resnorm static site: not baked:', key);  // the key a build would need, for whoever builds the site
  }
  return null;
}

const loaded = new Map();  // view data file -> Promise of its script having run

/** Run a view's data file (a classic script, so file:// pages can load it too) once. */
function loadData(file) {
  if (!loaded.has(file)) {
    loaded.set(file, new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = `${site.root}${file}`;
      script.onload = resolve;
      script.onerror = () => { loaded.delete(file); reject(new Error(`${file} did not load`)); };
      document.head.append(script);
    }));
  }
  return loaded.get(file);
}

/** lookup(), after loading the data file of the view a request belongs to when the page's own file lacks it (each
 *  view beyond the first has its own file, app/pages/static_data.py, so a page loads only what it shows). */
export async function lookupBaked(method, url, body = null, options = {}) {
  const key = requestKey(method, url, body);
  const file = site?.split?.index[keyHash(key)];
  if (file !== undefined && !Object.prototype.hasOwnProperty.call(window.RESNORM_ANSWERS || {}, key)) {
    await loadData(site.split.files[file]).catch((error) => console.info('resnorm static site:', error.message));
  }
  return lookup(method, url, body, options);
}

function queueNotice() {
  if (queued) return;
  queued = true;
  setTimeout(() => { queued = false; showNotice(); }, 0);
}

function viewName(view) {
  if (view.label) return view.label[lang] ?? view.label.en;
  if (!view.preset) return t('static.default_view');
  const preset = pageData.presets?.presets.find((p) => p.key === view.preset);
  const name = preset ? (lang === 'zh' ? preset.name_zh : preset.name) : view.preset;
  const depth = view.query.depth ?? pageData.defaults?.depth ?? pageData.schema?.properties.depth?.default;
  return depth ? `${name} · L = ${depth}` : name;
}

function viewLink(view) {
  const link = document.createElement('a');
  const query = new URLSearchParams(view.query).toString().replace(/%2C/g, ',');
  link.href = `${site.self}${query ? `?${query}` : ''}`;
  link.textContent = viewName(view);
  return link;
}

/** The line under the status line (which says the view was not baked): the nearest baked views of this page. A page
 *  that needs the server says so on the status line itself, from the start. */
function showNotice() {
  if (server) {
    const node = document.getElementById('static-notice');
    if (node && mixedContent()) {
      node.textContent = t('static.mixed_content', { server });
      node.hidden = false;
    }
    return;
  }
  if (site.server_only) {
    const status = document.getElementById('status');
    if (status && !status.textContent) status.textContent = t('static.needs_server');
    return;
  }
  const node = document.getElementById('static-notice');
  if (!node) return;
  const missing = missedAt.has(window.location.href);
  node.hidden = !missing;
  node.replaceChildren();
  if (!missing) return;
  const query = Object.fromEntries(new URLSearchParams(window.location.search).entries());
  const nearest = nearestViews(site.views, query, site.keys).map((i) => site.views[i]);
  if (!nearest.length) return;
  node.append(t('static.nearest'), ' ');
  nearest.forEach((view, i) => {
    if (i) node.append(t('budget.list_sep'));
    node.append(viewLink(view));
  });
  node.append(t('static.end'));
}

/** The language switch keeps the URL state (the other language is another file). */
function keepStateAcrossLanguages() {
  const link = document.getElementById('lang-switch');
  if (link) link.href = `${link.getAttribute('href').split('?')[0]}${window.location.search}`;
}

if (site) {
  for (const name of ['pushState', 'replaceState']) {
    const original = window.history[name].bind(window.history);
    window.history[name] = (...args) => {
      original(...args);
      queueNotice();
      keepStateAcrossLanguages();
    };
  }
  window.addEventListener('popstate', () => { queueNotice(); keepStateAcrossLanguages(); });
  document.addEventListener('DOMContentLoaded', () => { showNotice(); keepStateAcrossLanguages(); });
  if (document.readyState !== 'loading') { queueNotice(); keepStateAcrossLanguages(); }
}
