/** Small statistics for the report: means over trials, ranks, correlations. Pure functions. */

/** Mean of the defined values; null when there is none. */
export function mean(xs: readonly (number | null | undefined)[]): number | null {
  let s = 0;
  let n = 0;
  for (const x of xs) {
    if (x === null || x === undefined || Number.isNaN(x)) continue;
    s += x;
    n++;
  }
  return n > 0 ? s / n : null;
}

/** Smallest and largest defined value; nulls when there is none. */
export function extent(xs: readonly (number | null | undefined)[]): [number | null, number | null] {
  let lo: number | null = null;
  let hi: number | null = null;
  for (const x of xs) {
    if (x === null || x === undefined || Number.isNaN(x)) continue;
    if (lo === null || x < lo) lo = x;
    if (hi === null || x > hi) hi = x;
  }
  return [lo, hi];
}

/** Ranks 1..n, ties given the mean of the ranks they span (the convention of Spearman's rho). */
export function averageRanks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(xs.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    const rank = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) ranks[order[t][1]] = rank;
    i = j + 1;
  }
  return ranks;
}

/** Pearson correlation; null when fewer than 2 pairs or either side is constant. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length !== ys.length) throw new Error(`pearson: ${xs.length} x values, ${ys.length} y values`);
  const n = xs.length;
  if (n < 2) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx;
    const dy = ys[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return null;
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/** Spearman's rank correlation: Pearson's on average ranks (ties handled); null when undefined. */
export function spearman(xs: readonly number[], ys: readonly number[]): number | null {
  return pearson(averageRanks(xs), averageRanks(ys));
}

/** Mean and standard error of the defined values: se = sd / sqrt(n) with the sample sd (n - 1); null below two values. */
export function meanSe(xs: readonly (number | null | undefined)[]): { mean: number | null; se: number | null; n: number } {
  const v = xs.filter((x): x is number => x !== null && x !== undefined && !Number.isNaN(x));
  const n = v.length;
  if (n === 0) return { mean: null, se: null, n };
  const m = v.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean: m, se: null, n };
  const ss = v.reduce((a, b) => a + (b - m) * (b - m), 0);
  return { mean: m, se: Math.sqrt(ss / (n - 1)) / Math.sqrt(n), n };
}

/** The band mean ± se; nulls when either is undefined (one trial: no band). */
export function seBand(xs: readonly (number | null | undefined)[]): {
  mean: number | null;
  lo: number | null;
  hi: number | null;
  n: number;
} {
  const { mean: m, se, n } = meanSe(xs);
  return { mean: m, lo: m === null || se === null ? null : m - se, hi: m === null || se === null ? null : m + se, n };
}

/** How a band shows the spread over trials: one sample standard deviation, or one standard error (sd / √n). */
export type Spread = 'sd' | 'se';

/** The spreads a report can be asked for, as the option spells them. */
export const SPREADS: readonly Spread[] = ['sd', 'se'];

/** The band mean ± one `spread` (sd or se, the sample sd with n - 1); nulls below two values. */
export function spreadBand(
  xs: readonly (number | null | undefined)[],
  spread: Spread,
): { mean: number | null; lo: number | null; hi: number | null; n: number } {
  const { mean: m, se, n } = meanSe(xs);
  const w = se === null ? null : spread === 'se' ? se : se * Math.sqrt(n);
  return { mean: m, lo: m === null || w === null ? null : m - w, hi: m === null || w === null ? null : m + w, n };
}

/** The words a caption uses for a spread: `one standard deviation` or `one standard error`, with its formula. */
export function spreadWords(spread: Spread): string {
  return spread === 'sd' ? 'one standard deviation (the sample sd, n − 1)' : 'one standard error (SE = sd/√n, the sample sd)';
}

/**
 * Pearson's r with its confidence interval by Fisher's z: z = atanh(r), se = 1/√(n − 3), the interval
 * tanh(z ± z_crit·se) (z_crit 1.959964 for 95%). r null as pearson's; the interval null below n = 4 or at |r| = 1.
 */
export function pearsonFisher(
  xs: readonly number[],
  ys: readonly number[],
): { r: number | null; lo: number | null; hi: number | null; n: number } {
  const n = xs.length;
  const r = pearson(xs, ys);
  if (r === null || n < 4 || Math.abs(r) >= 1) return { r, lo: null, hi: null, n };
  const z = Math.atanh(r);
  const w = 1.959963984540054 / Math.sqrt(n - 3);
  return { r, lo: Math.tanh(z - w), hi: Math.tanh(z + w), n };
}
