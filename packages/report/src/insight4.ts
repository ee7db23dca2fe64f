import type { OrderParamRow } from '@panta/corpus';
import { layout, type Layout } from './aggregate.js';
import { armColumns, armNote, armOf, armsPresent, exclusionNote, pooledRuns } from './arms.js';
import type { CorpusData, RunInfo } from './corpus-data.js';
import { mean, meanSe, pearsonFisher, type Spread } from './stats.js';
import type { Cell, Table } from './table.js';

/*
 * The paper's Insight 4, from a finished corpus: what stopping every run at a fixed sweep t = k would have cost
 * (truncation), and how semantic agreement goes with factual accuracy (the cohesion-accuracy correlation).
 * Both read the order parameters of the first encoder (the main-text observables) and pool the runs the main
 * text pools (every prompt but the excluded ones), arms apart.
 */

/** Each pooled run's order-parameter rows of one encoder, by sweep; runs without rows are left out. */
function seriesOf(data: CorpusData, encoder: string): { run: RunInfo; rows: OrderParamRow[] }[] {
  const byRun = new Map<string, OrderParamRow[]>();
  for (const p of data.orderParams) {
    if (p.encoder !== encoder) continue;
    const rows = byRun.get(p.run_id);
    if (rows) rows.push(p);
    else byRun.set(p.run_id, [p]);
  }
  return pooledRuns(data)
    .filter((r) => byRun.has(r.run_id))
    .map((run) => ({ run, rows: byRun.get(run.run_id)!.sort((a, b) => a.sweep - b.sweep) }));
}

/** The run's snapshot at sweep k: its last row at or before k (a run that stopped early holds its last one). */
function at(rows: readonly OrderParamRow[], k: number): OrderParamRow {
  let found = rows[0];
  for (const r of rows) if (r.sweep <= k) found = r;
  return found;
}

const absDiff = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.abs(a - b));

/** The spread of one configuration's trials: one sd or one se (null below two trials). */
function spreadOf(xs: readonly (number | null)[], spread: Spread): number | null {
  const { se, n } = meanSe(xs);
  return se === null ? null : spread === 'se' ? se : se * Math.sqrt(n);
}

/** One row of the truncation table: stopping every run of `runs` at t = k. */
function truncationRow(runs: ReturnType<typeof seriesOf>, k: number, spread: Spread): Cell[] {
  let saved = 0;
  let full = 0;
  const dm: (number | null)[] = [];
  const drho: (number | null)[] = [];
  const configs = new Map<string, { k: OrderParamRow[]; last: OrderParamRow[] }>();
  for (const { run, rows } of runs) {
    const last = rows.at(-1)!;
    const cut = at(rows, k);
    saved += run.n * Math.max(0, last.sweep - k);
    full += run.n * (last.sweep + 1);
    dm.push(absDiff(cut.magnetisation, last.magnetisation));
    drho.push(absDiff(cut.rho, last.rho));
    const c = configs.get(run.config_id) ?? { k: [], last: [] };
    c.k.push(cut);
    c.last.push(last);
    configs.set(run.config_id, c);
  }
  const perConfig = (field: 'magnetisation' | 'rho') =>
    mean([...configs.values()].map((c) => absDiff(mean(c.k.map((r) => r[field])), mean(c.last.map((r) => r[field])))));
  const yardstick = (field: 'magnetisation' | 'rho') =>
    mean(
      [...configs.values()].map((c) =>
        spreadOf(
          c.last.map((r) => r[field]),
          spread,
        ),
      ),
    );
  return [
    k,
    full > 0 ? (100 * saved) / full : null,
    runs.length,
    mean(dm),
    perConfig('magnetisation'),
    yardstick('magnetisation'),
    mean(drho),
    perConfig('rho'),
    yardstick('rho'),
  ];
}

/**
 * What stopping at t = k would have cost, for each k before the last sweep: |Δm| and |Δρ| between the snapshot
 * at k and the run's last one (per run, and between the trial means of each configuration), against the
 * spread of the final values over trials, and the agent calls not made.
 */
export function truncationTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const encoder = data.encoders[0];
  const spread = data.spread ?? 'sd';
  const arms = armColumns(data);
  const all = encoder === undefined ? [] : seriesOf(data, encoder).filter(({ run }) => lay.runOf.has(run.run_id));
  const lastSweep = Math.max(0, ...all.map(({ rows }) => rows.at(-1)!.sweep));
  const rows: Cell[][] = [];
  for (const arm of armsPresent(
    all.map((s) => s.run),
    arms,
  )) {
    const runs = all.filter(({ run }) => armOf(run, arms) === arm);
    for (let k = 0; k < lastSweep; k++) rows.push([...(arms.length > 0 ? [arm] : []), ...truncationRow(runs, k, spread)]);
  }
  const sp = spread.toUpperCase();
  return {
    id: 'truncation',
    title: 'Truncation: what stopping every run at t = k would have cost',
    caption:
      `each finished run cut at sweep k against its own last sweep (encoder ${encoder ?? 'none'}, the first; ρ from the judge's tags): ` +
      '|Δm| per run is the mean over runs of |m(k) − m(final)|; |Δm̄| per configuration the mean over configurations of |mean over trials of m(k) − ' +
      `mean over trials of m(final)|; ${sp} of m (final) the mean over configurations of ${spread === 'sd' ? 'the standard deviation' : 'the standard error'} ` +
      'of the final m over its trials, the yardstick: a cost below it is within the spread of the trials, not measurable with this many. ' +
      'The same for ρ, over the runs and configurations where ρ is defined at both sweeps. Calls saved: agent calls not made, ' +
      'Σ N·(final − k) / Σ N·(final + 1) over the runs (N at t = 0 and N per sweep; protocol and judge calls not counted): at k = 4 of 10 ' +
      "sweeps, 6/11 = 54.5%, the paper's Insight 4. A run that stopped early holds its last snapshot and saves nothing past it. " +
      `The spread is ${spread === 'sd' ? "one sd (the paper's; --spread se gives the standard error)" : "one se (--spread se; the paper's is the sd)"}.` +
      exclusionNote(data) +
      armNote(data),
    columns: [
      ...(arms.length > 0 ? ['arm'] : []),
      't = k',
      'calls saved %',
      'runs',
      '|Δm| per run',
      '|Δm̄| per configuration',
      `${sp} of m (final)`,
      '|Δρ| per run',
      '|Δρ̄| per configuration',
      `${sp} of ρ (final)`,
    ],
    rows,
    empty: 'No complete run has a sweep after t = 0 yet.',
  };
}

/** Pearson's r of cohesion q against accuracy 1 − ρ over runs, at t = 0 and at each run's last sweep. */
function correlationCells(runs: ReturnType<typeof seriesOf>): Cell[] {
  const cells: Cell[] = [];
  for (const pick of [(rows: OrderParamRow[]) => rows[0], (rows: OrderParamRow[]) => rows.at(-1)!]) {
    const pts = runs.map(({ rows }) => pick(rows)).filter((r) => r.rho !== null);
    const c = pearsonFisher(
      pts.map((r) => r.cohesion),
      pts.map((r) => 1 - r.rho!),
    );
    cells.push(c.n, c.r, c.lo, c.hi);
  }
  return cells;
}

/**
 * Insight 4 of the paper: semantic agreement correlates with factual convergence, and interaction strengthens
 * it. Per geometry: Pearson's r of cohesion q against accuracy 1 − ρ over the runs, at t = 0 and at the last
 * sweep, each with its 95% interval by Fisher's z.
 */
export function cohesionAccuracyTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const encoder = data.encoders[0];
  const arms = armColumns(data);
  const all = encoder === undefined ? [] : seriesOf(data, encoder).filter(({ run }) => lay.runOf.has(run.run_id));
  const rows: Cell[][] = [];
  for (const arm of armsPresent(
    all.map((s) => s.run),
    arms,
  )) {
    for (const g of lay.geometries) {
      const runs = all.filter(({ run }) => run.geometry === g && armOf(run, arms) === arm);
      if (runs.length > 0) rows.push([...(arms.length > 0 ? [arm] : []), g, ...correlationCells(runs)]);
    }
  }
  return {
    id: 'cohesion-accuracy',
    title: 'Cohesion against accuracy: Pearson r per geometry, at t = 0 and at the end',
    caption:
      `Pearson's r of cohesion q (encoder ${encoder ?? 'none'}, the first) against accuracy 1 − ρ, one point per run (configuration-trial pair: ` +
      'every pooled prompt, size and temperature of the geometry), among the runs with ρ defined at that sweep; at t = 0 (the independent ' +
      "answers) and at the last sweep (after the interaction). The interval is 95% by Fisher's z: tanh(atanh(r) ± 1.96/√(n − 3)), none below " +
      'n = 4 or at |r| = 1. r is null where q or 1 − ρ does not vary. A final r above the initial one is the paper\'s "interaction strengthens ' +
      'the association"; prompts pooled, so part of r is the prompts\' own differences in both.' +
      exclusionNote(data) +
      armNote(data),
    columns: [
      ...(arms.length > 0 ? ['arm'] : []),
      'geometry',
      'runs t = 0',
      'r t = 0',
      '95% lo t = 0',
      '95% hi t = 0',
      'runs final',
      'r final',
      '95% lo final',
      '95% hi final',
    ],
    rows,
    empty: 'No complete run has ρ defined yet.',
  };
}
