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
  return { first, second, se, flagged: halvesDisagree(second - first, se) };
}

/** checkPlateau's verdict from its numbers (a drift and its error, as phase.parquet stores them); false when either is missing. */
export function halvesDisagree(drift: number | null | undefined, se: number | null | undefined): boolean {
  return drift !== null && drift !== undefined && se !== null && se !== undefined && Math.abs(drift) > Z_EQUILIBRATION * se;
}

/** What comparing a configuration's trials found: do their plateau means agree within their own errors? */
export interface TrialsCheck {
  /** X / (K - 1): the trials' plateau means' chi-square about their weighted mean, per degree of freedom (about 1 in equilibrium); null below two trials. */
  spread: number | null;
  /** The bound spread is held to: TRIALS_SLACK times the Z_EQUILIBRATION-sigma upper quantile of chi-square(K - 1) / (K - 1) (Wilson-Hilferty). */
  bound: number | null;
  /** True when spread > bound: the trials sit in different states (stripes beside ordered runs, a metastable phase). */
  flagged: boolean;
}

/**
 * How far above its chi-square bound the trials' spread may go before it is flagged: each trial's error uses
 * the autocorrelation time estimated from its own plateau, which a plateau only a few tau long underestimates
 * (by up to about a factor 2 near a transition), so an equilibrated configuration's spread can run that much
 * above nominal. Trials stuck in different states (a stripe beside ordered runs) give spreads of hundreds.
 */
export const TRIALS_SLACK = 2;

/**
 * The upper quantile of chi-square with k degrees of freedom at z standard normal deviations, divided by k, by
 * the Wilson-Hilferty cube-root approximation: (1 - 2 / (9k) + z sqrt(2 / (9k)))^3.
 */
export function chiSquarePerDofBound(k: number, z: number): number {
  const v = 2 / (9 * k);
  return (1 - v + z * Math.sqrt(v)) ** 3;
}

/**
 * Compares a configuration's trials (a plateau series per trial): in equilibrium every trial's plateau mean
 * estimates the same expectation, with the error sqrt(var_k tau_k / n_k) of its own series (tau_k its
 * integrated autocorrelation time). The statistic X = sum_k (mean_k - w)^2 / se_k^2, w the means' weighted
 * mean, is then chi-square with K - 1 degrees of freedom; flagged when X / (K - 1) is above TRIALS_SLACK
 * times its Z_EQUILIBRATION-sigma quantile. A flat state that is not the equilibrium one (a stripe across the torus, a
 * metastable phase) passes the plateau-halves check but not this one, as long as not every trial is stuck in
 * the same way. For m (a magnitude, the same in every ordered direction), not for rho or a signed quantity,
 * whose trials may order into different states by symmetry. A trial with zero error (a constant series)
 * counts with an error of 1e-9 times its scale. Trials with fewer than two snapshots are left out.
 */
export function checkTrials(trials: readonly (readonly number[])[]): TrialsCheck {
  const means: number[] = [];
  const vars: number[] = [];
  for (const s of trials) {
    if (s.length < 2) continue;
    const tau = integratedAutocorrelationTime(s) ?? 1;
    const m = mean(s);
    means.push(m);
    vars.push(Math.max((variance(s) * tau) / s.length, (1e-9 * Math.max(1, Math.abs(m))) ** 2));
  }
  const k = means.length;
  if (k < 2) return { spread: null, bound: null, flagged: false };
  let sw = 0;
  let swm = 0;
  for (let i = 0; i < k; i++) {
    sw += 1 / vars[i];
    swm += means[i] / vars[i];
  }
  const w = swm / sw;
  let x = 0;
  for (let i = 0; i < k; i++) x += (means[i] - w) ** 2 / vars[i];
  const spread = x / (k - 1);
  const bound = trialsBound(k);
  return { spread, bound, flagged: spread > bound };
}

/** The bound checkTrials holds the spread of K trials to: TRIALS_SLACK times the Z_EQUILIBRATION-sigma quantile of chi-square(K - 1) / (K - 1). */
export function trialsBound(k: number): number {
  return TRIALS_SLACK * chiSquarePerDofBound(k - 1, Z_EQUILIBRATION);
}
