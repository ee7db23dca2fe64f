import { detection, type Detection } from '../metrics/detection.js';
import { armOf } from '@panta/core';
import { meanSe } from '@panta/report';
import type { TeamRow } from './data.js';

/** A mean over trials with its band: each trial's value is first averaged over the group's prompts. */
export interface TrialMean {
  mean: number | null;
  /** mean ± one standard error over trials (sd/√n, sample sd); null with a single trial. */
  se_lo: number | null;
  se_hi: number | null;
  trials: number;
  runs: number;
}

/** Averages `value` per trial (over the rows of that trial: prompts, runs), then over trials with a standard error. */
export function trialMean(rows: readonly TeamRow[], value: (r: TeamRow) => number | null): TrialMean {
  const byTrial = new Map<number, number[]>();
  for (const r of rows) {
    const v = value(r);
    if (v === null) continue;
    const list = byTrial.get(r.trial);
    if (list) list.push(v);
    else byTrial.set(r.trial, [v]);
  }
  const perTrial = [...byTrial.values()].map((vs) => vs.reduce((a, b) => a + b, 0) / vs.length);
  const { mean, se } = meanSe(perTrial);
  return {
    mean,
    se_lo: mean === null || se === null ? null : mean - se,
    se_hi: mean === null || se === null ? null : mean + se,
    trials: perTrial.length,
    runs: new Set(rows.map((r) => r.run_id)).size,
  };
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}

/** Arms in a stable reading order: the plain team first, then the mitigations by name. */
export function armOrder(arms: Iterable<string>): string[] {
  return [...new Set(arms)].sort((a, b) => (a === 'none' ? -1 : b === 'none' ? 1 : a.localeCompare(b)));
}

/** Relay and hub answers (one row per run). */
export function answerRows(rows: readonly TeamRow[]): TeamRow[] {
  return rows.filter((r) => r.dynamics === 'relay' || r.dynamics === 'hub');
}

/** Debate turns. */
export function debateRows(rows: readonly TeamRow[]): TeamRow[] {
  return rows.filter((r) => r.dynamics === 'debate');
}

/** Lost in propagation: fact recall and exact match of relay / hub answers per (dynamics, arm, population, N). */
export interface PropagationPoint {
  dynamics: string;
  arm: string;
  population: string;
  n: number;
  metric: 'fact recall' | 'exact match';
  value: number | null;
  se_lo: number | null;
  se_hi: number | null;
  trials: number;
  runs: number;
}

export function propagationPoints(rows: readonly TeamRow[]): PropagationPoint[] {
  const out: PropagationPoint[] = [];
  for (const group of groupBy(answerRows(rows), (r) => `${r.dynamics}\u0000${r.arm}\u0000${r.population}\u0000${r.n}`).values()) {
    const { dynamics, arm, population, n } = group[0];
    for (const [metric, value] of [
      ['fact recall', (r: TeamRow) => r.fact_recall],
      ['exact match', (r: TeamRow) => r.exact_match],
    ] as const) {
      const m = trialMean(group, value);
      out.push({ dynamics, arm, population, n, metric, value: m.mean, se_lo: m.se_lo, se_hi: m.se_hi, trials: m.trials, runs: m.runs });
    }
  }
  return out.sort(
    (a, b) => a.dynamics.localeCompare(b.dynamics) || a.arm.localeCompare(b.arm) || a.population.localeCompare(b.population) || a.n - b.n,
  );
}

/** FOCUS and the voted solution's score per (arm, turn) over debates. */
export interface FocusPoint {
  arm: string;
  turn: number;
  score: number | null;
  score_se_lo: number | null;
  score_se_hi: number | null;
  focus: number | null;
  focus_se_lo: number | null;
  focus_se_hi: number | null;
  trials: number;
  runs: number;
}

export function focusPoints(rows: readonly TeamRow[]): FocusPoint[] {
  const order = armOrder(debateRows(rows).map((r) => r.arm));
  return [...groupBy(debateRows(rows), (r) => `${r.arm}\u0000${r.turn}`).values()]
    .map((g) => {
      const s = trialMean(g, (r) => r.fact_recall);
      const f = trialMean(g, (r) => r.focus);
      return {
        arm: g[0].arm,
        turn: g[0].turn,
        score: s.mean,
        score_se_lo: s.se_lo,
        score_se_hi: s.se_hi,
        focus: f.mean,
        focus_se_lo: f.se_lo,
        focus_se_hi: f.se_hi,
        trials: s.trials,
        runs: s.runs,
      };
    })
    .sort((a, b) => order.indexOf(a.arm) - order.indexOf(b.arm) || a.turn - b.turn);
}

/** Problem drift per arm, over debates (one per run): prevalence, recovery, onset, cost. */
export interface DriftSummary {
  arm: string;
  debates: number;
  drifting: number;
  /** drifting / debates. */
  prevalence: number | null;
  recovered: number;
  /** recovered / drifting; null (undefined) when no debate drifted. */
  recovery: number | null;
  mean_onset: number | null;
  /** Final turn's score (the debate's answer), mean over debates. */
  final_score: number | null;
  calls_per_debate: number | null;
  tokens_per_debate: number | null;
}

export function driftSummaries(rows: readonly TeamRow[]): DriftSummary[] {
  const debates = debateRows(rows);
  const byArm = groupBy(debates, (r) => r.arm);
  return armOrder(byArm.keys()).map((arm) => {
    const runs = [...groupBy(byArm.get(arm)!, (r) => r.run_id).values()].map((turns) => turns.sort((a, b) => a.turn - b.turn));
    const drifted = runs.filter((t) => t[0].drift_onset !== null);
    const recovered = drifted.filter((t) => t[0].recovered === true).length;
    const avg = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    return {
      arm,
      debates: runs.length,
      drifting: drifted.length,
      prevalence: runs.length > 0 ? drifted.length / runs.length : null,
      recovered,
      recovery: drifted.length > 0 ? recovered / drifted.length : null,
      mean_onset: avg(drifted.map((t) => t[0].drift_onset as number)),
      final_score: avg(runs.map((t) => t.at(-1)!.fact_recall)),
      calls_per_debate: avg(runs.map((t) => t.reduce((s, r) => s + r.calls, 0))),
      tokens_per_debate: avg(runs.map((t) => t.reduce((s, r) => s + r.prompt_tokens + r.completion_tokens, 0))),
    };
  });
}

/**
 * DRIFTJudge verdicts against gold-based drift, per arm: every debate turn the judge ran on (not arm
 * drift-policy-gold, whose verdicts are the gold's, with no judge).
 */
export function judgeDetection(rows: readonly TeamRow[]): { arm: string; detection: Detection }[] {
  const judged = debateRows(rows).filter((r) => r.judge_verdict !== null && armOf(r.arm).judge !== 'gold');
  const byArm = groupBy(judged, (r) => r.arm);
  return armOrder(byArm.keys()).map((arm) => ({
    arm,
    detection: detection(
      byArm.get(arm)!.map((r) => ({ flagged: r.judge_verdict === 'failure' ? null : r.judge_verdict === 'drift', drifting: r.drifting })),
    ),
  }));
}

/** Calls and tokens per (dynamics, arm, population), per run. */
export interface CostRow {
  dynamics: string;
  arm: string;
  population: string;
  runs: number;
  calls_per_run: number;
  prompt_tokens_per_run: number;
  completion_tokens_per_run: number;
}

export function costRows(rows: readonly TeamRow[]): CostRow[] {
  return [...groupBy(rows, (r) => `${r.dynamics}\u0000${r.arm}\u0000${r.population}`).values()]
    .map((g) => {
      const runs = new Set(g.map((r) => r.run_id)).size;
      const sum = (f: (r: TeamRow) => number) => g.reduce((s, r) => s + f(r), 0) / runs;
      return {
        dynamics: g[0].dynamics,
        arm: g[0].arm,
        population: g[0].population,
        runs,
        calls_per_run: sum((r) => r.calls),
        prompt_tokens_per_run: sum((r) => r.prompt_tokens),
        completion_tokens_per_run: sum((r) => r.completion_tokens),
      };
    })
    .sort((a, b) => a.dynamics.localeCompare(b.dynamics) || a.arm.localeCompare(b.arm) || a.population.localeCompare(b.population));
}
