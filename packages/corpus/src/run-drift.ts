import { driftStats, focusSeries } from '@panta/core';
import { RUN_DRIFT_COLUMNS } from './run-table-schema.js';
import type { ColumnsRow } from './table.js';

/** A run's drift columns of runs.parquet (RUN_DRIFT_COLUMNS). */
export type RunDriftColumns = ColumnsRow<typeof RUN_DRIFT_COLUMNS>;

/**
 * The drift columns of a run from its accuracy per snapshot (t = 0, 1, ...): FOCUS per sweep and summed,
 * drift onset and recovery at this tolerance. The one computation runs.parquet, a post-hoc judge's copy and
 * `panta verify` share.
 */
export function runDriftColumns(accuracy: readonly (number | null)[], tolerance: number): RunDriftColumns {
  return { focus: focusSeries(accuracy), ...driftStats(accuracy, tolerance), drift_tolerance: tolerance };
}

/** The drift columns of a run not measured (not complete, or without answers to measure). */
export const UNMEASURED_DRIFT: RunDriftColumns = Object.freeze(
  Object.fromEntries(RUN_DRIFT_COLUMNS.map((c) => [c.name, null])) as RunDriftColumns,
);
