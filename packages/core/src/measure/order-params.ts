import type { Tag } from '../event.js';

/** The order parameters of one snapshot (docs/DESIGN.md#order-parameters), for one encoder. */
export interface SnapshotMeasure {
  magnetisation: number;
  cohesion: number;
  /** #hallucinated / (#correct + #hallucinated); null when neither occurs. */
  rho: number | null;
  n_correct: number;
  n_hallucinated: number;
  n_not_known: number;
  n_judge_failure: number;
  cds_sys: number;
}

/** v / |v|, or the zero vector when |v| = 0: what CDS_sys compares (computed once per distinct answer). */
export function unitVector(v: ArrayLike<number>, dim: number): Float64Array {
  let s = 0;
  for (let i = 0; i < dim; i++) s += v[i] * v[i];
  const len = Math.sqrt(s);
  const out = new Float64Array(dim);
  if (len > 0) for (let i = 0; i < dim; i++) out[i] = v[i] / len;
  return out;
}

/**
 * Mean pairwise dot product over i != j, from the sum: (|sum|^2 - sum |v_i|^2) / (N (N - 1)). Agents that
 * give the same answer share one vector object (the measurement caches them), so each distinct vector is
 * added once, times the agents holding it: a snapshot of N agents with D distinct answers costs N + D dim.
 */
function meanPairwiseDot(vectors: readonly Float64Array[], dim: number): { mean: number; norm: number } {
  const n = vectors.length;
  const holders = new Map<Float64Array, number>();
  for (let a = 0; a < n; a++) holders.set(vectors[a], (holders.get(vectors[a]) ?? 0) + 1);
  const sum = new Float64Array(dim);
  let self = 0;
  for (const [v, count] of holders) {
    let squared = 0;
    for (let i = 0; i < dim; i++) {
      const x = v[i];
      sum[i] += count * x;
      squared += x * x;
    }
    self += count * squared;
  }
  let total = 0;
  for (let i = 0; i < dim; i++) total += sum[i] * sum[i];
  return { mean: n > 1 ? (total - self) / (n * (n - 1)) : 1, norm: Math.sqrt(total) / n };
}

const asFloat64 = (vectors: readonly ArrayLike<number>[]): Float64Array[] =>
  vectors.map((v) => (v instanceof Float64Array ? v : Float64Array.from(v)));

/**
 * m = |(1/N) sum s_i|, q = mean over pairs of s_i . s_j (= (N m^2 - 1)/(N - 1) for unit spins),
 * CDS_sys = mean pairwise cosine distance of the raw embeddings (given as unitVector of each), and the tag
 * counts.
 */
export function measureSnapshot(
  spins: readonly ArrayLike<number>[],
  units: readonly ArrayLike<number>[],
  tags: readonly Tag[],
  dim: number,
): SnapshotMeasure {
  const s = meanPairwiseDot(asFloat64(spins), dim);
  const r = meanPairwiseDot(asFloat64(units), dim);
  const counts = { correct: 0, hallucinated: 0, not_known: 0, judge_failure: 0 };
  for (const t of tags) counts[t]++;
  const judged = counts.correct + counts.hallucinated;
  return {
    magnetisation: s.norm,
    cohesion: s.mean,
    rho: judged > 0 ? counts.hallucinated / judged : null,
    n_correct: counts.correct,
    n_hallucinated: counts.hallucinated,
    n_not_known: counts.not_known,
    n_judge_failure: counts.judge_failure,
    cds_sys: 1 - r.mean,
  };
}

/**
 * The accuracy a drift statistic reads: n_correct over every agent tagged in the snapshot. A not_known or a
 * judge_failure counts as wrong, as the drift paper scores a non-answer (a population sliding into "I don't
 * know" loses accuracy). Null only for a snapshot without tags. Unlike rho it is defined on every population
 * a model can produce, so FOCUS and drift are too.
 */
export function snapshotAccuracy(
  m: Pick<SnapshotMeasure, 'n_correct' | 'n_hallucinated' | 'n_not_known' | 'n_judge_failure'>,
): number | null {
  const tagged = m.n_correct + m.n_hallucinated + m.n_not_known + m.n_judge_failure;
  return tagged > 0 ? m.n_correct / tagged : null;
}

/**
 * The drift tolerance of a run of N agents: the spec's number, or for `auto` 2/sqrt(N), four standard errors
 * of an accuracy measured on N agents at its noisiest (p = 1/2: sd = 1/(2 sqrt(N))). Drift compares a sweep
 * with the best of all earlier ones, so noise alone is judged against its own maximum: over 10 sweeps of
 * independent binomial noise at p = 1/2, 0.1-0.6% of runs then count as drifting (N = 16 to 729), where one
 * standard error (1/(2 sqrt(N))) lets 76-87% through, two (1/sqrt(N)) 28-39%, and no tolerance 99%.
 */
export function driftTolerance(setting: number | 'auto', n: number): number {
  return setting === 'auto' ? 2 / Math.sqrt(n) : setting;
}

/** Per-run drift statistics from the accuracy series (snapshotAccuracy per sweep; docs/DESIGN.md#accuracy-focus-and-drift). */
export interface DriftStats {
  /** sum over t >= 1 of FOCUS(t) = acc(t) - acc(t-1), over sweeps where both are defined; null if none. */
  focus_total: number | null;
  /**
   * First sweep of the first run of 2+ consecutive sweeps whose accuracy is more than `tolerance` below the
   * best accuracy of the sweeps before it; null when the run never drifts.
   */
  drift_onset: number | null;
  /** After a drift, some later sweep is back at or above the best accuracy before the onset; null without drift. */
  recovered: boolean | null;
}

/** FOCUS(t) = acc(t) - acc(t-1) for t >= 1 (null where either accuracy is undefined). */
export function focusSeries(accuracy: readonly (number | null)[]): (number | null)[] {
  const out: (number | null)[] = [];
  for (let t = 1; t < accuracy.length; t++) {
    const a = accuracy[t];
    const b = accuracy[t - 1];
    out.push(a != null && b != null ? a - b : null);
  }
  return out;
}

export function driftStats(accuracy: readonly (number | null)[], tolerance: number): DriftStats {
  let focus: number | null = null;
  for (const f of focusSeries(accuracy)) if (f !== null) focus = (focus ?? 0) + f;
  let best = -Infinity;
  const bestBefore: number[] = [];
  for (const a of accuracy) {
    bestBefore.push(best);
    if (a != null) best = Math.max(best, a);
  }
  const below = (t: number) => accuracy[t] != null && accuracy[t] < bestBefore[t] - tolerance;
  let onset: number | null = null;
  for (let t = 1; t + 1 < accuracy.length; t++) {
    if (below(t) && below(t + 1)) {
      onset = t;
      break;
    }
  }
  if (onset === null) return { focus_total: focus, drift_onset: null, recovered: null };
  const level = bestBefore[onset];
  const recovered = accuracy.slice(onset + 2).some((a) => a != null && a >= level);
  return { focus_total: focus, drift_onset: onset, recovered };
}
