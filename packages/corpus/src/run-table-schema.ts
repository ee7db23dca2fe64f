import { RUN_ID_COLUMNS } from './event-schema.js';
import { defineColumns, defineTable, type RowOf } from './table.js';

/** What a run's status in runs.parquet can be. */
export const RUN_STATUSES = ['complete', 'failed', 'pending'] as const;

/**
 * The tag-derived measures of a run (FOCUS per sweep and summed, the drift tolerance, onset and recovery):
 * columns of runs.parquet that a post-hoc judge (`panta judge`) recomputes and replaces in its own copy.
 * Null until the run is complete and measured.
 */
export const RUN_DRIFT_COLUMNS = defineColumns([
  { name: 'focus', type: 'DOUBLE[]', nullable: true },
  { name: 'focus_total', type: 'DOUBLE', nullable: true },
  { name: 'drift_tolerance', type: 'DOUBLE', nullable: true },
  { name: 'drift_onset', type: 'INTEGER', nullable: true },
  { name: 'recovered', type: 'BOOLEAN', nullable: true },
]);

/**
 * runs.parquet (docs/DESIGN.md#tables), in file order: one row per planned run, written by `finishSweep` at the end of
 * every session and read by `panta verify` and the report. The identifying columns come first, as in the
 * event shards; totals, early stopping and drift follow. Null where unknown (a run not complete, a backend
 * without prices).
 */
export const RUNS_TABLE = defineTable('runs', [
  ...RUN_ID_COLUMNS,
  { name: 'dynamics', type: 'VARCHAR' },
  /** The run's template and population arm names; null where the sweep does not grid that axis. */
  { name: 'template_arm', type: 'VARCHAR', nullable: true },
  { name: 'population_arm', type: 'VARCHAR', nullable: true },
  { name: 'seed', type: 'BIGINT' },
  { name: 'status', type: 'VARCHAR', values: RUN_STATUSES },
  { name: 'events', type: 'BIGINT' },
  { name: 'calls', type: 'BIGINT', nullable: true },
  { name: 'retries', type: 'BIGINT', nullable: true },
  { name: 'prompt_tokens', type: 'BIGINT', nullable: true },
  { name: 'completion_tokens', type: 'BIGINT', nullable: true },
  { name: 'cost', type: 'DOUBLE', nullable: true },
  /** LLM calls of the coordination protocols (merge, judge, moderator): rows with role <> agent. `calls` includes them. */
  { name: 'extra_calls', type: 'BIGINT', nullable: true },
  { name: 'stopped_early', type: 'BOOLEAN', nullable: true },
  /** Last sweep the run executed (the spec's sweeps unless it stopped early). */
  { name: 'sweeps_run', type: 'INTEGER', nullable: true },
  /** Agent calls early stopping did not make: (sweeps - sweeps_run) * N. */
  { name: 'calls_saved', type: 'BIGINT', nullable: true },
  ...RUN_DRIFT_COLUMNS,
  { name: 'wall_ms', type: 'DOUBLE', nullable: true },
]);

/** The columns of runs.parquet, in file order. */
export const RUN_COLUMNS = RUNS_TABLE.columns;

/** One row of runs.parquet as written. */
export type RunTableRow = RowOf<typeof RUNS_TABLE>;
