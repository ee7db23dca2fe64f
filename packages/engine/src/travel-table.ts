import type { RunPlan, TravelJudge } from '@panta/core';
import { isTravelRun, TRAVEL_TABLE, type TravelTableRow, travelTablePath, travelTableRows, writeParquetTable } from '@panta/corpus';

/**
 * Writes `<out>/travel.parquet` whole when the sweep has travel runs (prompts with assertions; docs/travel.md)
 * and every run is complete; returns its path, or null when it writes none. HR and TCS are `judge`'s (the
 * sweep's LLM judge) when given, else the reference check's; the `judge` column says which.
 */
export async function writeTravelTable(
  out: string,
  runs: readonly RunPlan[],
  complete: readonly RunPlan[],
  judge?: TravelJudge,
): Promise<string | null> {
  if (!runs.some(isTravelRun) || complete.length !== runs.length) return null;
  const rows: TravelTableRow[] = await travelTableRows(out, complete, judge);
  const file = travelTablePath(out);
  await writeParquetTable(file, TRAVEL_TABLE, rows);
  return file;
}
