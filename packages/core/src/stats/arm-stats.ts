import { compareArms, meanCi, type MeanCi } from './welch.js';

/**
 * The arm statistics of a sweep (stats.parquet, the report's statistics tables). Runs are compared only
 * within a cell: the same configuration but for its arm (protocol, dynamics, template, population), so a
 * comparison never mixes prompts, geometries or sizes; within a cell each trial is one observation.
 */

/** One run as the statistics see it. */
export interface ArmObservation {
  /** The configuration without its arm, as one label. */
  cell: string;
  arm: string;
  /** One value per metric; null where the run does not define it (e.g. rho of a run that knows nothing). */
  metrics: Readonly<Record<string, number | null>>;
}

/** One arm of one cell on one metric. */
export interface ArmSummary extends MeanCi {
  metric: string;
  cell: string;
  arm: string;
}

/** One pair of arms of one cell on one metric: one row of stats.parquet. */
export interface ArmPairRow {
  metric: string;
  cell: string;
  arm_a: string;
  arm_b: string;
  n_a: number;
  mean_a: number | null;
  ci_lo_a: number | null;
  ci_hi_a: number | null;
  n_b: number;
  mean_b: number | null;
  ci_lo_b: number | null;
  ci_hi_b: number | null;
  welch_t: number | null;
  welch_df: number | null;
  p_two_tailed: number | null;
  cohen_d: number | null;
  /** Why t, p or d is missing, in words; null when all are defined. */
  note: string | null;
}

function grouped(observations: readonly ArmObservation[]): Map<string, Map<string, ArmObservation[]>> {
  const cells = new Map<string, Map<string, ArmObservation[]>>();
  for (const o of observations) {
    let arms = cells.get(o.cell);
    if (!arms) cells.set(o.cell, (arms = new Map()));
    const list = arms.get(o.arm);
    if (list) list.push(o);
    else arms.set(o.arm, [o]);
  }
  return cells;
}

/** Mean and 95% CI per (metric, cell, arm), cells and arms in first-seen order. */
export function armSummaries(observations: readonly ArmObservation[], metrics: readonly string[]): ArmSummary[] {
  const out: ArmSummary[] = [];
  for (const metric of metrics)
    for (const [cell, arms] of grouped(observations))
      for (const [arm, runs] of arms) out.push({ metric, cell, arm, ...meanCi(runs.map((r) => r.metrics[metric])) });
  return out;
}

/** Welch's t, its two-tailed p and Cohen's d for every pair of arms of every cell, per metric (arm order: first seen). */
export function armPairs(observations: readonly ArmObservation[], metrics: readonly string[]): ArmPairRow[] {
  const out: ArmPairRow[] = [];
  for (const metric of metrics)
    for (const [cell, arms] of grouped(observations)) {
      const names = [...arms.keys()];
      for (let i = 0; i < names.length; i++)
        for (let j = i + 1; j < names.length; j++) {
          const a = arms.get(names[i])!.map((r) => r.metrics[metric]);
          const b = arms.get(names[j])!.map((r) => r.metrics[metric]);
          const ca = meanCi(a);
          const cb = meanCi(b);
          const cmp = compareArms(a, b);
          out.push({
            metric,
            cell,
            arm_a: names[i],
            arm_b: names[j],
            n_a: ca.n,
            mean_a: ca.mean,
            ci_lo_a: ca.lo,
            ci_hi_a: ca.hi,
            n_b: cb.n,
            mean_b: cb.mean,
            ci_lo_b: cb.lo,
            ci_hi_b: cb.hi,
            welch_t: cmp.t,
            welch_df: cmp.df,
            p_two_tailed: cmp.p,
            cohen_d: cmp.d,
            note: cmp.undefinedBecause,
          });
        }
    }
  return out;
}
