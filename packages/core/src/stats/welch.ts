import { studentTQuantile, twoTailedP } from './student-t.js';

/**
 * Comparing arms over trials as the synchronisation paper's Table 1 and 3 do: a mean with its 95% confidence
 * interval per arm, and per pair of arms Welch's t test (two-tailed) and Cohen's d. Every number is null
 * where it is undefined, with the reason in words; never NaN.
 */

/** Mean of one arm over its trials, with a 95% confidence interval from the t distribution (df = n - 1). */
export interface MeanCi {
  n: number;
  mean: number | null;
  /** Sample standard deviation (n - 1); null below two values. */
  sd: number | null;
  lo: number | null;
  hi: number | null;
  /** Why the interval is missing, in words; null when it is defined. */
  undefinedBecause: string | null;
}

/** Welch's t test and Cohen's d between arms A and B (t > 0 and d > 0 when A's mean is higher). */
export interface ArmComparison {
  t: number | null;
  /** Welch–Satterthwaite degrees of freedom. */
  df: number | null;
  /** Two-tailed p value. */
  p: number | null;
  /** Cohen's d = (mean A - mean B) / pooled SD, pooled SD = sqrt(((nA-1) sA² + (nB-1) sB²) / (nA + nB - 2)). */
  d: number | null;
  undefinedBecause: string | null;
}

function defined(xs: readonly (number | null | undefined)[]): number[] {
  return xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
}

function moments(v: readonly number[]): { n: number; mean: number; variance: number } {
  const n = v.length;
  const mean = v.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? v.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (n - 1) : 0;
  return { n, mean, variance };
}

/** Mean and 95% confidence interval mean ± t_{0.975, n-1} · sd / sqrt(n) of the defined values. */
export function meanCi(xs: readonly (number | null | undefined)[], level = 0.95): MeanCi {
  const v = defined(xs);
  if (v.length === 0) return { n: 0, mean: null, sd: null, lo: null, hi: null, undefinedBecause: 'no trial has a value' };
  const { n, mean, variance } = moments(v);
  if (n < 2) return { n, mean, sd: null, lo: null, hi: null, undefinedBecause: 'a single trial: no spread to estimate' };
  const sd = Math.sqrt(variance);
  const half = studentTQuantile(1 - (1 - level) / 2, n - 1) * (sd / Math.sqrt(n));
  return { n, mean, sd, lo: mean - half, hi: mean + half, undefinedBecause: null };
}

/** Welch's t (unequal variances), its degrees of freedom and two-tailed p, and Cohen's d (pooled SD). */
export function compareArms(a: readonly (number | null | undefined)[], b: readonly (number | null | undefined)[]): ArmComparison {
  const va = defined(a);
  const vb = defined(b);
  const none = (why: string): ArmComparison => ({ t: null, df: null, p: null, d: null, undefinedBecause: why });
  if (va.length < 2 || vb.length < 2)
    return none(`fewer than two trials in an arm (${va.length} and ${vb.length}): no variance to test against`);
  const A = moments(va);
  const B = moments(vb);
  const diff = A.mean - B.mean;
  const pooled = Math.sqrt(((A.n - 1) * A.variance + (B.n - 1) * B.variance) / (A.n + B.n - 2));
  const d = pooled > 0 ? diff / pooled : null;
  const sa = A.variance / A.n;
  const sb = B.variance / B.n;
  const se2 = sa + sb;
  if (se2 === 0)
    return {
      t: null,
      df: null,
      p: null,
      d,
      undefinedBecause:
        diff === 0 ? 'every trial of both arms has the same value' : 'no variance in either arm: the difference is exact, t is infinite',
    };
  const t = diff / Math.sqrt(se2);
  // Welch–Satterthwaite; a term with zero variance contributes nothing to the denominator.
  const df = (se2 * se2) / ((sa * sa) / (A.n - 1) + (sb * sb) / (B.n - 1));
  return { t, df, p: twoTailedP(t, df), d, undefinedBecause: null };
}
