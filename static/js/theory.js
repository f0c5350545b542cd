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

/** The same law with a free intercept: a least-squares line through ‖x_l‖² against l for the blocks l ≥ 1,
 *  ‖x_l‖² ≈ a + c·l, and R², the share of the squares' variance the line explains (1: exactly √ growth).
 *  app/experiments/lecture/claims.py computes the same R² for the lecture's snowball claim. */
export function fitSquaredGrowth(layers, norms) {
  const points = layers.map((l, i) => [l, norms[i] ** 2]).filter(([l, s]) => l >= 1 && Number.isFinite(s));
  const n = points.length;
  const meanL = points.reduce((sum, [l]) => sum + l, 0) / n;
  const meanS = points.reduce((sum, [, s]) => sum + s, 0) / n;
  const slope = points.reduce((sum, [l, s]) => sum + (l - meanL) * (s - meanS), 0)
    / points.reduce((sum, [l]) => sum + (l - meanL) ** 2, 0);
  const intercept = meanS - slope * meanL;
  const residual = points.reduce((sum, [l, s]) => sum + (s - intercept - slope * l) ** 2, 0);
  const total = points.reduce((sum, [, s]) => sum + (s - meanS) ** 2, 0);
  return { a: intercept, c: slope, r2: total > 0 ? 1 - residual / total : 1,
    curve: layers.map((l) => Math.sqrt(Math.max(0, intercept + slope * l))) };
}
