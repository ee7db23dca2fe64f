import type { RunPlan } from '@panta/core';
import { type AddedTable, writeParquetTable } from '@panta/corpus';
import { llmTravelJudge } from './llm-judge.js';
import { TRAVEL_FILE, TRAVEL_TABLE, travelTablePath } from './table-schema.js';
import { isTravelRun, travelTableRows } from './table-rows.js';
import { checkTravelTable } from './verify-table.js';

/**
 * travel.parquet (docs/travel.md): written at finish when the sweep has travel runs (prompts with
 * assertions) and every run is complete, HR and TCS scored by the sweep's LLM judge when it has one, else by
 * the reference check; `panta verify` recomputes it.
 */
export const travelTable: AddedTable = {
  name: 'travel',
  file: TRAVEL_FILE,
  decl: TRAVEL_TABLE,
  applies: (runs: readonly RunPlan[]) => runs.some(isTravelRun),
  async write(out, complete, judge) {
    await writeParquetTable(
      travelTablePath(out),
      TRAVEL_TABLE,
      await travelTableRows(out, complete, judge ? llmTravelJudge(judge) : undefined),
    );
  },
  check: checkTravelTable,
};
