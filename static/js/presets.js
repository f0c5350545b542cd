// Named presets (app/config/presets.py's PRESETS via /api/presets?depth=N): apply one, recognise the current one,
// and keep a depth-dependent preset (DeepNorm's α = (2L)^(1/4)) right when the depth changes.
import { lang } from './i18n.js';
import { fetchPresets } from './api.js';
import { sameValue } from './state.js';

export class Presets {
  constructor(payload, url) {
    this.url = url;
    this.byDepth = new Map([[payload.depth, payload]]);
    this.initial = payload;
    fetchPresets(payload.depth, payload);
    // Fields any preset sets: applying a preset resets them to their defaults first.
    this.fields = [...new Set(payload.presets.flatMap((p) => Object.keys(p.config)))];
  }

  list() {
    return this.initial.presets;
  }

  name(preset) {
    return lang === 'zh' ? preset.name_zh : preset.name;
  }

  description(preset) {
    return lang === 'zh' ? preset.description_zh : preset.description;
  }

  async load(depth) {
    if (!this.byDepth.has(depth)) this.byDepth.set(depth, await fetchPresets(depth));
    return this.byDepth.get(depth);
  }

  /** The values that turn `key` on for a depth (state fields only). */
  async patchFor(key, depth) {
    const payload = await this.load(depth);
    const preset = payload.presets.find((p) => p.key === key);
    const patch = {};
    for (const field of this.fields) patch[field] = this.url.spec(field).default;
    return { ...patch, ...preset.config };
  }

  /** The preset the state matches at its depth, or null (custom). */
  current(state = this.url.state) {
    const payload = this.byDepth.get(state.depth);
    if (!payload) return null;
    const match = payload.presets.find((p) => this.fields.every((f) => {
      const spec = this.url.spec(f);
      return sameValue(spec, state[f], f in p.config ? p.config[f] : spec.default);
    }));
    return match ? match.key : null;
  }

  async apply(key) {
    this.url.update(await this.patchFor(key, this.url.state.depth));
  }

  /** Config of a preset on top of a base state (sizes, seed, dtype kept), for /compare. */
  async configFor(key, state) {
    return { ...state, ...(await this.patchFor(key, state.depth)) };
  }
}
