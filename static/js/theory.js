// Theory curves drawn over measured traces; shared by /norms and the lecture deck.

/** The three growth laws fitted to one trace's stream norms (index 0 = the embedding; fitted over blocks 1..L, as
 *  the deck's claims fit them, with fitLaw below), each with its error, and the one the data follow best:
 *  √l (independent increments, Xiong et al. 2020), a line (aligned increments) or the best power (a + c·l)^p.
 *  null when the norms cannot be fitted (fewer than 3 blocks, or a value that is not finite and positive). */
export function growthLaws(norms) {
  if (norms.length < 4 || !norms.every((n) => Number.isFinite(n) && n > 0)) return null;
  const laws = Object.keys(LAWS).map((key) => {
    const fit = fitLaw(norms.slice(1), key);
    return { key, p: fit.p, c: fit.c, slope: fit.c, error: fit.error, curve: [null, ...fit.curve] };
  });
  const best = laws.reduce((a, b) => (b.error < a.error ? b : a));
  return { laws, best };
}

// Growth laws checked against each other: the twin of app/experiments/laws.py (same grid, same formulas).
// (a + c·l)^p through values[l − 1], l = 1..n: a least-squares line through values^(1/p); error = RMS distance.
export const POWER_GRID = Array.from({ length: 176 }, (_, k) => Math.round((0.25 + 0.01 * k) * 100) / 100);
export const LAWS = { sqrt: 0.5, line: 1, power: null };

export function fitPower(values, p) {
  const n = values.length;
  const layers = values.map((_, i) => i + 1);
  const lifted = values.map((v) => Math.max(v, 0) ** (1 / p));
  const meanL = layers.reduce((s, l) => s + l, 0) / n, meanZ = lifted.reduce((s, z) => s + z, 0) / n;
  const spread = layers.reduce((s, l) => s + (l - meanL) ** 2, 0);
  const c = spread ? layers.reduce((s, l, i) => s + (l - meanL) * (lifted[i] - meanZ), 0) / spread : 0;
  const a = meanZ - c * meanL;
  const curve = layers.map((l) => Math.max(a + c * l, 0) ** p);
  const error = Math.sqrt(values.reduce((s, v, i) => s + (v - curve[i]) ** 2, 0) / n);
  return { p, a, c, error, curve };
}

export function bestPower(values) {
  let best = fitPower(values, POWER_GRID[0]);
  for (const p of POWER_GRID.slice(1)) {
    const fit = fitPower(values, p);
    if (fit.error < best.error) best = fit;
  }
  return best;
}

/** law: 'sqrt', 'line' or 'power'; null when a value is missing or not finite. */
export function fitLaw(values, law) {
  if (!values?.length || values.some((v) => v === null || !Number.isFinite(v))) return null;
  return LAWS[law] === null ? bestPower(values) : fitPower(values, LAWS[law]);
}
