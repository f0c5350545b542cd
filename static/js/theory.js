// Theory curves drawn over measured traces; shared by /norms and the lecture deck.

/** Pre-LN at init adds roughly independent updates: E‖x_l‖² ≈ ‖x₀‖² + c·l (Xiong et al. 2020, Lemma 2),
 *  so ‖x_l‖ ≈ √(‖x₀‖² + c·l). c is the least-squares slope of ‖x_l‖² − ‖x₀‖² against l on this trace. */
export function fitSqrtGrowth(norms) {
  const base = norms[0] ** 2;
  let top = 0, bottom = 0;
  norms.forEach((n, l) => { if (l > 0 && Number.isFinite(n)) { top += l * (n * n - base); bottom += l * l; } });
  const c = bottom > 0 ? top / bottom : 0;
  return { c, curve: norms.map((_, l) => Math.sqrt(Math.max(0, base + c * l))) };
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
