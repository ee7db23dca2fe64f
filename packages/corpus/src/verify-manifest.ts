import { existsSync } from 'node:fs';
import { EVENT_ROWS_SQL, sweepEvents, type RunPlan } from '@panta/core';
import { CORPUS_FILES, runsTablePath, shardPath } from './corpus-paths.js';
import { readParquetSql, sqlIdent } from './duckdb.js';
import { tagColumnName } from './event-schema.js';
import { type Manifest, manifestDigest, manifestDigestMismatches } from './manifest.js';
import { queryRows } from './parquet-table.js';

const M = CORPUS_FILES.manifest;

/**
 * manifest.json against its own digest: each field changed since Panta wrote it, by name. A manifest written
 * before the digest gives a note instead (its counts are still recomputed by checkManifestCounts).
 */
export function checkManifestDigest(manifest: Manifest): { problems: string[]; notes: string[] } {
  const digest = (manifest as { digest?: unknown }).digest;
  if (digest === undefined)
    return {
      problems: [],
      notes: [`${M} has no digest (written by an older Panta): its counts were checked against the shards, its other fields could not be`],
    };
  if (digest === null || typeof digest !== 'object' || Array.isArray(digest))
    return { problems: [`${M}: digest is not an object of sha256 sums: the manifest was edited by hand`], notes: [] };
  const content = manifest as unknown as Record<string, unknown>;
  const now = manifestDigest(content);
  const why = (field: string) =>
    !(field in (digest as Record<string, string>))
      ? 'was added'
      : !(field in now)
        ? 'was removed'
        : 'does not match its sha256 in the digest';
  return {
    problems: manifestDigestMismatches(content).map(
      (field) => `${M}: ${field} ${why(field)}: edited since Panta wrote it (restore it, or re-run the sweep)`,
    ),
    notes: [],
  };
}

const counted = (field: string, says: unknown, holds: unknown, what: string) =>
  `${M}: ${field} says ${JSON.stringify(says ?? null)}, ${what} ${JSON.stringify(holds)}`;

/**
 * The manifest's counts recomputed from the corpus: the seed from its spec, runs and events planned from the
 * plan, events written, complete runs and answers per tag from the shards, usage from runs.parquet (itself
 * checksummed). `runs` are the corpus's planned runs, each with a shard that checked out.
 */
export async function checkManifestCounts(out: string, manifest: Manifest, runs: readonly RunPlan[], specSeed: number): Promise<string[]> {
  const problems: string[] = [];
  if (manifest.seed !== specSeed) problems.push(counted('seed', manifest.seed, specSeed, 'its spec (spec.seed) says'));
  if (manifest.runs?.planned !== runs.length) problems.push(counted('runs.planned', manifest.runs?.planned, runs.length, 'the spec plans'));
  const planned = sweepEvents(runs);
  if (manifest.events?.planned !== planned) problems.push(counted('events.planned', manifest.events?.planned, planned, 'the spec plans'));
  const shards = runs.map((r) => shardPath(out, r.runId)).filter((f) => existsSync(f));
  if (manifest.runs?.complete !== shards.length)
    problems.push(counted('runs.complete', manifest.runs?.complete, shards.length, 'the shards hold'));
  let written = 0;
  const tags: Record<string, number> = {};
  if (shards.length > 0) {
    const [row] = await queryRows(`SELECT count(*) FILTER (WHERE ${EVENT_ROWS_SQL}) AS events FROM ${readParquetSql(shards)}`);
    written = Number(row!.events);
    for (const r of await queryRows(`SELECT tag, count(*) AS n FROM ${readParquetSql(shards)} WHERE role = 'agent' GROUP BY tag`))
      tags[String(r.tag)] = Number(r.n);
  }
  if (manifest.events?.written !== written) problems.push(counted('events.written', manifest.events?.written, written, 'the shards hold'));
  const stored = manifest.tags ?? {};
  for (const tag of [...new Set([...Object.keys(stored), ...Object.keys(tags)])].sort())
    if ((stored[tag] ?? 0) !== (tags[tag] ?? 0)) problems.push(counted(`tags.${tag}`, stored[tag], tags[tag] ?? 0, 'the shards hold'));
  // Each post-hoc judge's answers per tag, as `panta judge` counted them: its column over the event rows.
  for (const judge of manifest.judges ?? []) {
    if (shards.length === 0 || typeof judge?.name !== 'string' || typeof judge.tags !== 'object') continue;
    const judged: Record<string, number> = {};
    for (const r of await queryRows(
      `SELECT ${sqlIdent(tagColumnName(judge.name))} AS tag, count(*) AS n FROM ${readParquetSql(shards)} WHERE ${EVENT_ROWS_SQL} GROUP BY ALL`,
    ))
      judged[String(r.tag)] = Number(r.n);
    const said = judge.tags ?? {};
    for (const tag of [...new Set([...Object.keys(said), ...Object.keys(judged)])].sort())
      if ((said[tag] ?? 0) !== (judged[tag] ?? 0))
        problems.push(
          counted(`judges.${judge.name}.tags.${tag}`, said[tag], judged[tag] ?? 0, `the shards' ${tagColumnName(judge.name)} holds`),
        );
  }
  // A manifest without usage (none but a hand edit leaves one so) was named by its digest, or predates it.
  const file = runsTablePath(out);
  if (!existsSync(file) || manifest.usage === undefined) return problems;
  const [sums] = await queryRows(
    `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(retries), 0) AS retries, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens, sum(cost) AS cost FROM ${readParquetSql([file])}`,
  );
  const usage = (manifest.usage ?? {}) as unknown as Record<string, unknown>;
  for (const field of ['calls', 'retries', 'prompt_tokens', 'completion_tokens'] as const) {
    const holds = Number(sums![field]);
    if (usage[field] !== holds) problems.push(counted(`usage.${field}`, usage[field], holds, `${CORPUS_FILES.runs} adds up to`));
  }
  if (typeof usage.cost === 'number') {
    const holds = Number(sums!.cost ?? 0);
    if (Math.abs(usage.cost - holds) > 1e-9 * Math.max(1, Math.abs(holds)))
      problems.push(counted('usage.cost', usage.cost, holds, `${CORPUS_FILES.runs} adds up to`));
  }
  return problems;
}
