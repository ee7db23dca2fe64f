import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/**
 * Sums for a mean and covariance, fed one embedding at a time (with a weight, so that repeated answers can
 * be added once). Only the upper triangle is accumulated: the covariance is symmetric.
 */
export class CovarianceAccumulator {
  readonly sum: Float64Array;
  readonly outer: Float64Array;
  count = 0;

  constructor(readonly dim: number) {
    this.sum = new Float64Array(dim);
    this.outer = new Float64Array(dim * dim);
  }

  add(x: ArrayLike<number>, weight = 1): void {
    const d = this.dim;
    this.count += weight;
    for (let i = 0; i < d; i++) {
      const xi = x[i]! * weight;
      if (xi === 0) continue;
      this.sum[i]! += xi;
      const row = i * d;
      for (let j = i; j < d; j++) this.outer[row + j]! += xi * x[j]!;
    }
  }

  /** Mean and sample covariance (divided by n - 1, as numpy.cov). */
  finish(): { mean: Float64Array; cov: Float64Array } {
    const d = this.dim;
    const n = this.count;
    const mean = this.sum.map((s) => (n > 0 ? s / n : 0));
    const cov = new Float64Array(d * d);
    if (n > 1) {
      for (let i = 0; i < d; i++) {
        for (let j = i; j < d; j++) {
          const c = (this.outer[i * d + j]! - n * mean[i]! * mean[j]!) / (n - 1);
          cov[i * d + j] = c;
          cov[j * d + i] = c;
        }
      }
    }
    return { mean, cov };
  }
}

/** A whitening transform of one (prompt, encoder): spins are W (x - mean), normalised. */
export interface Whitening {
  mode: 'zca' | 'raw';
  dim: number;
  /** Number of t = 0 answers it was fitted on. */
  samples: number;
  lambda: number;
  mean: Float64Array;
  /** d x d, row-major; the identity for `raw`. */
  matrix: Float64Array;
}

/**
 * Regularised ZCA (DESIGN.md 4): W = (C + lambda I)^(-1/2), lambda = 1e-3 trace(C) / d. When every answer
 * is identical (trace 0) there is no direction to whiten and W is the identity.
 */
export function fitWhitening(acc: CovarianceAccumulator, mode: 'zca' | 'raw'): Whitening {
  const d = acc.dim;
  const { mean, cov } = acc.finish();
  const identity = new Float64Array(d * d);
  for (let i = 0; i < d; i++) identity[i * d + i] = 1;
  if (mode === 'raw') return { mode, dim: d, samples: acc.count, lambda: 0, mean: new Float64Array(d), matrix: identity };
  let trace = 0;
  for (let i = 0; i < d; i++) trace += cov[i * d + i]!;
  if (!(trace > 0)) return { mode, dim: d, samples: acc.count, lambda: 0, mean, matrix: identity };
  const lambda = (1e-3 * trace) / d;
  const rows: number[][] = [];
  for (let i = 0; i < d; i++) rows.push(Array.from(cov.subarray(i * d, (i + 1) * d)));
  const eig = new EigenvalueDecomposition(new Matrix(rows), { assumeSymmetric: true });
  const values = eig.realEigenvalues;
  const vectors = eig.eigenvectorMatrix;
  const scale = values.map((v) => 1 / Math.sqrt(Math.max(v, 0) + lambda));
  const matrix = new Float64Array(d * d);
  const v = vectors.to2DArray();
  for (let i = 0; i < d; i++) {
    for (let j = i; j < d; j++) {
      let s = 0;
      for (let e = 0; e < d; e++) s += v[i]![e]! * scale[e]! * v[j]![e]!;
      matrix[i * d + j] = s;
      matrix[j * d + i] = s;
    }
  }
  return { mode, dim: d, samples: acc.count, lambda, mean, matrix };
}

/** The unit spin of an embedding: W (x - mean) / |W (x - mean)|; the zero vector if that norm is 0. */
export function toSpin(w: Whitening, x: ArrayLike<number>, out = new Float64Array(w.dim)): Float64Array {
  const d = w.dim;
  const centred = new Float64Array(d);
  for (let i = 0; i < d; i++) centred[i] = x[i]! - w.mean[i]!;
  let norm = 0;
  for (let i = 0; i < d; i++) {
    const row = i * d;
    let s = 0;
    for (let j = 0; j < d; j++) s += w.matrix[row + j]! * centred[j]!;
    out[i] = s;
    norm += s * s;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < d; i++) out[i] = norm > 0 ? out[i]! / norm : 0;
  return out;
}
