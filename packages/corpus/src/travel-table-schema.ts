import { defineTable, type RowOf } from './table.js';

/**
 * The columns of travel.parquet (docs/travel.md): one row per complete run of a prompt with checkable
 * assertions (the travel scenarios), the measures of Hallucination as Context Drift section 4.4. Null where a
 * measure is undefined; its `_note` column says why in words.
 */
export const TRAVEL_TABLE = defineTable('travel', [
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'config_id', type: 'VARCHAR' },
  { name: 'trial', type: 'INTEGER' },
  { name: 'prompt_id', type: 'VARCHAR' },
  { name: 'protocol', type: 'VARCHAR' },
  { name: 'assertions_made', type: 'INTEGER' },
  { name: 'assertions_wrong', type: 'INTEGER' },
  { name: 'hr', type: 'DOUBLE', nullable: true },
  { name: 'hr_note', type: 'VARCHAR', nullable: true },
  { name: 'tcs', type: 'DOUBLE', nullable: true },
  { name: 'tcs_note', type: 'VARCHAR', nullable: true },
  { name: 'detection_step', type: 'INTEGER', nullable: true },
  { name: 'detection_note', type: 'VARCHAR', nullable: true },
  { name: 'recovery_steps', type: 'INTEGER', nullable: true },
  { name: 'recovery_note', type: 'VARCHAR', nullable: true },
  { name: 'calls', type: 'INTEGER' },
  { name: 'cds_sys', type: 'DOUBLE[]' },
  /** TCS per dimension (date, location, budget, schedule, recommendation), null where unscored. */
  { name: 'tcs_dims', type: 'DOUBLE[]' },
  /** Who scored HR and TCS: `reference` (the deterministic check) or the LLM judge's backend:model. */
  { name: 'judge', type: 'VARCHAR' },
  /** LLM-judge rubric replies that failed (unparsable or a failed call), left out of HR and TCS. */
  { name: 'judge_failures', type: 'INTEGER' },
]);

/** The columns of travel.parquet, in file order. */
export const TRAVEL_COLUMNS = TRAVEL_TABLE.columns;

/** One row of travel.parquet. */
export type TravelTableRow = RowOf<typeof TRAVEL_TABLE>;
