import { halvesDisagree, trialsBound } from './plateau.js';
import { curveCrossings, curveExtremum, type CurvePoint, fittedCrossing, type Located } from './scaling.js';

/**
 * The phase diagram of a sweep from its fluctuation measures (phase.parquet rows, docs/DESIGN.md#phase): per
 * family of configurations that differ only in size and temperature (prompt, encoder, geometry, protocol,
 * dynamics, arms), the transition temperature from Binder crossings between sizes and from susceptibility
 * peaks, and the rho-minimising temperature T* per size; each with its interval, or in words why the data
 * cannot give it.
 */

/** What the diagram reads of one configuration (a row of phase.parquet). */
export interface PhasePoint {
  prompt_id: string;
  encoder: string;
  geometry: string;
  protocol: string;
  dynamics: string;
  template_arm: string | null;
  population_arm: string | null;
  n: number;
  temperature: number;
  m: number | null;
  m_se: number | null;
  chi_m: number | null;
  chi_m_se: number | null;
  binder_m: number | null;
  binder_m_se: number | null;
  rho: number | null;
  rho_se: number | null;
  equilibrated: boolean;
  /**
   * The checks behind `equilibrated`, as phase.parquet stores them (absent in hand-built points): the plateau
   * halves' drift of m and of rho with their errors, the trials' spread_m and how many trials it is over.
   * They say which observable failed (settledFor); where they do not account for the flag, it holds for both.
   */
  drift_m?: number | null;
  drift_m_se?: number | null;
  drift_rho?: number | null;
  drift_rho_se?: number | null;
  spread_m?: number | null;
  trials?: number | null;
}

/** The observables a configuration's checks are about: m (its plateau halves and trials), rho (its plateau halves). */
export type Observable = 'm' | 'rho';

/**
 * Whether a configuration is equilibrated for what an estimate reads: T_c (Binder crossings, chi peaks) reads m,
 * T* reads rho. A configuration flagged only by rho's plateau halves still counts for T_c: with symmetric spins
 * (Ising, Potts), a cold start's rho (the share of agents off state 0) relaxes by whole-lattice reversals, far
 * slower near T_c than m = |M| / N, which does not see them. Where the stored checks do not account for the
 * flag (a point without them), it holds for both.
 */
export function settledFor(p: PhasePoint, what: Observable): boolean {
  if (p.equilibrated) return true;
  const k = p.trials ?? 0;
  const mFailed =
    halvesDisagree(p.drift_m, p.drift_m_se) || (k >= 2 && p.spread_m !== null && p.spread_m !== undefined && p.spread_m > trialsBound(k));
  const rhoFailed = halvesDisagree(p.drift_rho, p.drift_rho_se);
  if (!mFailed && !rhoFailed) return false;
  return what === 'm' ? !mFailed : !rhoFailed;
}

/** An estimate located between sizes or at one size, or the reason there is none. */
export type Estimate = (Located & { note?: undefined }) | { t: null; lo: null; hi: null; note: string };

export interface PhaseFamily {
  prompt_id: string;
  encoder: string;
  geometry: string;
  protocol: string;
  dynamics: string;
  template_arm: string | null;
  population_arm: string | null;
  sizes: number[];
  temperatures: number[];
  /** T_c from the Binder crossing of the two largest sizes. */
  tc_binder: Estimate & { sizes: number[] };
  /** The crossing of each pair of consecutive sizes. */
  crossings: (Estimate & { sizes: [number, number] })[];
  /** T_c from the susceptibility peak of the largest size. */
  tc_chi: Estimate & { n: number | null };
  chi_peaks: (Estimate & { n: number })[];
  /** The temperature of lowest rho, per size. */
  t_star: (Estimate & { n: number })[];
  /** Configurations whose plateau halves or trials disagree (not equilibrated), and the observables that did. */
  not_equilibrated: { n: number; temperature: number; observables: Observable[] }[];
}

const none = (note: string) => ({ t: null, lo: null, hi: null, note }) as const;

/** A point's family: the configuration without its size and temperature. */
const familyKey = (p: PhasePoint) =>
  JSON.stringify([p.prompt_id, p.encoder, p.geometry, p.protocol, p.dynamics, p.template_arm, p.population_arm]);

/** The points' families, in the order they first appear. */
function families(points: readonly PhasePoint[]): PhasePoint[][] {
  const byKey = new Map<string, PhasePoint[]>();
  for (const p of points) {
    const key = familyKey(p);
    byKey.set(key, [...(byKey.get(key) ?? []), p]);
  }
  return [...byKey.values()];
}

/** A curve of one size: its points with a defined value, sorted by temperature (an undefined se counts as 0). */
function curve(points: readonly PhasePoint[], value: (p: PhasePoint) => number | null, se: (p: PhasePoint) => number | null): CurvePoint[] {
  return points
    .filter((p) => value(p) !== null && Number.isFinite(value(p)))
    .map((p) => ({ t: p.temperature, value: value(p)!, se: se(p) ?? 0 }))
    .sort((a, b) => a.t - b.t);
}

/** The configurations not equilibrated for `what` among those at the grid temperatures from lo to hi (inclusive). */
function unsettled(points: readonly PhasePoint[], lo: number, hi: number, what: Observable): PhasePoint[] {
  return points.filter((p) => !settledFor(p, what) && p.temperature >= lo && p.temperature <= hi);
}

const where = (ps: readonly PhasePoint[]) => ps.map((p) => `N=${p.n} T=${p.temperature}`).join(', ');

/**
 * The crossing of the Binder curves of sizes a < b, by the rule: D = U_b - U_a falls through zero between
 * neighbouring grid points (the larger size more ordered below T_c, less above). Its score is min(P, Q): P the
 * largest D / se_D on the cold side, over the grid points before the crossing back to the first whose D is
 * significantly negative (D / se_D <= -CROSSING_Z), Q the largest -D / se_D on the hot side, up to the first
 * significantly positive point. A point within errors of zero does not end a side: near T_c the two curves
 * agree within errors and noise flips D's sign there. A crossing counts when min(P, Q) >= CROSSING_Z (the larger
 * size one standard error or more more ordered somewhere on the cold side and less ordered on the hot side: a
 * sign change between curves that agree within errors does not count). Several sign changes that count, with
 * the best-scoring one's sides holding the others, are one crossing blurred by noise: its region runs from the
 * first bracketing point to the last. Where it is, and its interval, come from fits of both curves on the grid
 * points nearest the region's middle (fittedCrossing: a line or a parabola per size, a parametric bootstrap for
 * the interval), the root sought within the region; where the fits have none, the best-scoring sign change's
 * linear interpolation and its band. The fit leaves out configurations not equilibrated for m (settledFor); a
 * crossing whose region holds one is not given as a number.
 */
/** How many standard errors the larger size's U must be above the smaller's on the cold side of a crossing, and below on the hot side. */
export const CROSSING_Z = 1;

function binderCrossing(points: readonly PhasePoint[], a: number, b: number): Estimate & { sizes: [number, number] } {
  const sizes: [number, number] = [a, b];
  const ca = curve(
    points.filter((p) => p.n === a),
    (p) => p.binder_m,
    (p) => p.binder_m_se,
  );
  const cb = curve(
    points.filter((p) => p.n === b),
    (p) => p.binder_m,
    (p) => p.binder_m_se,
  );
  const ts = ca.map((p) => p.t).filter((t) => cb.some((q) => q.t === t));
  if (ts.length < 2) return { ...none(`N=${a} and N=${b} share fewer than two temperatures with a Binder cumulant`), sizes };
  const ua = new Map(ca.map((p) => [p.t, p]));
  const ub = new Map(cb.map((p) => [p.t, p]));
  const z = ts.map((t) => {
    const se = Math.hypot(ua.get(t)!.se, ub.get(t)!.se);
    const diff = ub.get(t)!.value - ua.get(t)!.value;
    return se > 0 ? diff / se : diff > 0 ? Infinity : diff < 0 ? -Infinity : 0;
  });
  // Each side of the sign change after grid point i, up to (not including) the first point significantly of
  // the other sign: its strongest evidence and where it ends.
  const score = (i: number) => {
    let p = 0;
    let from = i;
    for (let j = i; j >= 0 && z[j] > -CROSSING_Z; j--) [p, from] = [Math.max(p, z[j]), j];
    let q = 0;
    let to = i + 1;
    for (let j = i + 1; j < z.length && z[j] < CROSSING_Z; j++) [q, to] = [Math.max(q, -z[j]), j];
    return { p, q, from, to };
  };
  const crossings = curveCrossings(cb, ca);
  const falling = ts
    .slice(0, -1)
    .map((t, i) => ({ i, br: [t, ts[i + 1]] as [number, number], ...score(i) }))
    .filter((x) => z[x.i] > 0 && z[x.i + 1] <= 0 && Math.min(x.p, x.q) >= CROSSING_Z)
    .map((x) => ({ ...x, c: crossings.find((c) => c.t >= x.br[0] && c.t <= x.br[1])! }))
    .filter((x) => x.c !== undefined)
    .sort((x, y) => Math.min(y.p, y.q) - Math.min(x.p, x.q));
  if (falling.length === 0)
    return { ...none(`no crossing of the Binder cumulants of N=${a} and N=${b} in T ${ts[0]}..${ts[ts.length - 1]}`), sizes };
  const { c, from, to } = falling[0];
  // The sign changes that count within the best one's sides: one crossing, blurred by noise.
  const region = falling.filter((x) => x.i >= from && x.i + 1 <= to).sort((x, y) => x.i - y.i);
  const br: [number, number] = [region[0].br[0], region[region.length - 1].br[1]];
  const t0 = region.reduce((sum, x) => sum + x.c.t, 0) / region.length;
  const bad = unsettled(
    points.filter((p) => p.n === a || p.n === b),
    br[0],
    br[1],
    'm',
  );
  if (bad.length > 0) return { ...none(`not equilibrated at ${where(bad)}`), sizes };
  // The fit reads the equilibrated grid points only.
  const unsettledAt = new Set(points.filter((p) => !settledFor(p, 'm')).map((p) => `${p.n}/${p.temperature}`));
  const keep = (n: number) => (p: CurvePoint) => !unsettledAt.has(`${n}/${p.t}`);
  const fit = fittedCrossing(ca.filter(keep(a)), cb.filter(keep(b)), t0, `${familyKey(points[0])}/${a}/${b}`, br);
  return fit ? { t: fit.t, lo: fit.lo, hi: fit.hi, sizes } : { t: c.t, lo: c.lo, hi: c.hi, sizes };
}

/** The extremum of one size's curve (chi's peak or rho's minimum), or why there is none; `observable` the curve's. */
function extremum(
  points: readonly PhasePoint[],
  n: number,
  what: string,
  value: (p: PhasePoint) => number | null,
  se: (p: PhasePoint) => number | null,
  kind: 'max' | 'min',
  observable: Observable,
): Estimate & { n: number } {
  const own = points.filter((p) => p.n === n);
  const c = curve(own, value, se);
  if (c.length < 3) return { ...none(`${what} is defined at ${c.length} temperatures of N=${n}; locating it needs three`), n };
  const found = curveExtremum(c, kind);
  if (!found) return { ...none(`the ${what} of N=${n} is at the grid's end (T ${c[0].t}..${c[c.length - 1].t}): not bracketed`), n };
  // The extreme grid point and its two neighbours, which the parabola went through.
  const sign = kind === 'max' ? 1 : -1;
  const k = c.reduce((best, p, i) => (sign * p.value > sign * c[best].value ? i : best), 0);
  const bad = unsettled(own, c[k - 1].t, c[k + 1].t, observable);
  if (bad.length > 0) return { ...none(`not equilibrated at ${where(bad)}`), n };
  return { ...found, n };
}

/** The phase diagram of every family of the points (see the module comment). */
export function phaseDiagram(points: readonly PhasePoint[]): PhaseFamily[] {
  return families(points).map((ps) => {
    const p0 = ps[0];
    const sizes = [...new Set(ps.map((p) => p.n))].sort((a, b) => a - b);
    const temperatures = [...new Set(ps.map((p) => p.temperature))].sort((a, b) => a - b);
    const crossings = sizes.slice(1).map((b, i) => binderCrossing(ps, sizes[i], b));
    const largest = sizes[sizes.length - 1];
    const tcBinder =
      sizes.length < 2
        ? { ...none(`one size (N=${sizes[0]}): a Binder crossing needs two`), sizes }
        : { ...crossings[crossings.length - 1], sizes: crossings[crossings.length - 1].sizes };
    const chiPeaks = sizes.map((n) =>
      extremum(
        ps,
        n,
        'susceptibility peak',
        (p) => p.chi_m,
        (p) => p.chi_m_se,
        'max',
        'm',
      ),
    );
    const tStar = sizes.map((n) =>
      extremum(
        ps,
        n,
        'lowest rho',
        (p) => p.rho,
        (p) => p.rho_se,
        'min',
        'rho',
      ),
    );
    return {
      prompt_id: p0.prompt_id,
      encoder: p0.encoder,
      geometry: p0.geometry,
      protocol: p0.protocol,
      dynamics: p0.dynamics,
      template_arm: p0.template_arm,
      population_arm: p0.population_arm,
      sizes,
      temperatures,
      tc_binder: tcBinder,
      crossings,
      tc_chi: { ...chiPeaks[chiPeaks.length - 1], n: largest },
      chi_peaks: chiPeaks,
      t_star: tStar,
      not_equilibrated: ps
        .filter((p) => !p.equilibrated)
        .map((p) => ({ n: p.n, temperature: p.temperature, observables: (['m', 'rho'] as const).filter((o) => !settledFor(p, o)) })),
    };
  });
}

/** A temperature as printed: four significant digits. */
export const formatTemperature = (x: number): string => String(Number(x.toPrecision(4)));

/** "2.269 [2.21, 2.33]", an end the grid does not bound as "..", or "none: " and the reason there is no number. */
export function formatEstimate(e: Estimate): string {
  if (e.t === null) return `none: ${e.note}`;
  const f = formatTemperature;
  return `${f(e.t)} [${e.lo === null ? '..' : f(e.lo)}, ${e.hi === null ? '..' : f(e.hi)}]`;
}
