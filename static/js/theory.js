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


/** Least-squares line a + b·x through the points (x, y) (the normal equations; the same fit as numpy's polyfit(…, 1)). */
function leastSquaresLine(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((s, v) => s + v, 0) / n, my = ys.reduce((s, v) => s + v, 0) / n;
  let top = 0, bottom = 0;
  xs.forEach((x, i) => { top += (x - mx) * (ys[i] - my); bottom += (x - mx) ** 2; });
  const b = bottom > 0 ? top / bottom : 0;
  return { a: my - b * mx, b };
}

/** ‖x_l‖ ≈ a + b·l: what the stream does when the blocks' updates are aligned and add up like numbers. */
export function fitLine(norms) {
  const layers = norms.map((_, l) => l).slice(1);
  const { a, b } = leastSquaresLine(layers, norms.slice(1));
  return { a, b, curve: norms.map((_, l) => a + b * l) };
}

/** ‖x_l‖ ≈ A·l^p (l ≥ 1): a least-squares line through (log l, log ‖x_l‖); p = 0.5 is √l, p = 1 a line. */
export function fitPower(norms) {
  const layers = norms.map((_, l) => l).slice(1);
  const { a, b } = leastSquaresLine(layers.map(Math.log), norms.slice(1).map(Math.log));
  return { p: b, scale: Math.exp(a), curve: norms.map((_, l) => (l === 0 ? null : Math.exp(a) * l ** b)) };
}

/** Root-mean-square distance between a fitted curve and the measured norms, over layers 1..L. */
function rmsError(curve, norms) {
  const squares = norms.slice(1).map((n, i) => (curve[i + 1] - n) ** 2);
  return Math.sqrt(squares.reduce((s, v) => s + v, 0) / squares.length);
}

/** The three growth laws fitted to one trace, with their errors, and the one the data follow best (smallest error):
 *  √l (independent increments, Xiong et al. 2020), a line (aligned increments), or a fitted power l^p.
 *  null when the norms cannot be fitted (fewer than 3 layers, or a value that is not finite and positive). */
export function growthLaws(norms) {
  if (norms.length < 4 || !norms.every((n) => Number.isFinite(n) && n > 0)) return null;
  const sqrt = fitSqrtGrowth(norms), straight = fitLine(norms), power = fitPower(norms);
  const laws = [
    { key: 'sqrt', curve: sqrt.curve, error: rmsError(sqrt.curve, norms), c: sqrt.c },
    { key: 'line', curve: straight.curve, error: rmsError(straight.curve, norms), slope: straight.b },
    { key: 'power', curve: power.curve, error: rmsError(power.curve, norms), p: power.p },
  ];
  const best = laws.reduce((a, b) => (b.error < a.error ? b : a));
  return { laws, best };
}
