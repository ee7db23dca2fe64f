import { rngFrom } from '../rng.js';

/** A bootstrap's spread of an estimate: standard error and the 95% percentile interval. */
export interface BootstrapInterval {
  se: number;
  lo: number;
  hi: number;
  /** Resamples whose estimate was defined (the others are left out). */
  resamples: number;
}

/** Resamples a bootstrap draws unless told otherwise. */
export const BOOTSTRAP_RESAMPLES = 200;

/**
 * Bootstrap over trials: `resamples` draws of K trials with replacement from the K given, from the seeded
 * stream rngFrom(seed, 'bootstrap'), so the interval is a function of the data and the seed. The estimate is
 * recomputed on each draw; se is the (n - 1) standard deviation of the defined estimates, the interval their
 * 2.5% and 97.5% quantiles (linear between order statistics). Null below two trials or two defined estimates.
 */
export function bootstrapOverTrials<T>(
  trials: readonly T[],
  estimate: (sample: readonly T[]) => number | null,
  seed: number | string,
  resamples = BOOTSTRAP_RESAMPLES,
): BootstrapInterval | null {
  const k = trials.length;
  if (k < 2) return null;
  const rng = rngFrom(seed, 'bootstrap');
  const values: number[] = [];
  const sample = new Array<T>(k);
  for (let b = 0; b < resamples; b++) {
    for (let i = 0; i < k; i++) sample[i] = trials[rng.int(k)];
    const v = estimate(sample);
    if (v !== null && Number.isFinite(v)) values.push(v);
  }
  if (values.length < 2) return null;
  values.sort((a, b) => a - b);
  const m = values.reduce((a, b) => a + b, 0) / values.length;
  const se = Math.sqrt(values.reduce((a, b) => a + (b - m) * (b - m), 0) / (values.length - 1));
  return { se, lo: quantile(values, 0.025), hi: quantile(values, 0.975), resamples: values.length };
}

/** The q-quantile of sorted values, linear between order statistics (type 7). */
export function quantile(sorted: readonly number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}
