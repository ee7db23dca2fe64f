import type { RunColumns } from '@panta/core';
import { RUN_ID_COLUMNS, type ColumnDef } from './event-schema.js';

/**
 * The columns of runs.parquet (docs/DESIGN.md#tables), in file order: one row per planned run, written by `finishSweep`
 * at the end of every session and read by `panta verify` and the report. The identifying columns come first,
 * as in the event shards; totals, early stopping and drift follow.
 */
export const RUN_COLUMNS: readonly ColumnDef[] = [
  ...RUN_ID_COLUMNS,
  { name: 'dynamics', type: 'VARCHAR' },
  /** The run's template and population arm names; null where the sweep does not grid that axis. */
  { name: 'template_arm', type: 'VARCHAR' },
  { name: 'population_arm', type: 'VARCHAR' },
  { name: 'seed', type: 'BIGINT' },
  { name: 'status', type: 'VARCHAR' },
  { name: 'events', type: 'BIGINT' },
  { name: 'calls', type: 'BIGINT' },
  { name: 'retries', type: 'BIGINT' },
  { name: 'prompt_tokens', type: 'BIGINT' },
  { name: 'completion_tokens', type: 'BIGINT' },
  { name: 'cost', type: 'DOUBLE' },
  { name: 'extra_calls', type: 'BIGINT' },
  { name: 'stopped_early', type: 'BOOLEAN' },
  { name: 'sweeps_run', type: 'INTEGER' },
  { name: 'calls_saved', type: 'BIGINT' },
  { name: 'focus', type: 'DOUBLE[]' },
  { name: 'focus_total', type: 'DOUBLE' },
  { name: 'drift_tolerance', type: 'DOUBLE' },
  { name: 'drift_onset', type: 'INTEGER' },
  { name: 'recovered', type: 'BOOLEAN' },
  { name: 'wall_ms', type: 'DOUBLE' },
];

/** One row of runs.parquet as written: null where unknown (a run not complete, a backend without prices). */
export interface RunTableRow extends RunColumns {
  dynamics: string;
  template_arm: string | null;
  population_arm: string | null;
  seed: number;
  status: 'complete' | 'failed' | 'pending';
  events: number;
  calls: number | null;
  retries: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cost: number | null;
  extra_calls: number | null;
  stopped_early: boolean | null;
  sweeps_run: number | null;
  calls_saved: number | null;
  focus: (number | null)[] | null;
  focus_total: number | null;
  drift_tolerance: number | null;
  drift_onset: number | null;
  recovered: boolean | null;
  wall_ms: number | null;
}
