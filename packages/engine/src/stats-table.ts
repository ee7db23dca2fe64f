import { ARM_METRICS, armObservations, armPairs, type ArmPairRow } from '@panta/core';
import { STATS_TABLE, statsTablePath, writeParquetTable, type OrderParamRow, type RunTableRow } from '@panta/corpus';

/** The rows of stats.parquet: every pair of arms of every cell, per metric (CDS on `encoder`). */
export function statsTableRows(runs: readonly RunTableRow[], orderParams: readonly OrderParamRow[], encoder: string): ArmPairRow[] {
  return armPairs(armObservations(runs, orderParams, encoder), ARM_METRICS);
}

/** Writes `<out>/stats.parquet` whole (no row when the sweep grids no arm); returns its path. */
export async function writeStatsTable(out: string, rows: readonly ArmPairRow[]): Promise<string> {
  const file = statsTablePath(out);
  await writeParquetTable(file, STATS_TABLE, rows);
  return file;
}
