import type { Cell, Table } from '@panta/report';
import type { Rate } from '../metrics/detection.js';
import { costRows, debateRows, driftSummaries, judgeDetection, propagationPoints } from './aggregate.js';
import type { TeamRow } from './data.js';

/** A rate as a cell: its value, or in words why it is undefined (never NaN). */
export function rateCell(r: Rate): Cell {
  return r.value ?? `undefined (${r.undefined_because})`;
}

export function propagationTable(rows: readonly TeamRow[]): Table | null {
  const points = propagationPoints(rows);
  if (points.length === 0) return null;
  return {
    id: 'team-answers',
    title: 'Teams: fact recall and exact match of relay and hub answers',
    caption:
      'Per team, arm, population and size N: the mean over trials (each trial averaged over its prompts) and mean ± one standard error over trials ' +
      '(n/a with a single trial); the numbers of the figures "Lost in propagation" and "Belief injection".',
    columns: ['team', 'arm', 'population', 'N', 'metric', 'mean', 'mean − SE', 'mean + SE', 'trials', 'runs'],
    rows: points.map((p): Cell[] => [p.dynamics, p.arm, p.population, p.n, p.metric, p.value, p.se_lo, p.se_hi, p.trials, p.runs]),
  };
}

export function driftTableTeams(rows: readonly TeamRow[]): Table | null {
  if (debateRows(rows).length === 0) return null;
  return {
    id: 'team-drift-by-arm',
    title: 'Problem drift, recovery and cost per debate arm',
    caption:
      "Debates per arm: how many drift (below an earlier turn's best for 2+ consecutive turns), how many of those recover, the mean onset turn of the drifting ones, " +
      "the final turn's score (mean over debates), and calls and tokens (prompt + completion) per debate. Recovery is undefined (n/a) where no debate drifted.",
    columns: [
      'arm',
      'debates',
      'drifting',
      'drifting share',
      'recovered',
      'recovered share',
      'mean onset turn',
      'final score',
      'calls per debate',
      'tokens per debate',
    ],
    rows: driftSummaries(rows).map((s): Cell[] => [
      s.arm,
      s.debates,
      s.drifting,
      s.prevalence,
      s.recovered,
      s.recovery,
      s.mean_onset,
      s.final_score,
      s.calls_per_debate,
      s.tokens_per_debate,
    ]),
  };
}

export function judgeTable(rows: readonly TeamRow[]): Table | null {
  if (debateRows(rows).length === 0) return null;
  const per = judgeDetection(rows);
  return {
    id: 'team-driftjudge',
    title: 'DRIFTJudge: verdicts against gold-based drift',
    caption:
      'Every debate turn the DRIFTJudge compared with the previous one (turns 2 and later), per arm: a turn is drifting (the truth) when its voted solution lies in a run of ' +
      "2+ consecutive turns below an earlier turn's best score. A verdict that says neither DRIFT nor NO DRIFT, or is empty, is a judge failure and counts as a wrong verdict " +
      '(a miss on a drifting turn, a false alarm on a steady one). Precision = TP/(TP+FP), recall = TP/(TP+FN), specificity = TN/(TN+FP); each is undefined, in words, when its denominator is 0. ' +
      'In arm regenerate the verdict is on the turn as first generated, the truth on the turn kept (the regenerated one when the judge flagged it).',
    columns: ['arm', 'turns judged', 'TP', 'FP', 'TN', 'FN', 'judge failures', 'precision', 'recall', 'specificity', 'accuracy'],
    rows: per.map(({ arm, detection: d }): Cell[] => [
      arm,
      d.tp + d.fp + d.tn + d.fn,
      d.tp,
      d.fp,
      d.tn,
      d.fn,
      d.failures,
      rateCell(d.precision),
      rateCell(d.recall),
      rateCell(d.specificity),
      rateCell(d.accuracy),
    ]),
    empty: 'No DRIFTJudge verdict: every debate has a single turn.',
  };
}

export function teamCostTable(rows: readonly TeamRow[]): Table | null {
  if (rows.length === 0) return null;
  return {
    id: 'team-cost',
    title: 'Teams: calls and tokens per run and arm',
    caption:
      'Calls made (skipped calls and vote tallies count nothing) and tokens spent per run, by team, arm and population: what each arm costs over the plain team.',
    columns: ['team', 'arm', 'population', 'runs', 'calls per run', 'prompt tokens per run', 'completion tokens per run'],
    rows: costRows(rows).map((c): Cell[] => [
      c.dynamics,
      c.arm,
      c.population,
      c.runs,
      c.calls_per_run,
      c.prompt_tokens_per_run,
      c.completion_tokens_per_run,
    ]),
  };
}
