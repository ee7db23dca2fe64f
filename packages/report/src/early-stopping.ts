import { layout, type Layout } from './aggregate.js';
import { specSweeps, type CorpusData, type RunInfo } from './corpus-data.js';
import { mean } from './stats.js';
import type { Cell, Table } from './table.js';

/** Early stopping was asked for (or, in a corpus whose spec does not say, some run did stop early). */
export function earlyStoppingOn(data: CorpusData): boolean {
  return (
    (data.manifest.spec as { early_stopping?: unknown }).early_stopping !== undefined || data.runs.some((r) => r.stopped_early === true)
  );
}

/** What early stopping saved over some runs: counts over the complete runs (the others have no last sweep yet). */
export interface Savings {
  runs: number;
  stopped: number;
  meanLastSweep: number | null;
  calls: number;
  saved: number;
  /** saved / (calls + saved) in percent: the share of the calls full runs would have made; null when nothing was called. */
  percent: number | null;
}

export function savings(runs: readonly RunInfo[]): Savings {
  const done = runs.filter((r) => r.status === 'complete' && r.sweeps_run !== null);
  const calls = done.reduce((s, r) => s + (r.calls ?? 0), 0);
  const saved = done.reduce((s, r) => s + (r.calls_saved ?? 0), 0);
  return {
    runs: done.length,
    stopped: done.filter((r) => r.stopped_early).length,
    meanLastSweep: mean(done.map((r) => r.sweeps_run)),
    calls,
    saved,
    percent: calls + saved > 0 ? (100 * saved) / (calls + saved) : null,
  };
}

/** The sentence of the cost table's caption about early stopping. */
export function savingsNote(data: CorpusData): string {
  if (!earlyStoppingOn(data))
    return `Early stopping was off (no early_stopping in the spec): every run made all ${specSweeps(data.manifest)} sweeps.`;
  const s = savings(data.runs);
  const last = s.meanLastSweep === null ? 'n/a' : s.meanLastSweep.toFixed(1);
  const pct = s.percent === null ? 'n/a' : `${s.percent.toFixed(1)}%`;
  return (
    `Early stopping: ${s.stopped} of ${s.runs} runs stopped early, mean last sweep ${last} of ${specSweeps(data.manifest)}; ` +
    `calls saved: ${pct} of the calls full runs would make (${s.saved.toLocaleString('en-US')} agent calls not made, against ${s.calls.toLocaleString('en-US')} made; ` +
    'saved = (sweeps − last sweep) × N per run, share = saved / (calls + saved)).'
  );
}

/** Runs, stops, mean last sweep and calls saved per configuration; no rows unless some run stopped early. */
export function earlyStoppingTable(data: CorpusData, lay: Layout = layout(data)): Table {
  const varies = new Set(data.runs.map((r) => r.protocol)).size > 1;
  const groups = new Map<string, RunInfo[]>();
  for (const r of data.runs) groups.set(r.config_id, [...(groups.get(r.config_id) ?? []), r]);
  const any = data.runs.some((r) => r.stopped_early === true);
  const rows = !any
    ? []
    : [...groups.values()]
        .sort(
          (a, b) =>
            a[0].prompt_id.localeCompare(b[0].prompt_id) ||
            lay.geometries.indexOf(a[0].geometry) - lay.geometries.indexOf(b[0].geometry) ||
            a[0].n - b[0].n ||
            a[0].temperature - b[0].temperature ||
            a[0].protocol.localeCompare(b[0].protocol),
        )
        .map((runs): Cell[] => {
          const r = runs[0];
          const s = savings(runs);
          return [
            r.prompt_id,
            r.geometry,
            r.n,
            String(r.temperature),
            ...(varies ? [r.protocol] : []),
            s.runs,
            s.stopped,
            s.meanLastSweep,
            s.percent,
          ];
        });
  return {
    id: 'early-stopping',
    title: 'Early stopping per configuration',
    caption:
      `per configuration: the complete runs, how many stopped early (magnetisation and ρ settled over the last sweeps, the spec's early_stopping), ` +
      `their mean last sweep (of ${specSweeps(data.manifest)}) and the calls saved as a share of the calls the full runs would have made: ` +
      '100 × saved / (calls + saved), saved = (sweeps − last sweep) × N agent calls per run.',
    columns: [
      'prompt',
      'geometry',
      'N',
      'T',
      ...(varies ? ['protocol'] : []),
      'runs',
      'stopped early',
      'mean last sweep',
      'calls saved (%)',
    ],
    rows,
    empty: 'No run stopped early.',
  };
}
