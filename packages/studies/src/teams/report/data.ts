import { existsSync } from 'node:fs';
import { InputError } from '@panta/core';
import { omitColumns, queryRows, readRow, TEAMS_TABLE, teamsTablePath, type RowOf } from '@panta/corpus';

/** The columns of teams.parquet the report reads. */
const TEAM_READ = omitColumns(TEAMS_TABLE, [
  'geometry',
  'k',
  'temperature',
  'protocol',
  'answer_event',
  'answer',
  'tag',
  'regenerated',
  'feedback',
]);

/** One row of teams.parquet as the report reads it: the population arm as `population`, `none` where the sweep grids none. */
export type TeamRow = Omit<RowOf<typeof TEAM_READ>, 'population_arm'> & { population: string };

/** The team table of a corpus, in file order by run and turn; null when the corpus has none (no team runs). */
export async function loadTeams(dir: string): Promise<TeamRow[] | null> {
  const file = teamsTablePath(dir);
  if (!existsSync(file)) return null;
  try {
    return (await queryRows(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}') ORDER BY run_id, turn`)).map((r) => {
      const { population_arm, ...row } = readRow(TEAM_READ, r);
      return { ...row, population: population_arm ?? 'none' };
    });
  } catch (e) {
    throw new InputError(file, '', `unreadable Parquet (${(e as Error).message.split('\n')[0]})`, 'run the sweep again to rewrite it');
  }
}
