import { TAGS, type TeamTurn } from '@panta/core';
import { RUN_ID_COLUMNS } from './event-schema.js';
import { defineTable, type RowOf, type Same } from './table.js';

/** The DRIFTJudge's verdicts (core's readDriftVerdict). */
export const JUDGE_VERDICTS = ['drift', 'no_drift', 'failure'] as const;
true satisfies Same<(typeof JUDGE_VERDICTS)[number] | null, TeamTurn['judge_verdict']>;

/**
 * The columns of teams.parquet (docs/teams.md): one row per complete team run (relay, hub, debate)
 * and turn, written at finish beside runs.parquet. Relay and hub runs have one turn (their answer); a
 * debate has one per turn t = 1..R, scored on the turn's solution. Population runs have no rows.
 */
export const TEAMS_TABLE = defineTable('teams', [
  ...RUN_ID_COLUMNS,
  { name: 'dynamics', type: 'VARCHAR', meaning: 'update rule of the run (glauber, ...)' },
  /** The team's arm: `none` (protocol glauber), `drift-policy`, `drift-policy-gold` or `regenerate`. */
  { name: 'arm', type: 'VARCHAR', meaning: 'arm' },
  /** The population arm (hidden beliefs: probe / homo, ...); null where the sweep grids none. */
  {
    name: 'population_arm',
    type: 'VARCHAR',
    nullable: true,
    meaning: 'population arm of the run; NULL when the sweep does not grid populations',
  },
  { name: 'turn', type: 'INTEGER', meaning: 'turn of a team protocol' },
  { name: 'answer_event', type: 'BIGINT', nullable: true, meaning: 'event of the answer' },
  { name: 'answer', type: 'VARCHAR', nullable: true, meaning: 'the answer extracted from the response' },
  {
    name: 'tag',
    type: 'VARCHAR',
    nullable: true,
    values: TAGS,
    meaning: "the sweep judge's tag: correct, hallucinated, not_known or judge_failure",
  },
  { name: 'exact_match', type: 'DOUBLE', meaning: 'exact-match accuracy (share)' },
  { name: 'fact_recall', type: 'DOUBLE', meaning: 'fact recall (share)' },
  {
    name: 'focus',
    type: 'DOUBLE',
    nullable: true,
    meaning: "FOCUS of the turn: fact recall minus the previous turn's (dimensionless); NULL on the first turn",
  },
  { name: 'drifting', type: 'BOOLEAN', meaning: 'whether the team drifted' },
  { name: 'drift_onset', type: 'INTEGER', nullable: true, meaning: 'first sweep of drift; NULL when the run never drifts' },
  { name: 'recovered', type: 'BOOLEAN', nullable: true, meaning: 'whether accuracy came back after drift; NULL without drift' },
  { name: 'judge_verdict', type: 'VARCHAR', nullable: true, values: JUDGE_VERDICTS, meaning: "the judge's verdict as given" },
  { name: 'regenerated', type: 'BOOLEAN', meaning: 'whether the answer was regenerated' },
  { name: 'feedback', type: 'BOOLEAN', meaning: 'feedback given' },
  { name: 'calls', type: 'BIGINT', meaning: 'LLM calls, retries and extra calls included (count)' },
  { name: 'prompt_tokens', type: 'BIGINT', meaning: 'prompt tokens (count)' },
  { name: 'completion_tokens', type: 'BIGINT', meaning: 'completion tokens (count)' },
]);

/** One row of teams.parquet. */
export type TeamTableRow = RowOf<typeof TEAMS_TABLE>;
