import { ARM_METRIC_TITLES, ARM_METRICS, armObservations, armPairs, armSummaries, type ArmObservation } from '@panta/core';
import type { CorpusData } from './corpus-data.js';
import type { Cell, Table } from './table.js';

/**
 * The arm statistics (the synchronisation paper's Tables 1–3): per arm a mean with its 95% confidence
 * interval over trials, per pair of arms Welch's t test and Cohen's d. One computation with stats.parquet
 * (core's armObservations / armPairs), so the report and the file agree; arms are never pooled, and only
 * runs of one cell (prompt, geometry, N, k, T) are compared.
 */

/** The encoder CDS is compared on: ssvp's (spec ssvp.encoder), else the first. */
function cdsEncoder(data: CorpusData): string {
  return (data.manifest.spec as { ssvp?: { encoder?: string } }).ssvp?.encoder ?? data.encoders[0];
}

function observations(data: CorpusData): ArmObservation[] {
  return armObservations(data.runs, data.orderParams, cdsEncoder(data));
}

/** True when the corpus has more than one arm to compare. */
function armsToCompare(obs: readonly ArmObservation[]): boolean {
  return new Set(obs.map((o) => o.arm)).size > 1;
}

const METRIC_NOTE = ARM_METRICS.map((m) => `${m}: ${ARM_METRIC_TITLES[m]}`).join('; ');

/** Table 1 and 2 shape: mean and 95% CI per cell, arm and metric; null when the corpus grids no arm. */
export function armMeansTable(data: CorpusData): Table | null {
  const obs = observations(data);
  if (!armsToCompare(obs)) return null;
  const rows: Cell[][] = armSummaries(obs, ARM_METRICS).map((s) => [s.cell, s.arm, s.metric, s.n, s.mean, s.lo, s.hi, s.undefinedBecause]);
  return {
    id: 'arm-means',
    title: 'Arms: mean and 95% confidence interval over trials',
    caption:
      `per cell (a configuration without its arm) and arm, each trial one observation: the mean and its 95% confidence interval ` +
      `mean ± t(0.975, n − 1) · sd / √n; empty where it is undefined (the note says why). CDS on encoder ${cdsEncoder(data)}. ${METRIC_NOTE}.`,
    columns: ['cell', 'arm', 'metric', 'trials', 'mean', '95% CI low', '95% CI high', 'note'],
    rows,
    empty: 'No run is complete yet.',
  };
}

/** Table 3 shape: Welch's t, its degrees of freedom, two-tailed p and Cohen's d per pair of arms; null without arms. */
export function armTestsTable(data: CorpusData): Table | null {
  const obs = observations(data);
  if (!armsToCompare(obs)) return null;
  const rows: Cell[][] = armPairs(obs, ARM_METRICS).map((p) => [
    p.cell,
    p.metric,
    p.arm_a,
    p.arm_b,
    p.mean_a,
    p.mean_b,
    p.welch_t,
    p.welch_df,
    p.p_two_tailed,
    p.cohen_d,
    p.note,
  ]);
  return {
    id: 'arm-tests',
    title: "Arms compared: Welch's t test and Cohen's d",
    caption:
      "per cell, metric and pair of arms (A against B): Welch's t = (mean A − mean B) / √(sA²/nA + sB²/nB) with Welch–Satterthwaite degrees of freedom " +
      "and its two-tailed p; Cohen's d = (mean A − mean B) / pooled SD, pooled SD = √(((nA − 1) sA² + (nB − 1) sB²) / (nA + nB − 2)). " +
      'Empty where undefined (fewer than two trials in an arm, or no variance): the note says why. The same rows are in stats.parquet. ' +
      `${METRIC_NOTE}.`,
    columns: ['cell', 'metric', 'arm A', 'arm B', 'mean A', 'mean B', 'Welch t', 'df', 'p (two-tailed)', "Cohen's d", 'note'],
    rows,
    empty: 'No run is complete yet.',
  };
}
