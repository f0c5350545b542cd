// The static site's lookup keys and nearest views, with no page around them (node runs them in the unit tests):
// a baked answer is found under its request as the fetch layer sends it (app/pages/static_views.py writes the same
// keys), a list several answers share is written once and put back here, and a view that was not baked names the
// baked views with the fewest differing settings.

/** JSON with sorted keys and no spaces; numbers as JSON.stringify writes them. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The key of a request: method, path, query (last value of a repeated name) and body as sent (undefined dropped). */
export function requestKey(method, url, body = null) {
  const parsed = new URL(url, 'http://static.invalid/');
  const query = Object.fromEntries(parsed.searchParams.entries());
  const sent = body === null || body === undefined ? null : JSON.parse(JSON.stringify(body));
  return canonical({ method: method.toUpperCase(), path: parsed.pathname, query, body: sent });
}

/** A key's hash, 8 hex digits: FNV-1a over its UTF-16 code units (app/pages/static_data.py `key_hash`), by which a
 *  page finds the data file of a view it does not carry. */
export function keyHash(key) {
  let value = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    value = Math.imul(value ^ key.charCodeAt(i), 0x01000193) >>> 0;
  }
  return value.toString(16).padStart(8, '0');
}

/** How many of `keys` differ between a URL query ({name: text}) and a baked view's query (a missing key is its
 *  default on both sides). */
export function differing(query, view, keys) {
  return keys.filter((key) => (query[key] ?? null) !== (view.query[key] ?? null)).length;
}

/** Indices of the `limit` baked views nearest to `query` (fewest differing keys; ties in the manifest's order). */
export function nearestViews(views, query, keys, limit = 3) {
  return views.map((view, index) => ({ index, distance: differing(query, view, keys) }))
    .sort((a, b) => a.distance - b.distance || a.index - b.index)
    .slice(0, limit).map((entry) => entry.index);
}

/** A baked answer with its shared lists put back: {"$shared": id} stands for pool[id] (app/pages/static_pages.py
 *  writes one copy of a list several answers carry); each use gets its own copy. */
export function resolveShared(value, pool) {
  if (Array.isArray(value)) return value.map((item) => resolveShared(item, pool));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === '$shared') return structuredClone(pool[value.$shared]);
  return Object.fromEntries(keys.map((key) => [key, resolveShared(value[key], pool)]));
}
