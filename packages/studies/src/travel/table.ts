import type { RunPlan } from '@panta/core';
import { type AddedTable, CORPUS_FILES, TRAVEL_TABLE, travelTablePath, writeParquetTable } from '@panta/corpus';
import { llmTravelJudge } from './llm-judge.js';
import { isTravelRun, travelTableRows } from './table-rows.js';
import { checkTravelTable } from './verify-table.js';

/**
 * travel.parquet (docs/travel.md): written at finish when the sweep has travel runs (prompts with
 * assertions) and every run is complete, HR and TCS scored by the sweep's LLM judge when it has one, else by
 * the reference check; `panta verify` recomputes it.
 */
export const travelTable: AddedTable = {
  name: 'travel',
  file: CORPUS_FILES.travel,
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
