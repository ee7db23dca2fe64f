import { mean } from './moments.js';

/**
 * Relaxation time of a series (m(t) or rho(t), one per sweep) as its integrated autocorrelation time, in
 * sweeps: tau = 1 + 2 sum_{t=1}^{W} rho(t), with rho(t) = [1/(n-t) sum_i (x_i - x̄)(x_{i+t} - x̄)] / [1/n sum_i (x_i - x̄)^2].
 * The window W stops before the first t whose rho(t) is not positive, or at the first t >= 5 tau(t) (Sokal's
 * self-consistent window, c = 5), whichever comes first, and at n - 1. Uncorrelated samples give tau = 1; the
 * variance of a mean of n samples is tau times the uncorrelated one. A constant series (no variance) gives 1;
 * one of fewer than two samples gives null.
 */
export function integratedAutocorrelationTime(xs: readonly number[]): number | null {
  const n = xs.length;
  if (n < 2) return null;
  const m = mean(xs);
  let c0 = 0;
  for (const x of xs) c0 += (x - m) * (x - m);
  c0 /= n;
  if (!(c0 > 0)) return 1;
  let tau = 1;
  for (let t = 1; t < n; t++) {
    let c = 0;
    for (let i = 0; i + t < n; i++) c += (xs[i] - m) * (xs[i + t] - m);
    const rho = c / (n - t) / c0;
    if (!(rho > 0)) break;
    tau += 2 * rho;
    if (t >= 5 * tau) break;
  }
  return tau;
}
