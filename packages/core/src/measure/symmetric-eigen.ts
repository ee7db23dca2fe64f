/**
 * Eigen-decomposition of a real symmetric matrix: Householder reduction to tridiagonal form, then the
 * implicit QL method (tred2 and tql2 of JAMA, public domain, as ml-matrix also implements them).
 *
 * Why not ml-matrix's EigenvalueDecomposition: it reads and writes through Matrix.get/set on an array of
 * rows, a method call and an extra indirection per element in loops of O(d^3) steps; the same algorithm on
 * one flat Float64Array does the arithmetic alone (bench/NOTES.md). A test checks it against ml-matrix.
 *
 * The working matrix z holds the transpose of JAMA's V, so that the hot loops run along rows of a row-major
 * array: row i of z is, on return, the unit eigenvector of eigenvalue i.
 */
export interface SymmetricEigen {
  /** Eigenvalues in ascending order. */
  values: Float64Array;
  /** n x n row-major; row i is the eigenvector of values[i]. */
  vectors: Float64Array;
}

export function symmetricEigen(matrix: Float64Array, n: number): SymmetricEigen {
  if (matrix.length !== n * n) throw new Error(`symmetricEigen: ${matrix.length} entries for a ${n} x ${n} matrix`);
  const z = new Float64Array(n * n);
  // z(j, i) = A(i, j): A is symmetric, so this is a copy, kept explicit to mirror the layout note above.
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) z[j * n + i] = matrix[i * n + j];
  const d = new Float64Array(n);
  const e = new Float64Array(n);
  tridiagonalize(n, z, d, e);
  diagonalize(n, z, d, e);
  return { values: d, vectors: z };
}

/** tred2: z becomes the accumulated Householder transform, d the diagonal and e the sub-diagonal. */
function tridiagonalize(n: number, z: Float64Array, d: Float64Array, e: Float64Array): void {
  for (let j = 0; j < n; j++) d[j] = z[j * n + n - 1];
  for (let i = n - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(d[k]);
    if (scale === 0) {
      e[i] = d[i - 1];
      for (let j = 0; j < i; j++) {
        d[j] = z[j * n + i - 1];
        z[j * n + i] = 0;
        z[i * n + j] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        d[k] /= scale;
        h += d[k] * d[k];
      }
      let f = d[i - 1];
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      d[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = d[j];
        z[i * n + j] = f;
        const row = j * n;
        g = e[j] + z[row + j] * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += z[row + k] * d[k];
          e[k] += z[row + k] * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j] /= h;
        f += e[j] * d[j];
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j] -= hh * d[j];
      for (let j = 0; j < i; j++) {
        f = d[j];
        g = e[j];
        const row = j * n;
        for (let k = j; k <= i - 1; k++) z[row + k] -= f * e[k] + g * d[k];
        d[j] = z[row + i - 1];
        z[row + i] = 0;
      }
    }
    d[i] = h;
  }
  for (let i = 0; i < n - 1; i++) {
    z[i * n + n - 1] = z[i * n + i];
    z[i * n + i] = 1;
    const h = d[i + 1];
    const next = (i + 1) * n;
    if (h !== 0) {
      for (let k = 0; k <= i; k++) d[k] = z[next + k] / h;
      for (let j = 0; j <= i; j++) {
        const row = j * n;
        let g = 0;
        for (let k = 0; k <= i; k++) g += z[next + k] * z[row + k];
        for (let k = 0; k <= i; k++) z[row + k] -= g * d[k];
      }
    }
    for (let k = 0; k <= i; k++) z[next + k] = 0;
  }
  for (let j = 0; j < n; j++) {
    d[j] = z[j * n + n - 1];
    z[j * n + n - 1] = 0;
  }
  z[(n - 1) * n + n - 1] = 1;
  e[0] = 0;
}

/** tql2: the implicit QL iteration on the tridiagonal (d, e), rotating z along; then sorts ascending. */
function diagonalize(n: number, z: Float64Array, d: Float64Array, e: Float64Array): void {
  for (let i = 1; i < n; i++) e[i - 1] = e[i];
  e[n - 1] = 0;
  let f = 0;
  let tst1 = 0;
  const eps = Number.EPSILON;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(d[l]) + Math.abs(e[l]));
    let m = l;
    while (m < n) {
      if (Math.abs(e[m]) <= eps * tst1) break;
      m++;
    }
    if (m > l) {
      do {
        let g = d[l];
        let p = (d[l + 1] - g) / (2 * e[l]);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        const dl1 = d[l + 1];
        let h = g - d[l];
        for (let i = l + 2; i < n; i++) d[i] -= h;
        f += h;
        p = d[m];
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1];
        let s = 0;
        let s2 = 0;
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = Math.hypot(p, e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          const a = i * n;
          const b = a + n;
          for (let k = 0; k < n; k++) {
            const zb = z[b + k];
            const za = z[a + k];
            z[b + k] = s * za + c * zb;
            z[a + k] = c * za - s * zb;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]) / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (Math.abs(e[l]) > eps * tst1);
    }
    d[l] = d[l] + f;
    e[l] = 0;
  }
  sortAscending(n, z, d);
}

/** Sorts the eigenvalues d ascending (a selection sort), the rows of z with them. */
function sortAscending(n: number, z: Float64Array, d: Float64Array): void {
  for (let i = 0; i < n - 1; i++) {
    let k = i;
    let p = d[i];
    for (let j = i + 1; j < n; j++) {
      if (d[j] < p) {
        k = j;
        p = d[j];
      }
    }
    if (k !== i) {
      d[k] = d[i];
      d[i] = p;
      for (let j = 0; j < n; j++) {
        const t = z[i * n + j];
        z[i * n + j] = z[k * n + j];
        z[k * n + j] = t;
      }
    }
  }
}
