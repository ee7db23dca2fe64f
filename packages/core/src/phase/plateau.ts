import { integratedAutocorrelationTime } from './autocorrelation.js';
import { mean, variance } from './moments.js';

/**
 * The plateau rule (docs/DESIGN.md#phase): a run of T sweeps has snapshots after sweeps 0..T; the sweeps
 * from ceil(T / 2) to T are its plateau, the ones the fluctuation measures count (the first half is taken as
 * equilibration and discarded). The plateau's first and second halves (floor(P / 2) snapshots each, the middle
 * one of an odd count in neither) are compared to flag a run that has not reached it.
 */
export function plateauStart(sweeps: number): number {
  if (!Number.isInteger(sweeps) || sweeps < 0) throw new RangeError(`plateauStart: ${sweeps} is not a sweep count`);
  return Math.ceil(sweeps / 2);
}

/** The plateau of a series indexed by sweep 0..T (value at index t is the snapshot after sweep t). */
export function plateauOf<T>(series: readonly T[]): T[] {
  return series.slice(plateauStart(Math.max(0, series.length - 1)));
}

/** What comparing a configuration's plateau halves found. */
export interface PlateauCheck {
  /** Mean of the first half, pooled over trials. */
  first: number | null;
  /** Mean of the second half, pooled over trials. */
  second: number | null;
  /** Standard error of second - first. */
  se: number | null;
  /** True when |second - first| > Z_EQUILIBRATION * se: the runs had not reached their plateau. */
  flagged: boolean;
}

/** Two halves disagree when their means differ by more than this many standard errors. */
export const Z_EQUILIBRATION = 3;

/**
 * Compares the halves of each trial's plateau (a series per trial, already cut to the plateau). The
 * error of a half's mean in one trial is sqrt(var * tau / n), var its (1/n) variance, tau the trial plateau's
 * integrated autocorrelation time, n its length; trials are independent, so the configuration's half mean is
 * the mean of the trials' and its error sqrt(sum se_k^2) / K. Flagged when the halves differ by more than
 * Z_EQUILIBRATION standard errors of the difference (a nonzero difference with zero error is flagged too).
 * Trials whose plateau has fewer than two snapshots are left out; with none left, nothing is flagged.
 */
export function checkPlateau(trials: readonly (readonly number[])[]): PlateauCheck {
  const firsts: number[] = [];
  const seconds: number[] = [];
  let variance2 = 0;
  for (const s of trials) {
    const half = Math.floor(s.length / 2);
    if (half < 1) continue;
    const a = s.slice(0, half);
    const b = s.slice(s.length - half);
    const tau = integratedAutocorrelationTime(s) ?? 1;
    firsts.push(mean(a));
    seconds.push(mean(b));
    variance2 += (variance(a) * tau) / half + (variance(b) * tau) / half;
  }
  if (firsts.length === 0) return { first: null, second: null, se: null, flagged: false };
  const k = firsts.length;
  const first = mean(firsts);
  const second = mean(seconds);
  const se = Math.sqrt(variance2) / k;
  return { first, second, se, flagged: Math.abs(second - first) > Z_EQUILIBRATION * se };
}
