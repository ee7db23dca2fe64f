import { rngFrom } from '../rng.js';
import { quantile } from './bootstrap.js';

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

/** Grid temperatures (shared by both sizes) nearest a crossing that its fit reads. */
export const FIT_POINTS = 6;

/** Resamples of the crossing's parametric bootstrap. */
export const CROSSING_RESAMPLES = 1000;

/**
 * Weighted least-squares polynomial of degree d through (x, y) with weights w; its coefficients c_0..c_d
 * (y = sum c_j x^j), or null where the normal equations are singular. x should be centred near zero.
 */
function polyFit(x: readonly number[], y: readonly number[], w: readonly number[], d: number): number[] | null {
  const m = d + 1;
  const a = Array.from({ length: m }, () => new Array<number>(m + 1).fill(0));
  for (let i = 0; i < x.length; i++) {
    const pow = Array.from({ length: 2 * m }, (_, j) => x[i] ** j);
    for (let r = 0; r < m; r++) {
      for (let c = 0; c < m; c++) a[r][c] += w[i] * pow[r + c];
      a[r][m] += w[i] * pow[r] * y[i];
    }
  }
  for (let c = 0; c < m; c++) {
    let piv = c;
    for (let r = c + 1; r < m; r++) if (Math.abs(a[r][c]) > Math.abs(a[piv][c])) piv = r;
    if (!(Math.abs(a[piv][c]) > 1e-300)) return null;
    [a[c], a[piv]] = [a[piv], a[c]];
    for (let r = 0; r < m; r++) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let k = c; k <= m; k++) a[r][k] -= f * a[c][k];
    }
  }
  return a.map((row, r) => row[m] / row[r]);
}

/** The real root of c_0 + c_1 x + c_2 x^2 (c_2 absent or 0: linear) nearest x0 within [lo, hi]; null if none. */
function rootNear(c: readonly number[], x0: number, lo: number, hi: number): number | null {
  const [c0, c1, c2 = 0] = c;
  let roots: number[];
  if (Math.abs(c2) <= 1e-12 * (Math.abs(c1) + Math.abs(c0))) roots = c1 === 0 ? [] : [-c0 / c1];
  else {
    const disc = c1 * c1 - 4 * c2 * c0;
    if (disc < 0) return null;
    const q = -0.5 * (c1 + Math.sign(c1 || 1) * Math.sqrt(disc));
    roots = [q / c2, q === 0 ? 0 : c0 / q];
  }
  const inside = roots.filter((r) => r >= lo && r <= hi).sort((a, b) => Math.abs(a - x0) - Math.abs(b - x0));
  return inside[0] ?? null;
}

/**
 * The crossing near t0 of two curves (Binder cumulants of sizes a < b), from low-order fits of each: the
 * FIT_POINTS grid temperatures both curves share nearest t0 (all of them when fewer), each curve fitted by
 * weighted least squares (weights 1 / se^2; an se of 0 counts as the smallest positive one, or 1 if none) with
 * a straight line on up to four points and a parabola on five or more; the crossing is the root of the
 * difference of the fits nearest t0 inside the fitted span. Its 95% interval is a parametric bootstrap: each
 * point redrawn as value + se * z (z standard normal; the points of a grid are independent runs),
 * CROSSING_RESAMPLES times from the seeded stream rngFrom(seed, 'crossing'), the 2.5% and 97.5% quantiles of
 * the roots that exist in the span; both ends are null where more than 10% of the resamples have no root
 * there (the data do not bound it). Null when the fits have no root in the span, or in `bracket` when given
 * (the grid points where the data's difference changes sign: a fit that puts the crossing elsewhere does not
 * describe the data).
 */
export function fittedCrossing(
  a: readonly CurvePoint[],
  b: readonly CurvePoint[],
  t0: number,
  seed: string,
  bracket?: readonly [number, number],
): (Located & { points: number[] }) | null {
  const byT = new Map(b.map((p) => [p.t, p]));
  const shared = a
    .filter((p) => byT.has(p.t))
    .sort((x, y) => Math.abs(x.t - t0) - Math.abs(y.t - t0) || x.t - y.t)
    .slice(0, FIT_POINTS)
    .sort((x, y) => x.t - y.t);
  if (shared.length < 2) return null;
  const ts = shared.map((p) => p.t);
  const lo = ts[0];
  const hi = ts[ts.length - 1];
  const scale = (hi - lo) / 2 || 1;
  const x = ts.map((t) => (t - t0) / scale);
  const ua = shared.map((p) => p.value);
  const ub = shared.map((p) => byT.get(p.t)!.value);
  const sa = shared.map((p) => p.se);
  const sb = shared.map((p) => byT.get(p.t)!.se);
  const floor = Math.min(...[...sa, ...sb].filter((s) => s > 0)) || 1;
  const wa = sa.map((s) => 1 / Math.max(s, Number.isFinite(floor) ? floor : 1) ** 2);
  const wb = sb.map((s) => 1 / Math.max(s, Number.isFinite(floor) ? floor : 1) ** 2);
  const degree = shared.length >= 5 ? 2 : 1;
  const root = (ya: readonly number[], yb: readonly number[], from = lo, to = hi): number | null => {
    const fa = polyFit(x, ya, wa, degree);
    const fb = polyFit(x, yb, wb, degree);
    if (!fa || !fb) return null;
    const r = rootNear(
      fb.map((c, j) => c - fa[j]),
      0,
      (from - t0) / scale,
      (to - t0) / scale,
    );
    return r === null ? null : t0 + r * scale;
  };
  const t = root(ua, ub, bracket?.[0] ?? lo, bracket?.[1] ?? hi);
  if (t === null) return null;
  const rng = rngFrom(seed, 'crossing');
  const normal = () => {
    const u = 1 - rng.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
  };
  const roots: number[] = [];
  for (let r = 0; r < CROSSING_RESAMPLES; r++) {
    const ya = ua.map((v, i) => v + sa[i] * normal());
    const yb = ub.map((v, i) => v + sb[i] * normal());
    const s = root(ya, yb);
    if (s !== null) roots.push(s);
  }
  roots.sort((p, q) => p - q);
  const bounded = roots.length >= 2 && roots.length >= 0.9 * CROSSING_RESAMPLES;
  return { t, lo: bounded ? quantile(roots, 0.025) : null, hi: bounded ? quantile(roots, 0.975) : null, points: ts };
}
