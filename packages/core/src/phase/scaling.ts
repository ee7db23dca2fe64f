/**
 * Finite-size scaling on a temperature grid (docs/DESIGN.md#phase): where Binder curves of two sizes cross,
 * where a susceptibility peaks, where rho is lowest. Each takes points (t, value, se); intervals are 95%
 * (z = 1.96), with an end null where the grid ends before the interval does.
 */

/** One point of a curve: temperature, value and its standard error. */
export interface CurvePoint {
  t: number;
  value: number;
  se: number;
}

/** An estimate with its 95% interval (lo or hi null: not bounded within the grid). */
export interface Located {
  t: number;
  lo: number | null;
  hi: number | null;
}

export const Z95 = 1.959963984540054;

/** Where the linear interpolation of ys over ts crosses zero between ts[i] and ts[i + 1]. */
function zeroBetween(ts: readonly number[], ys: readonly number[], i: number): number {
  const a = ys[i];
  const b = ys[i + 1];
  return a === b ? ts[i] : ts[i] + ((ts[i + 1] - ts[i]) * a) / (a - b);
}

/** Indices i where ys changes sign between i and i + 1 (a zero at a grid point counts once, with the point before it). */
function signChanges(ys: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < ys.length; i++) if ((ys[i] > 0 && ys[i + 1] <= 0) || (ys[i] < 0 && ys[i + 1] >= 0)) out.push(i);
  return out;
}

/**
 * Crossings of two curves (Binder cumulants of two sizes) on the temperatures both have: D(t) = a(t) - b(t),
 * interpolated linearly between grid points; each sign change is one crossing. Its interval is the stretch
 * around it where |D| <= z se_D, se_D = sqrt(se_a^2 + se_b^2) interpolated the same way: it ends at the
 * nearest zeros of D - z se_D and D + z se_D on either side (null where the grid ends first).
 */
export function curveCrossings(a: readonly CurvePoint[], b: readonly CurvePoint[]): Located[] {
  const byT = new Map(b.map((p) => [p.t, p]));
  const shared = a.filter((p) => byT.has(p.t)).sort((x, y) => x.t - y.t);
  const ts = shared.map((p) => p.t);
  const d = shared.map((p) => p.value - byT.get(p.t)!.value);
  const se = shared.map((p) => Math.hypot(p.se, byT.get(p.t)!.se));
  const upper = d.map((v, i) => v + Z95 * se[i]);
  const lower = d.map((v, i) => v - Z95 * se[i]);
  const ends = [...signChanges(upper).map((j) => zeroBetween(ts, upper, j)), ...signChanges(lower).map((j) => zeroBetween(ts, lower, j))];
  return signChanges(d).map((i) => {
    const t = zeroBetween(ts, d, i);
    const lo = Math.max(...ends.filter((x) => x <= t));
    const hi = Math.min(...ends.filter((x) => x >= t));
    return { t, lo: Number.isFinite(lo) ? lo : null, hi: Number.isFinite(hi) ? hi : null };
  });
}

/**
 * The extremum of a curve ('max' for a susceptibility peak, 'min' for the rho-minimising T*): the vertex of
 * the parabola through the extreme grid point and its two neighbours. Null when the extreme point is at an
 * end of the grid (the extremum is not bracketed) or the curve has fewer than three points. Interval: the
 * contiguous grid points around the extreme one whose value is within errors of it (|v - v*| <=
 * z sqrt(se^2 + se*^2)) could each be the extremum; it ends at the nearest point beyond them on either side,
 * which is not within errors (null where that run reaches the grid's end).
 */
export function curveExtremum(points: readonly CurvePoint[], kind: 'max' | 'min'): Located | null {
  const p = [...points].sort((x, y) => x.t - y.t);
  if (p.length < 3) return null;
  const sign = kind === 'max' ? 1 : -1;
  let k = 0;
  for (let i = 1; i < p.length; i++) if (sign * p[i].value > sign * p[k].value) k = i;
  if (k === 0 || k === p.length - 1) return null;
  const t = parabolaVertex(p[k - 1], p[k], p[k + 1]);
  const near = (i: number) => Math.abs(p[i].value - p[k].value) <= Z95 * Math.hypot(p[i].se, p[k].se);
  let lo = k;
  while (lo > 0 && near(lo - 1)) lo--;
  let hi = k;
  while (hi < p.length - 1 && near(hi + 1)) hi++;
  return { t, lo: lo === 0 ? null : p[lo - 1].t, hi: hi === p.length - 1 ? null : p[hi + 1].t };
}

/** The vertex of the parabola through three points with distinct t (the middle one extreme). */
export function parabolaVertex(a: CurvePoint, b: CurvePoint, c: CurvePoint): number {
  const num = (b.t - a.t) ** 2 * (b.value - c.value) - (b.t - c.t) ** 2 * (b.value - a.value);
  const den = (b.t - a.t) * (b.value - c.value) - (b.t - c.t) * (b.value - a.value);
  return den === 0 ? b.t : b.t - num / (2 * den);
}
