import { join } from 'node:path';
import type { RunPlan } from '@panta/core';
import { addedTables, type RubricJudge } from '@panta/corpus';

/**
 * Writes each table a study added (registerTable) whose runs the sweep has, once every run is complete;
 * with `judge`, the sweep's LLM judge scores what the table scores. Returns the files written.
 */
export async function writeAddedTables(
  out: string,
  runs: readonly RunPlan[],
  complete: readonly RunPlan[],
  judge?: RubricJudge,
): Promise<string[]> {
  if (complete.length !== runs.length) return [];
  const files: string[] = [];
  for (const table of addedTables()) {
    if (!table.applies(runs)) continue;
    await table.write(out, complete, judge);
    files.push(join(out, table.file));
  }
  return files;
}
