import { compareArms } from '@panta/core';
import type { Cell, Table } from '@panta/report';
import { armOrder, debateRows } from './aggregate.js';
import type { TeamRow } from './data.js';

/**
 * Significance between team arms (the boards paper's "significance against vanilla"): each arm against the
 * plain team (arm `none`) of the same team, population and size N, one observation per trial (the trial's
 * value averaged over its prompts and runs, as the team tables' means are). Welch's t (two-tailed p) and
 * Cohen's d from core's compareArms, the same as the population arm tests; undefined values say why in words.
 */
export interface TeamArmTest {
  dynamics: string;
  population: string;
  n: number;
  metric: string;
  arm: string;
  /** The arm compared against: always `none` (the plain team). */
  baseline: string;
  trials_arm: number;
  trials_baseline: number;
  mean_arm: number | null;
  mean_baseline: number | null;
  welch_t: number | null;
  welch_df: number | null;
  p_two_tailed: number | null;
  cohen_d: number | null;
  note: string | null;
}

/** The baseline arm every other arm is tested against. */
export const BASELINE_ARM = 'none';

/** One value per (run, metric): relay and hub answers as they are; a debate by its final turn and whether it drifted. */
function runValues(rows: readonly TeamRow[]): { row: TeamRow; metrics: Record<string, number | null> }[] {
  const out: { row: TeamRow; metrics: Record<string, number | null> }[] = [];
  for (const r of rows)
    if (r.dynamics === 'relay' || r.dynamics === 'hub')
      out.push({ row: r, metrics: { 'fact recall': r.fact_recall, 'exact match': r.exact_match } });
  const debates = new Map<string, TeamRow[]>();
  for (const r of debateRows(rows)) debates.set(r.run_id, [...(debates.get(r.run_id) ?? []), r]);
  for (const turns of debates.values()) {
    const last = turns.reduce((a, b) => (b.turn > a.turn ? b : a));
    out.push({ row: last, metrics: { 'final score': last.fact_recall, drifted: turns.some((t) => t.drift_onset !== null) ? 1 : 0 } });
  }
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Per-trial means of one metric over a group's runs (trials with no defined value are left out). */
function perTrial(runs: readonly { row: TeamRow; metrics: Record<string, number | null> }[], metric: string): number[] {
  const byTrial = new Map<number, number[]>();
  for (const { row, metrics } of runs) {
    const v = metrics[metric];
    if (v === null || v === undefined || !Number.isFinite(v)) continue;
    byTrial.set(row.trial, [...(byTrial.get(row.trial) ?? []), v]);
  }
  return [...byTrial.values()].map(mean);
}

/** Every arm other than `none` against `none`, per (team, population, N, metric); groups without `none` are left out. */
export function teamArmTests(rows: readonly TeamRow[]): TeamArmTest[] {
  const groups = new Map<string, { row: TeamRow; metrics: Record<string, number | null> }[]>();
  for (const v of runValues(rows)) {
    const key = `${v.row.dynamics}\u0000${v.row.population}\u0000${v.row.n}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  const out: TeamArmTest[] = [];
  for (const runs of groups.values()) {
    const { dynamics, population, n } = runs[0].row;
    const arms = armOrder(runs.map((r) => r.row.arm));
    if (arms[0] !== BASELINE_ARM) continue;
    for (const metric of Object.keys(runs[0].metrics)) {
      const base = perTrial(
        runs.filter((r) => r.row.arm === BASELINE_ARM),
        metric,
      );
      for (const arm of arms.slice(1)) {
        const values = perTrial(
          runs.filter((r) => r.row.arm === arm),
          metric,
        );
        const c = compareArms(values, base);
        out.push({
          dynamics,
          population,
          n,
          metric,
          arm,
          baseline: BASELINE_ARM,
          trials_arm: values.length,
          trials_baseline: base.length,
          mean_arm: values.length > 0 ? mean(values) : null,
          mean_baseline: base.length > 0 ? mean(base) : null,
          welch_t: c.t,
          welch_df: c.df,
          p_two_tailed: c.p,
          cohen_d: c.d,
          note: c.undefinedBecause,
        });
      }
    }
  }
  return out.sort((a, b) => a.dynamics.localeCompare(b.dynamics) || a.population.localeCompare(b.population) || a.n - b.n);
}

export function teamArmTestTable(rows: readonly TeamRow[]): Table | null {
  const tests = teamArmTests(rows);
  if (tests.length === 0) return null;
  return {
    id: 'team-arm-tests',
    title: 'Teams: each arm against the plain team (Welch t, Cohen d)',
    caption:
      'Each arm against arm none (the plain team) of the same team, population and size N, one observation per trial (its value averaged over the ' +
      "trial's prompts): relay and hub answers by fact recall and exact match, debates by the final turn's score and whether the debate drifted (1 or 0). " +
      "Welch's t with its Welch–Satterthwaite df and two-tailed p, Cohen's d with the pooled SD (t and d > 0 when the arm's mean is higher); " +
      'undefined values (fewer than two trials in an arm, no variance) say why in the note.',
    columns: [
      'team',
      'population',
      'N',
      'metric',
      'arm',
      'baseline',
      'trials (arm)',
      'trials (baseline)',
      'mean (arm)',
      'mean (baseline)',
      'Welch t',
      'df',
      'p (two-tailed)',
      "Cohen's d",
      'note',
    ],
    rows: tests.map((t): Cell[] => [
      t.dynamics,
      t.population,
      t.n,
      t.metric,
      t.arm,
      t.baseline,
      t.trials_arm,
      t.trials_baseline,
      t.mean_arm,
      t.mean_baseline,
      t.welch_t,
      t.welch_df,
      t.p_two_tailed,
      t.cohen_d,
      t.note ?? '',
    ]),
  };
}
