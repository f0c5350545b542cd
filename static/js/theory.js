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

