import { join } from 'node:path';
import { defineTable, type RowOf } from '@panta/corpus';

/**
 * The columns of travel.parquet (docs/travel.md): one row per complete run of a prompt with checkable
 * assertions (the travel scenarios), the measures of Hallucination as Context Drift section 4.4. Null where a
 * measure is undefined; its `_note` column says why in words.
 */
export const TRAVEL_TABLE = defineTable('travel', [
  { name: 'run_id', type: 'VARCHAR', meaning: 'identifier of the run (prompt, geometry, N, temperature, protocol, trial)' },
  { name: 'config_id', type: 'VARCHAR', meaning: 'identifier of the run configuration, shared by its trials' },
  { name: 'trial', type: 'INTEGER', meaning: 'trial index of the configuration (0-based)' },
  { name: 'prompt_id', type: 'VARCHAR', meaning: 'identifier of the prompt in the dataset' },
  { name: 'protocol', type: 'VARCHAR', meaning: 'coordination protocol of the run' },
  { name: 'assertions_made', type: 'INTEGER', meaning: 'assertions made (count)' },
  { name: 'assertions_wrong', type: 'INTEGER', meaning: 'wrong assertions (count)' },
  { name: 'hr', type: 'DOUBLE', nullable: true, meaning: 'hallucination rate (share)' },
  { name: 'hr_note', type: 'VARCHAR', nullable: true, meaning: 'why hr is undefined, where it is' },
  { name: 'tcs', type: 'DOUBLE', nullable: true, meaning: 'team cohesion score' },
  { name: 'tcs_note', type: 'VARCHAR', nullable: true, meaning: 'why tcs is undefined, where it is' },
  { name: 'detection_step', type: 'INTEGER', nullable: true, meaning: 'step drift was detected at' },
  { name: 'detection_note', type: 'VARCHAR', nullable: true, meaning: 'why detection is undefined, where it is' },
  { name: 'recovery_steps', type: 'INTEGER', nullable: true, meaning: 'steps to recover (count)' },
  { name: 'recovery_note', type: 'VARCHAR', nullable: true, meaning: 'why recovery is undefined, where it is' },
  { name: 'calls', type: 'INTEGER', meaning: 'LLM calls, retries and extra calls included (count)' },
  { name: 'cds_sys', type: 'DOUBLE[]', meaning: 'system-level ssvp divergence (CDS) per sweep' },
  /** TCS per dimension (date, location, budget, schedule, recommendation), null where unscored. */
  { name: 'tcs_dims', type: 'DOUBLE[]', absent: [], meaning: 'team cohesion score per dimension' },
  /** Who scored HR and TCS: `reference` (the deterministic check) or the LLM judge's backend:model. */
  { name: 'judge', type: 'VARCHAR', absent: 'reference', meaning: 'judge name' },
  /** LLM-judge rubric replies that failed (unparsable or a failed call), left out of HR and TCS. */
  { name: 'judge_failures', type: 'INTEGER', absent: 0, meaning: 'judge failures (count)' },
  /** The agents' answers: the paper's task messages (section 5.5). Null in a table written before it existed. */
  { name: 'task_calls', type: 'INTEGER', nullable: true, absent: null, meaning: 'task calls, as the paper counts them (count)' },
  /** ssvp's summaries and merges; full-broadcast's broadcasts (agent x teammate x exchange); 0 for no-sync. */
  { name: 'sync_calls', type: 'INTEGER', nullable: true, absent: null, meaning: 'synchronisation calls, as the paper counts them (count)' },
]);

/** One row of travel.parquet. */
export type TravelTableRow = RowOf<typeof TRAVEL_TABLE>;

/** travel.parquet's file in the corpus folder. */
export const TRAVEL_FILE = 'travel.parquet';

export function travelTablePath(out: string): string {
  return join(out, TRAVEL_FILE);
}
