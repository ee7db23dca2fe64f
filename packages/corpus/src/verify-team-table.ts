import { existsSync } from 'node:fs';
import { isTeamDynamics, type RunPlan } from '@panta/core';
import { CORPUS_FILES, runsTablePath, teamsTablePath } from './corpus-paths.js';
import { readParquetSql } from './duckdb.js';
import { queryRows } from './parquet-table.js';
import { teamDriftByRun, teamTableRows } from './team-table.js';
import { RUN_DRIFT_COLUMNS } from './run-table-schema.js';
import { firstDifference } from './table.js';
import type { TeamTableRow } from './team-table-schema.js';

const FIELDS = [
  'answer_event',
  'tag',
  'exact_match',
  'fact_recall',
  'focus',
  'drifting',
  'drift_onset',
  'recovered',
  'judge_verdict',
  'regenerated',
  'feedback',
  'calls',
  'prompt_tokens',
  'completion_tokens',
  'arm',
  'population_arm',
] as const satisfies readonly (keyof TeamTableRow)[];

const same = (a: unknown, b: unknown) => {
  const x = typeof a === 'bigint' ? Number(a) : (a ?? null);
  const y = typeof b === 'bigint' ? Number(b) : (b ?? null);
  return typeof x === 'number' && typeof y === 'number' ? Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x)) : x === y;
};

/**
 * teams.parquet against the metrics recomputed from the shards (every run complete), and runs.parquet's
 * FOCUS and drift of team runs against the same turns. Nothing to check in a sweep without team runs.
 */
export async function checkTeamTable(out: string, runs: readonly RunPlan[]): Promise<string[]> {
  if (!runs.some((r) => isTeamDynamics(r.dynamics))) return [];
  const file = teamsTablePath(out);
  if (!existsSync(file)) return [`${CORPUS_FILES.teams} is missing`];
  const expected = await teamTableRows(out, runs);
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  const problems: string[] = [];
  if (stored.length !== expected.length)
    problems.push(`${CORPUS_FILES.teams} has ${stored.length} rows, the events give ${expected.length}`);
  const byKey = new Map(stored.map((r) => [`${r.run_id}|${Number(r.turn)}`, r]));
  let mismatches = 0;
  for (const e of expected) {
    const s = byKey.get(`${e.run_id}|${e.turn}`);
    const field = s ? FIELDS.find((f) => !same(e[f], s[f])) : 'row';
    if (field && mismatches++ < 5)
      problems.push(
        `${CORPUS_FILES.teams}: ${e.run_id} turn ${e.turn}: ${field} ${s ? `${String(s[field] ?? null)} stored, ${String(e[field as keyof TeamTableRow] ?? null)} recomputed` : 'missing'}`,
      );
  }
  if (mismatches > 5) problems.push(`... and ${mismatches - 5} more team-metric mismatches`);
  const runsFile = runsTablePath(out);
  if (!existsSync(runsFile)) return problems;
  const drift = teamDriftByRun(expected);
  for (const r of await queryRows(`SELECT * FROM ${readParquetSql([runsFile])}`)) {
    const d = drift.get(String(r.run_id));
    const bad = d && firstDifference(RUN_DRIFT_COLUMNS, d, r, same);
    if (bad && problems.length < 10)
      problems.push(`${CORPUS_FILES.runs}: ${r.run_id}: ${bad} does not match the team's turns (${String(r[bad] ?? null)} stored)`);
  }
  return problems;
}
