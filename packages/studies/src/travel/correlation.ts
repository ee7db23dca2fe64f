/**
 * Pearson's r with its 95% confidence interval by Fisher's z transform, for the travel study's predictive-validity
 * analysis (Hallucination as Context Drift 5.3: CDS_sys (max) against HR, r = -0.03 in no-sync).
 */

/** 97.5th percentile of the standard normal. */
const Z975 = 1.959963984540054;

export interface Correlation {
  /** Pairs with both values. */
  n: number;
  r: number | null;
  /** tanh(atanh(r) -/+ 1.96 / sqrt(n - 3)); null below 4 pairs or where r is +-1 or undefined. */
  lo: number | null;
  hi: number | null;
  /** Why r (or its interval) is undefined, in words; null when both are defined. */
  note: string | null;
}

/** Pearson's r of the pairs where both values are numbers, with its Fisher-z 95% interval. */
export function pearsonCi(pairs: readonly (readonly [number | null, number | null])[]): Correlation {
  const both = pairs.filter((p): p is [number, number] => p[0] !== null && p[1] !== null);
  const n = both.length;
  if (n < 2) return { n, r: null, lo: null, hi: null, note: 'fewer than two trials with both values' };
  const mx = both.reduce((s, p) => s + p[0], 0) / n;
  const my = both.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of both) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  if (sxx === 0 || syy === 0) return { n, r: null, lo: null, hi: null, note: `${sxx === 0 ? 'CDS_sys' : 'HR'} is the same in every trial` };
  const r = Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
  if (n < 4) return { n, r, lo: null, hi: null, note: 'the interval needs at least four trials' };
  if (Math.abs(r) === 1) return { n, r, lo: null, hi: null, note: 'r is ±1: no interval' };
  const z = Math.atanh(r);
  const half = Z975 / Math.sqrt(n - 3);
  return { n, r, lo: Math.tanh(z - half), hi: Math.tanh(z + half), note: null };
}
