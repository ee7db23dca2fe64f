import type { ColumnDef } from './event-schema.js';

/**
 * The columns of travel.parquet (docs/travel.md): one row per complete run of a prompt with checkable
 * assertions (the travel scenarios), the measures of Hallucination as Context Drift section 4.4. Null where a
 * measure is undefined; its `_note` column says why in words.
 */
export const TRAVEL_COLUMNS: readonly ColumnDef[] = [
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'config_id', type: 'VARCHAR' },
  { name: 'trial', type: 'INTEGER' },
  { name: 'prompt_id', type: 'VARCHAR' },
  { name: 'protocol', type: 'VARCHAR' },
  { name: 'assertions_made', type: 'INTEGER' },
  { name: 'assertions_wrong', type: 'INTEGER' },
  { name: 'hr', type: 'DOUBLE' },
  { name: 'hr_note', type: 'VARCHAR' },
  { name: 'tcs', type: 'DOUBLE' },
  { name: 'tcs_note', type: 'VARCHAR' },
  { name: 'detection_step', type: 'INTEGER' },
  { name: 'detection_note', type: 'VARCHAR' },
  { name: 'recovery_steps', type: 'INTEGER' },
  { name: 'recovery_note', type: 'VARCHAR' },
  { name: 'calls', type: 'INTEGER' },
  { name: 'cds_sys', type: 'DOUBLE[]' },
  { name: 'tcs_dims', type: 'DOUBLE[]' },
  { name: 'judge', type: 'VARCHAR' },
  { name: 'judge_failures', type: 'INTEGER' },
];

export interface TravelTableRow {
  run_id: string;
  config_id: string;
  trial: number;
  prompt_id: string;
  protocol: string;
  assertions_made: number;
  assertions_wrong: number;
  hr: number | null;
  hr_note: string | null;
  tcs: number | null;
  tcs_note: string | null;
  detection_step: number | null;
  detection_note: string | null;
  recovery_steps: number | null;
  recovery_note: string | null;
  calls: number;
  cds_sys: (number | null)[];
  /** TCS per dimension (date, location, budget, schedule, recommendation), null where unscored. */
  tcs_dims: (number | null)[];
  /** Who scored HR and TCS: `reference` (the deterministic check) or the LLM judge's backend:model. */
  judge: string;
  /** LLM-judge rubric replies that failed (unparsable or a failed call), left out of HR and TCS. */
  judge_failures: number;
}
