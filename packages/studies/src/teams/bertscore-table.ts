import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { RunPlan } from '@panta/core';
import {
  type AddedTable,
  defineTable,
  queryRows,
  readManifest,
  readParquetSql,
  type RowOf,
  RUN_ID_COLUMNS,
  teamTableRows,
  writeParquetTable,
} from '@panta/corpus';
import { BertScorer } from '@panta/embed';

export const TEAM_BERTSCORE_FILE = 'team_bertscore.parquet';

/**
 * team_bertscore.parquet (docs/teams.md): one row per debate turn whose prompt has references (accepted answers):
 * BERTScore of the turn's solution against them, on the encoder `team.bertscore.model` names; no scores (NULL)
 * and no model where the spec names none.
 */
export const TEAM_BERTSCORE_TABLE = defineTable('team_bertscore', [
  ...RUN_ID_COLUMNS,
  { name: 'arm', type: 'VARCHAR', meaning: 'arm' },
  { name: 'turn', type: 'INTEGER', meaning: 'turn of a team protocol' },
  {
    name: 'bertscore_precision',
    type: 'DOUBLE',
    nullable: true,
    meaning: "BERTScore precision of the turn's solution; NULL without a model",
  },
  { name: 'bertscore_recall', type: 'DOUBLE', nullable: true, meaning: "BERTScore recall of the turn's solution; NULL without a model" },
  { name: 'bertscore_f1', type: 'DOUBLE', nullable: true, meaning: "BERTScore F1 of the turn's solution; NULL without a model" },
  {
    name: 'model',
    type: 'VARCHAR',
    nullable: true,
    meaning: 'the encoder scored with (folder name and sha256 prefix, idf and baseline); NULL when the spec names none',
  },
]);

export type TeamBertscoreRow = RowOf<typeof TEAM_BERTSCORE_TABLE>;

interface BertscoreSpec {
  model: string;
  idf?: boolean;
  baseline?: number;
}

/** The stored spec's `team.bertscore`, its model path resolved against the spec file; null when absent. */
function bertscoreSpec(out: string): (BertscoreSpec & { path: string; specFile: string }) | null {
  const manifest = readManifest(out);
  const b = (manifest?.spec as { team?: { bertscore?: BertscoreSpec } } | undefined)?.team?.bertscore;
  if (!b || !manifest) return null;
  const path = isAbsolute(b.model) ? b.model : resolve(dirname(manifest.spec_file), b.model);
  return { ...b, path, specFile: manifest.spec_file };
}

/** The rows: every debate turn of a prompt with references, scored when the spec names a model. */
export async function teamBertscoreRows(out: string, complete: readonly RunPlan[]): Promise<TeamBertscoreRow[]> {
  const debates = complete.filter((r) => r.dynamics === 'debate' && r.prompt.accepted.length > 0);
  const turns = await teamTableRows(out, debates);
  const spec = bertscoreSpec(out);
  const refsOf = new Map(debates.map((r) => [r.runId, r.prompt.accepted]));
  let scores: ({ precision: number; recall: number; f1: number } | null)[] = turns.map(() => null);
  let model: string | null = null;
  if (spec) {
    const scorer = await BertScorer.open({
      path: spec.path,
      idf: spec.idf ?? false,
      ...(spec.baseline !== undefined ? { baseline: spec.baseline } : {}),
      place: { file: spec.specFile, field: 'team.bertscore.model' },
    });
    try {
      scores = await scorer.score(turns.map((t) => [t.answer ?? '', refsOf.get(t.run_id) ?? []] as const));
      model = `${scorer.model}${spec.idf ? ' idf' : ''}${spec.baseline !== undefined ? ` baseline ${spec.baseline}` : ''}`;
    } finally {
      await scorer.close();
    }
  }
  return turns.map((t, i) => ({
    run_id: t.run_id,
    config_id: t.config_id,
    trial: t.trial,
    prompt_id: t.prompt_id,
    geometry: t.geometry,
    n: t.n,
    k: t.k,
    temperature: t.temperature,
    protocol: t.protocol,
    arm: t.arm,
    turn: t.turn,
    bertscore_precision: scores[i]?.precision ?? null,
    bertscore_recall: scores[i]?.recall ?? null,
    bertscore_f1: scores[i]?.f1 ?? null,
    model,
  }));
}

export const teamBertscorePath = (out: string) => join(out, TEAM_BERTSCORE_FILE);

/** team_bertscore.parquet against the rows recomputed from the shards (the model run again where one is named). */
export async function checkTeamBertscore(out: string, runs: readonly RunPlan[]): Promise<string[]> {
  const file = teamBertscorePath(out);
  if (!existsSync(file)) return [];
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  let expected: TeamBertscoreRow[];
  try {
    expected = await teamBertscoreRows(out, runs);
  } catch (error) {
    // The encoder is gone or moved: the scores cannot be recomputed here, which verify says in one line.
    return [`${TEAM_BERTSCORE_FILE}: cannot recompute BERTScore (${(error as Error).message.split('\n')[0]})`];
  }
  if (stored.length !== expected.length) return [`${TEAM_BERTSCORE_FILE} has ${stored.length} rows, the events give ${expected.length}`];
  const key = (r: { run_id: unknown; turn: unknown }) => `${r.run_id}\u0000${Number(r.turn)}`;
  const byKey = new Map(stored.map((r) => [key(r as { run_id: unknown; turn: unknown }), r]));
  const problems: string[] = [];
  const close = (a: unknown, b: number | null) =>
    a === null || a === undefined ? b === null : b !== null && Math.abs(Number(a) - b) <= 1e-6;
  for (const e of expected) {
    const s = byKey.get(key(e));
    const field = !s
      ? 'row'
      : ((['bertscore_precision', 'bertscore_recall', 'bertscore_f1'] as const).find((f) => !close(s[f], e[f])) ??
        ((s.model ?? null) !== e.model ? 'model' : undefined));
    if (field && problems.length < 5)
      problems.push(`${TEAM_BERTSCORE_FILE}: run ${e.run_id} turn ${e.turn}: ${field} differs from the recomputed value`);
  }
  return problems;
}

/** The table a debate sweep adds (optional: corpora from before it verify without it). */
export const teamBertscoreTable: AddedTable = {
  name: 'team_bertscore',
  file: TEAM_BERTSCORE_FILE,
  decl: TEAM_BERTSCORE_TABLE,
  applies: (runs) => runs.some((r) => r.dynamics === 'debate' && r.prompt.accepted.length > 0),
  async write(out, complete) {
    await writeParquetTable(teamBertscorePath(out), TEAM_BERTSCORE_TABLE, await teamBertscoreRows(out, complete));
  },
  check: checkTeamBertscore,
  optional: true,
};
