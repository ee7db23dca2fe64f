/**
 * Fluctuation measures of one configuration from its trials' plateau series (docs/DESIGN.md#phase):
 * every snapshot of the plateau of every trial is one sample, weighted equally.
 *
 * Susceptibility chi = N (<x^2> - <x>^2). Binder cumulant with the O(n) normalisation for spins of dimension n:
 * U = 1 - n <x^4> / ((n + 2) <x^2>^2). A disordered phase, where the mean spin M is Gaussian in n dimensions,
 * has <|M|^4> / <|M|^2>^2 = (n + 2) / n and so U = 0; an ordered one, where |M| is sharp, has
 * U = 2 / (n + 2): 2/3 for the Ising case (n = 1, U = 1 - <m^4> / (3 <m^2>^2)). U is the same function of
 * <x^4> / <x^2>^2 at every size, so curves of two sizes cross at the transition.
 */

/** The k-th raw moment of every sample of every series, pooled; NaN when there is none. */
export function pooledMoment(series: readonly (readonly number[])[], k: number): number {
  let sum = 0;
  let count = 0;
  for (const s of series)
    for (const x of s) {
      sum += x ** k;
      count++;
    }
  return count > 0 ? sum / count : Number.NaN;
}

/** chi = N (<x^2> - <x>^2) over the pooled samples; null without a sample. */
export function susceptibility(series: readonly (readonly number[])[], n: number): number | null {
  const m1 = pooledMoment(series, 1);
  const m2 = pooledMoment(series, 2);
  if (!Number.isFinite(m1)) return null;
  // Rounding may leave a constant series a hair below zero.
  return n * Math.max(0, m2 - m1 * m1);
}

/**
 * Binder cumulant U = 1 - n <x^4> / ((n + 2) <x^2>^2) for spin dimension n (>= 1) over the pooled samples;
 * null without a sample or where <x^2> = 0 (every sample zero).
 */
export function binderCumulant(series: readonly (readonly number[])[], spinDim: number): number | null {
  if (!(spinDim >= 1)) throw new RangeError(`binderCumulant: spin dimension ${spinDim} must be at least 1`);
  const m2 = pooledMoment(series, 2);
  const m4 = pooledMoment(series, 4);
  if (!Number.isFinite(m2) || m2 === 0) return null;
  return 1 - (spinDim * m4) / ((spinDim + 2) * m2 * m2);
}

/**
 * The factual spin of a snapshot: f = 1 - 2 rho, the mean of +1 per answer judged correct and -1 per answer
 * judged hallucinated; null where rho is. Its susceptibility and Binder cumulant (n = 1) are rho's pair.
 */
export function factualSpin(rho: number | null): number | null {
  return rho === null ? null : 1 - 2 * rho;
}

/** Mean of the values; NaN for none. */
export function mean(xs: readonly number[]): number {
  return xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}

/** Population variance (1/n) of the values; NaN for none. */
export function variance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.length > 0 ? xs.reduce((a, b) => a + (b - m) * (b - m), 0) / xs.length : Number.NaN;
}
