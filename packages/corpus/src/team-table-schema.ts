import type { RunColumns } from '@panta/core';
import { RUN_ID_COLUMNS, type ColumnDef } from './event-schema.js';

/**
 * The columns of teams.parquet (docs/teams.md, issue 20): one row per complete team run (relay, hub, debate)
 * and turn, written at finish beside runs.parquet. Relay and hub runs have one turn (their answer); a
 * debate has one per turn t = 1..R, scored on the turn's solution. Population runs have no rows.
 */
export const TEAM_COLUMNS: readonly ColumnDef[] = [
  ...RUN_ID_COLUMNS,
  { name: 'dynamics', type: 'VARCHAR' },
  /** The team's arm: `none` (protocol glauber), `drift-policy` or `regenerate`. */
  { name: 'arm', type: 'VARCHAR' },
  /** The population arm (hidden beliefs: probe / homo, ...); null where the sweep grids none. */
  { name: 'population_arm', type: 'VARCHAR' },
  { name: 'turn', type: 'INTEGER' },
  { name: 'answer_event', type: 'BIGINT' },
  { name: 'answer', type: 'VARCHAR' },
  { name: 'tag', type: 'VARCHAR' },
  { name: 'exact_match', type: 'DOUBLE' },
  { name: 'fact_recall', type: 'DOUBLE' },
  { name: 'focus', type: 'DOUBLE' },
  { name: 'drifting', type: 'BOOLEAN' },
  { name: 'drift_onset', type: 'INTEGER' },
  { name: 'recovered', type: 'BOOLEAN' },
  { name: 'judge_verdict', type: 'VARCHAR' },
  { name: 'regenerated', type: 'BOOLEAN' },
  { name: 'feedback', type: 'BOOLEAN' },
  { name: 'calls', type: 'BIGINT' },
  { name: 'prompt_tokens', type: 'BIGINT' },
  { name: 'completion_tokens', type: 'BIGINT' },
];

/** One row of teams.parquet as written. */
export interface TeamTableRow extends RunColumns {
  dynamics: string;
  arm: string;
  population_arm: string | null;
  turn: number;
  answer_event: number | null;
  answer: string | null;
  tag: string | null;
  exact_match: number;
  fact_recall: number;
  focus: number | null;
  drifting: boolean;
  drift_onset: number | null;
  recovered: boolean | null;
  judge_verdict: string | null;
  regenerated: boolean;
  feedback: boolean;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}
