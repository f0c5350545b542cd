// How a gradient (or any product of per-layer factors) fared on its trip back through the layers, judged from the
// measured ratio alone, so a caption cannot say "shrinks" under a curve that grows. Used by /gradients and /chain.

export const KEPT_WITHIN = 10;    // a ratio within ×10 of 1 either way: the signal arrives at a usable size
export const EXPLODED_ABOVE = 1e3;

/** 'overflowed' (inf/NaN, null in strict JSON), 'underflowed' (rounded to exactly 0), 'exploded', 'grew', 'faded'
 *  or 'kept'. */
export function verdict(ratio) {
  if (ratio === null || ratio === undefined || Number.isNaN(ratio) || ratio === Infinity) return 'overflowed';
  if (ratio === 0) return 'underflowed';
  if (ratio > EXPLODED_ABOVE) return 'exploded';
  if (ratio > KEPT_WITHIN) return 'grew';
  if (ratio < 1 / KEPT_WITHIN) return 'faded';
  return 'kept';
}

/** The mean factor per step, ratio^(1/steps): the number each layer multiplies by on average (null if unknown). */
export function perStep(ratio, steps) {
  return ratio !== null && Number.isFinite(ratio) && ratio > 0 && steps > 0 ? ratio ** (1 / steps) : null;
}
