import { existsSync } from 'node:fs';
import { InputError } from '@panta/core';
import { queryRows, teamsTablePath } from '@panta/corpus';

/** One row of teams.parquet (packages/corpus/src/team-table-schema.ts), as the report reads it. */
export interface TeamRow {
  run_id: string;
  config_id: string;
  trial: number;
  prompt_id: string;
  n: number;
  dynamics: string;
  arm: string;
  /** The population arm, `none` where the sweep grids none. */
  population: string;
  turn: number;
  exact_match: number;
  fact_recall: number;
  focus: number | null;
  drifting: boolean;
  drift_onset: number | null;
  recovered: boolean | null;
  judge_verdict: 'drift' | 'no_drift' | 'failure' | null;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** The team table of a corpus, in file order by run and turn; null when the corpus has none (no team runs). */
export async function loadTeams(dir: string): Promise<TeamRow[] | null> {
  const file = teamsTablePath(dir);
  if (!existsSync(file)) return null;
  let rows: Record<string, unknown>[];
  try {
    rows = await queryRows(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}') ORDER BY run_id, turn`);
  } catch (e) {
    throw new InputError(file, '', `unreadable Parquet (${(e as Error).message.split('\n')[0]})`, 'run the sweep again to rewrite it');
  }
  return rows.map((r) => ({
    run_id: String(r.run_id),
    config_id: String(r.config_id),
    trial: Number(r.trial),
    prompt_id: String(r.prompt_id),
    n: Number(r.n),
    dynamics: String(r.dynamics),
    arm: String(r.arm),
    population: r.population_arm === null || r.population_arm === undefined ? 'none' : String(r.population_arm),
    turn: Number(r.turn),
    exact_match: Number(r.exact_match),
    fact_recall: Number(r.fact_recall),
    focus: num(r.focus),
    drifting: r.drifting === true,
    drift_onset: num(r.drift_onset),
    recovered: r.recovered === null || r.recovered === undefined ? null : r.recovered === true,
    judge_verdict: (r.judge_verdict ?? null) as TeamRow['judge_verdict'],
    calls: Number(r.calls),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
  }));
}
