/**
 * Spatial correlation of spins at graph distance r (docs/DESIGN.md#phase): C(r) = mean over ordered pairs
 * (i, j), i != j, at shortest-path distance r of s_i . s_j, averaged over snapshots. It is the full correlation,
 * not the connected one: a finite system does not break its symmetry, so <s> = 0 over the ensemble, and
 * subtracting each snapshot's own mean spin would remove the ordering it measures.
 *
 * Second-moment correlation length over graph distance: xi^2 = sum_r r^2 S(r) / (2 d sum_r S(r)), where
 * S(r) = n(r) C(r) sums the correlation of one site with the n(r) sites at distance r (per site, r = 0
 * included with n(0) = 1, C(0) = 1 for unit spins) and d is the lattice's dimension (1 for a ring); on a
 * hypercubic lattice with exponential decay it approaches the exponential correlation length. Null where
 * the sum is not positive or the numerator negative (anticorrelation).
 */

/** All-pairs shortest-path distances (breadth first from each node), row-major n x n; -1 where unreachable. */
export function graphDistances(n: number, neighbours: (i: number) => ArrayLike<number>): Int32Array {
  const dist = new Int32Array(n * n).fill(-1);
  const queue = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    const row = s * n;
    dist[row + s] = 0;
    let head = 0;
    let tail = 0;
    queue[tail++] = s;
    while (head < tail) {
      const u = queue[head++];
      const nb = neighbours(u);
      for (let k = 0; k < nb.length; k++) {
        const v = nb[k];
        if (dist[row + v] >= 0) continue;
        dist[row + v] = dist[row + u] + 1;
        queue[tail++] = v;
      }
    }
  }
  return dist;
}

/** Sums for C(r) over snapshots; r runs 0..max distance. */
export class SpatialCorrelation {
  private readonly sums: Float64Array;
  private readonly counts: Float64Array;
  private snapshots = 0;
  readonly maxDistance: number;

  constructor(
    readonly n: number,
    private readonly dist: Int32Array,
  ) {
    let max = 0;
    for (const d of dist) if (d > max) max = d;
    this.maxDistance = max;
    this.sums = new Float64Array(max + 1);
    this.counts = new Float64Array(max + 1);
    for (const d of dist) if (d >= 0) this.counts[d]++;
  }

  /** Adds one snapshot: each agent's spin (unit vectors of dimension `dim`). */
  add(spins: readonly ArrayLike<number>[], dim: number): void {
    const { n, dist } = this;
    this.snapshots++;
    for (let i = 0; i < n; i++) {
      const si = spins[i];
      for (let j = 0; j < n; j++) {
        const r = dist[i * n + j];
        if (r < 0) continue;
        const sj = spins[j];
        let dot = 0;
        for (let k = 0; k < dim; k++) dot += si[k] * sj[k];
        this.sums[r] += dot;
      }
    }
  }

  /** C(r) for r = 0..max distance over the snapshots added (null before any, or at a distance no pair has). */
  correlation(): (number | null)[] {
    return Array.from(this.sums, (s, r) => (this.counts[r] > 0 && this.snapshots > 0 ? s / (this.counts[r] * this.snapshots) : null));
  }

  /** Mean number of sites at distance r from a site, n(r). */
  shell(): number[] {
    return Array.from(this.counts, (c) => c / this.n);
  }
}

/** xi from C(r) and the shell sizes n(r) (see above), for a lattice of dimension `d`. */
export function secondMomentLength(c: readonly (number | null)[], shell: readonly number[], d: number): number | null {
  let num = 0;
  let den = 0;
  for (let r = 0; r < c.length; r++) {
    const v = c[r];
    if (v === null) continue;
    num += r * r * shell[r] * v;
    den += shell[r] * v;
  }
  if (!(den > 0) || num < 0) return null;
  return Math.sqrt(num / (2 * d * den));
}
