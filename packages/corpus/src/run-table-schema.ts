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
  { name: 'focus', type: 'DOUBLE[]', nullable: true, meaning: 'FOCUS per sweep (accuracy-based, dimensionless)' },
  { name: 'focus_total', type: 'DOUBLE', nullable: true, meaning: 'FOCUS over the whole run' },
  { name: 'drift_tolerance', type: 'DOUBLE', nullable: true, meaning: 'accuracy drop that counts as drift (share of agents)' },
  { name: 'drift_onset', type: 'INTEGER', nullable: true, meaning: 'first sweep of drift; NULL when the run never drifts' },
  { name: 'recovered', type: 'BOOLEAN', nullable: true, meaning: 'whether accuracy came back after drift; NULL without drift' },
]);

/**
 * runs.parquet (docs/DESIGN.md#tables), in file order: one row per planned run, written by `finishSweep` at the end of
 * every session and read by `panta verify` and the report. The identifying columns come first, as in the
 * event shards; totals, early stopping and drift follow. Null where unknown (a run not complete, a backend
 * without prices).
 */
export const RUNS_TABLE = defineTable('runs', [
  ...RUN_ID_COLUMNS,
  { name: 'dynamics', type: 'VARCHAR', meaning: 'update rule of the run (glauber, ...)' },
  /** The run's template and population arm names; null where the sweep does not grid that axis. */
  {
    name: 'template_arm',
    type: 'VARCHAR',
    nullable: true,
    meaning: 'template arm of the run; NULL when the sweep does not grid templates',
  },
  {
    name: 'population_arm',
    type: 'VARCHAR',
    nullable: true,
    meaning: 'population arm of the run; NULL when the sweep does not grid populations',
  },
  { name: 'seed', type: 'BIGINT', meaning: 'seed the run (or event) was drawn from' },
  { name: 'status', type: 'VARCHAR', values: RUN_STATUSES, meaning: 'complete, failed or pending' },
  { name: 'events', type: 'BIGINT', meaning: 'events written (count)' },
  { name: 'calls', type: 'BIGINT', nullable: true, meaning: 'LLM calls, retries and extra calls included (count)' },
  { name: 'retries', type: 'BIGINT', nullable: true, meaning: 'retried calls (count)' },
  { name: 'prompt_tokens', type: 'BIGINT', nullable: true, meaning: 'prompt tokens (count)' },
  { name: 'completion_tokens', type: 'BIGINT', nullable: true, meaning: 'completion tokens (count)' },
  { name: 'cost', type: 'DOUBLE', nullable: true, meaning: "cost in the backend's price table currency; NULL without prices" },
  /** LLM calls of the coordination protocols (merge, judge, moderator): rows with role <> agent. `calls` includes them. */
  { name: 'extra_calls', type: 'BIGINT', nullable: true, meaning: 'protocol calls besides the answers (count)' },
  { name: 'stopped_early', type: 'BOOLEAN', nullable: true, meaning: 'whether early stopping ended the run' },
  /** Last sweep the run executed (the spec's sweeps unless it stopped early). */
  { name: 'sweeps_run', type: 'INTEGER', nullable: true, meaning: 'sweeps the run completed (count)' },
  /** Agent calls early stopping did not make: (sweeps - sweeps_run) * N. */
  { name: 'calls_saved', type: 'BIGINT', nullable: true, meaning: 'calls early stopping saved (count)' },
  ...RUN_DRIFT_COLUMNS,
  { name: 'wall_ms', type: 'DOUBLE', nullable: true, meaning: 'wall time of the run (milliseconds)' },
]);

/** One row of runs.parquet as written. */
export type RunTableRow = RowOf<typeof RUNS_TABLE>;
