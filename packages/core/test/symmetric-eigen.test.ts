import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { rngFrom, symmetricEigen } from '../src/index.js';

/** A random symmetric matrix, optionally of low rank (a covariance of few distinct answers). */
function symmetric(n: number, seed: number, rank = n): Float64Array {
  const rng = rngFrom(seed);
  const x = Array.from({ length: rank }, () => Array.from({ length: n }, () => rng.next() - 0.5));
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) a[i * n + j] = x.reduce((s, row) => s + row[i] * row[j], 0) + (rank === n && i === j ? rng.next() : 0);
  return a;
}

describe('symmetric eigen-decomposition', () => {
  it('reconstructs A = V diag(values) V^T with orthonormal eigenvectors, values ascending', () => {
    for (const [n, rank] of [
      [1, 1],
      [2, 2],
      [7, 7],
      [40, 40],
      [40, 5],
    ] as const) {
      const a = symmetric(n, n + rank, rank);
      const { values, vectors } = symmetricEigen(a, n);
      for (let i = 1; i < n; i++) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1]);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let back = 0;
          let dot = 0;
          for (let e = 0; e < n; e++) {
            back += vectors[e * n + i] * values[e] * vectors[e * n + j];
            dot += vectors[i * n + e] * vectors[j * n + e];
          }
          expect(back).toBeCloseTo(a[i * n + j], 10);
          expect(dot).toBeCloseTo(i === j ? 1 : 0, 10);
        }
      }
    }
  });

  it('agrees with ml-matrix on eigenvalues and eigenvectors (up to sign)', () => {
    const n = 30;
    const a = symmetric(n, 3);
    const ours = symmetricEigen(a, n);
    const theirs = new EigenvalueDecomposition(
      new Matrix(Array.from({ length: n }, (_, i) => Array.from(a.subarray(i * n, (i + 1) * n)))),
      { assumeSymmetric: true },
    );
    const v = theirs.eigenvectorMatrix.to2DArray();
    theirs.realEigenvalues.forEach((value, e) => {
      expect(ours.values[e]).toBeCloseTo(value, 10);
      const sign = Math.sign(ours.vectors[e * n] * v[0][e]) || 1;
      for (let i = 0; i < n; i++) expect(ours.vectors[e * n + i]).toBeCloseTo(sign * v[i][e], 8);
    });
  });

  it('refuses a matrix of the wrong size', () => {
    expect(() => symmetricEigen(new Float64Array(5), 2)).toThrow(/2 x 2/);
  });
});
