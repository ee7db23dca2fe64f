import { symmetricEigen } from './symmetric-eigen.js';

/**
 * Sums for a mean and covariance, fed one embedding at a time (with a weight, so that repeated answers can
 * be added once). While it has seen at most `dim` distinct samples it keeps them as given: their covariance
 * has rank below d, and fitWhitening then works on the m x m Gram matrix instead of the d x d covariance.
 * Past that it keeps only the sums (the upper triangle of the outer products: the covariance is symmetric).
 */
export class CovarianceAccumulator {
  readonly sum: Float64Array;
  private outer: Float64Array | null = null;
  private held: { x: Float64Array; weight: number }[] | null = [];
  /** The first sample, and whether any later one differs from it: a pool of one distinct vector is degenerate. */
  private first: Float64Array | null = null;
  private differs = false;
  count = 0;

  constructor(readonly dim: number) {
    this.sum = new Float64Array(dim);
  }

  add(x: ArrayLike<number>, weight = 1): void {
    const d = this.dim;
    this.count += weight;
    for (let i = 0; i < d; i++) this.sum[i] += x[i] * weight;
    if (!this.first) this.first = Float64Array.from({ length: d }, (_, i) => x[i]);
    else if (!this.differs) for (let i = 0; i < d && !this.differs; i++) this.differs = x[i] !== this.first[i];
    if (this.held) {
      if (this.held.length < d) {
        this.held.push({ x: Float64Array.from({ length: d }, (_, i) => x[i]), weight });
        return;
      }
      this.outer = this.foldHeld();
      this.held = null;
    }
    addOuter(this.outer!, x, weight, d);
  }

  /** Whether the samples hold at least two distinct vectors (exactly: compared value by value). */
  get varied(): boolean {
    return this.differs;
  }

  /** The samples as added, while there are at most `dim` of them; null once only the sums are kept. */
  get samples(): readonly { x: Float64Array; weight: number }[] | null {
    return this.held;
  }

  private foldHeld(): Float64Array {
    const outer = new Float64Array(this.dim * this.dim);
    for (const h of this.held ?? []) addOuter(outer, h.x, h.weight, this.dim);
    return outer;
  }

  /** Mean and sample covariance (divided by n - 1, as numpy.cov). */
  finish(): { mean: Float64Array; cov: Float64Array } {
    const d = this.dim;
    const n = this.count;
    const outer = this.outer ?? this.foldHeld();
    const mean = this.sum.map((s) => (n > 0 ? s / n : 0));
    const cov = new Float64Array(d * d);
    if (n > 1) {
      for (let i = 0; i < d; i++) {
        for (let j = i; j < d; j++) {
          const c = (outer[i * d + j] - n * mean[i] * mean[j]) / (n - 1);
          cov[i * d + j] = c;
          cov[j * d + i] = c;
        }
      }
    }
    return { mean, cov };
  }
}

function addOuter(outer: Float64Array, x: ArrayLike<number>, weight: number, d: number): void {
  for (let i = 0; i < d; i++) {
    const xi = x[i] * weight;
    if (xi === 0) continue;
    const row = i * d;
    for (let j = i; j < d; j++) outer[row + j] += xi * x[j];
  }
}

/** A whitening transform of one (prompt, encoder): spins are W (x - mean), normalised. */
export interface Whitening {
  /** The transform applied: `raw` when asked for, or as the fallback of a degenerate pool. */
  mode: 'zca' | 'raw';
  /**
   * Why `zca` was asked for and `raw` applied: `degenerate_pool` when the t = 0 answers hold fewer than two
   * distinct vectors (or their covariance has trace 0); null when the asked-for mode was applied.
   */
  fallback: 'degenerate_pool' | null;
  dim: number;
  /** Number of t = 0 answers it was fitted on. */
  samples: number;
  lambda: number;
  mean: Float64Array;
  /** d x d, row-major; the identity for `raw`. */
  matrix: Float64Array;
}

/**
 * Regularised ZCA (docs/DESIGN.md#whitening): W = (C + lambda I)^(-1/2), lambda = 1e-3 trace(C) / d.
 *
 * A degenerate pool (fewer than two distinct t = 0 vectors, or trace(C) = 0) has no direction to whiten,
 * and centring on its mean would map each of its answers to the zero vector: a unanimous population would
 * read m = q = 0. Such a pool falls back to `raw` (mean 0, W = I, so a spin is x / |x|), recorded as
 * `fallback`: a unanimous population then has m = q = 1. With two or more distinct unit vectors (every
 * shipped encoder L2-normalises) no answer can equal the mean, which lies strictly inside the unit ball, so
 * under ZCA no spin is zero either.
 */
export function fitWhitening(acc: CovarianceAccumulator, mode: 'zca' | 'raw'): Whitening {
  const d = acc.dim;
  const n = acc.count;
  const identity = new Float64Array(d * d);
  for (let i = 0; i < d; i++) identity[i * d + i] = 1;
  const raw = (fallback: Whitening['fallback']): Whitening => ({
    mode: 'raw',
    fallback,
    dim: d,
    samples: n,
    lambda: 0,
    mean: new Float64Array(d),
    matrix: identity,
  });
  if (mode === 'raw') return raw(null);
  // Rounding makes the centred copies of one vector tiny but not zero: whitening would blow that noise up.
  if (!acc.varied) return raw('degenerate_pool');
  const mean = acc.sum.map((s) => s / n);
  const samples = acc.samples;
  const spectrum = samples && n > 1 ? gramSpectrum(samples, n, mean, d) : covarianceSpectrum(acc);
  if (!(spectrum.trace > 0)) return raw('degenerate_pool');
  const lambda = (1e-3 * spectrum.trace) / d;
  return { mode, fallback: null, dim: d, samples: n, lambda, mean, matrix: spectrum.inverseRoot(lambda) };
}

/** trace(C), and (C + lambda I)^(-1/2) for a given lambda. */
interface Spectrum {
  trace: number;
  inverseRoot(lambda: number): Float64Array;
}

/** From the d x d covariance: W = sum over its eigenpairs of v v^T / sqrt(value + lambda). */
function covarianceSpectrum(acc: CovarianceAccumulator): Spectrum {
  const d = acc.dim;
  const { cov } = acc.finish();
  let trace = 0;
  for (let i = 0; i < d; i++) trace += cov[i * d + i];
  return {
    trace,
    inverseRoot(lambda) {
      const { values, vectors } = symmetricEigen(cov, d);
      const matrix = new Float64Array(d * d);
      // Rank-one updates along rows of `vectors`.
      for (let e = 0; e < d; e++)
        addRankOne(matrix, vectors.subarray(e * d, (e + 1) * d), 1 / Math.sqrt(Math.max(values[e], 0) + lambda), d);
      mirrorUpper(matrix, d);
      return matrix;
    },
  };
}

/**
 * The same from m <= d distinct samples, through their m x m Gram matrix G = Y Y^T, whose rows y_k are
 * sqrt(w_k / (n - 1)) (x_k - mean), so that C = Y^T Y and trace(C) = trace(G). An eigenpair (s, g) of G with
 * s > 0 gives the unit eigenvector u = Y^T g / sqrt(s) of C; every other direction has eigenvalue 0. Hence
 * W = I / sqrt(lambda) + sum over those u of (1 / sqrt(s + lambda) - 1 / sqrt(lambda)) u u^T.
 * Costs O(m^2 d + m d^2) instead of the d x d eigen-decomposition: answers of a prompt are often few.
 */
function gramSpectrum(samples: readonly { x: Float64Array; weight: number }[], n: number, mean: Float64Array, d: number): Spectrum {
  const m = samples.length;
  const y = new Float64Array(m * d);
  samples.forEach(({ x, weight }, k) => {
    const s = Math.sqrt(weight / (n - 1));
    for (let i = 0; i < d; i++) y[k * d + i] = s * (x[i] - mean[i]);
  });
  const gram = new Float64Array(m * m);
  let trace = 0;
  for (let a = 0; a < m; a++) {
    for (let b = a; b < m; b++) {
      let dot = 0;
      for (let i = 0; i < d; i++) dot += y[a * d + i] * y[b * d + i];
      gram[a * m + b] = dot;
      gram[b * m + a] = dot;
    }
    trace += gram[a * m + a];
  }
  return {
    trace,
    inverseRoot(lambda) {
      const base = 1 / Math.sqrt(lambda);
      const { values, vectors } = symmetricEigen(gram, m);
      // Eigenvalues of G at rounding level belong to directions C does not have: their u would be noise.
      const floor = 1e-12 * values[m - 1];
      const matrix = new Float64Array(d * d);
      const u = new Float64Array(d);
      for (let e = 0; e < m; e++) {
        const s = values[e];
        if (!(s > floor)) continue;
        u.fill(0);
        for (let a = 0; a < m; a++) {
          const g = vectors[e * m + a] / Math.sqrt(s);
          for (let i = 0; i < d; i++) u[i] += y[a * d + i] * g;
        }
        addRankOne(matrix, u, 1 / Math.sqrt(s + lambda) - base, d);
      }
      for (let i = 0; i < d; i++) matrix[i * d + i] += base;
      mirrorUpper(matrix, d);
      return matrix;
    },
  };
}

/** matrix += scale v v^T, upper triangle only. */
function addRankOne(matrix: Float64Array, v: Float64Array, scale: number, d: number): void {
  for (let i = 0; i < d; i++) {
    const a = scale * v[i];
    if (a === 0) continue;
    const row = i * d;
    for (let j = i; j < d; j++) matrix[row + j] += a * v[j];
  }
}

function mirrorUpper(matrix: Float64Array, d: number): void {
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) matrix[i * d + j] = matrix[j * d + i];
}

/**
 * The unit spin of an embedding: W (x - mean) / |W (x - mean)|; the zero vector if that norm is 0, which
 * only a zero embedding can give (W is positive definite, and no unit vector equals a non-degenerate mean).
 */
export function toSpin(w: Whitening, x: ArrayLike<number>, out = new Float64Array(w.dim)): Float64Array {
  const d = w.dim;
  const centred = new Float64Array(d);
  for (let i = 0; i < d; i++) centred[i] = x[i] - w.mean[i];
  let norm = 0;
  for (let i = 0; i < d; i++) {
    const row = i * d;
    let s = 0;
    for (let j = 0; j < d; j++) s += w.matrix[row + j] * centred[j];
    out[i] = s;
    norm += s * s;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < d; i++) out[i] = norm > 0 ? out[i] / norm : 0;
  return out;
}
