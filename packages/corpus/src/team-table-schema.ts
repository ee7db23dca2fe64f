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
  { name: 'dynamics', type: 'VARCHAR' },
  /** The team's arm: `none` (protocol glauber), `drift-policy` or `regenerate`. */
  { name: 'arm', type: 'VARCHAR' },
  /** The population arm (hidden beliefs: probe / homo, ...); null where the sweep grids none. */
  { name: 'population_arm', type: 'VARCHAR', nullable: true },
  { name: 'turn', type: 'INTEGER' },
  { name: 'answer_event', type: 'BIGINT', nullable: true },
  { name: 'answer', type: 'VARCHAR', nullable: true },
  { name: 'tag', type: 'VARCHAR', nullable: true, values: TAGS },
  { name: 'exact_match', type: 'DOUBLE' },
  { name: 'fact_recall', type: 'DOUBLE' },
  { name: 'focus', type: 'DOUBLE', nullable: true },
  { name: 'drifting', type: 'BOOLEAN' },
  { name: 'drift_onset', type: 'INTEGER', nullable: true },
  { name: 'recovered', type: 'BOOLEAN', nullable: true },
  { name: 'judge_verdict', type: 'VARCHAR', nullable: true, values: JUDGE_VERDICTS },
  { name: 'regenerated', type: 'BOOLEAN' },
  { name: 'feedback', type: 'BOOLEAN' },
  { name: 'calls', type: 'BIGINT' },
  { name: 'prompt_tokens', type: 'BIGINT' },
  { name: 'completion_tokens', type: 'BIGINT' },
]);

/** The columns of teams.parquet, in file order. */
export const TEAM_COLUMNS = TEAMS_TABLE.columns;

/** One row of teams.parquet. */
export type TeamTableRow = RowOf<typeof TEAMS_TABLE>;
