import { EVENT_ROWS_SQL, type SweepSpec } from '@panta/core';
import { queryRows, readParquetSql, type Manifest, type RunTableRow } from '@panta/corpus';

/** What a run's shard holds, counted in SQL: agent events, protocol calls (extra) and tokens. */
export interface RunTotals {
  events: number;
  extra: number;
  prompt_tokens: number;
  completion_tokens: number;
}

/** Totals per run, and agent events per tag over the sweep (sorted by tag), read from the finalized shards. */
export async function shardTotals(shards: readonly string[]): Promise<{ perRun: Map<string, RunTotals>; tags: Record<string, number> }> {
  const perRun = new Map<string, RunTotals>();
  const tags: Record<string, number> = {};
  if (shards.length === 0) return { perRun, tags };
  for (const row of await queryRows(
    `SELECT run_id, count(*) FILTER (WHERE ${EVENT_ROWS_SQL}) AS events, count(*) FILTER (WHERE NOT ${EVENT_ROWS_SQL}) AS extra, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens FROM ${readParquetSql(shards)} GROUP BY run_id`,
  )) {
    perRun.set(String(row.run_id), {
      events: Number(row.events),
      extra: Number(row.extra),
      prompt_tokens: Number(row.prompt_tokens),
      completion_tokens: Number(row.completion_tokens),
    });
  }
  for (const row of await queryRows(
    `SELECT tag, count(*) AS n FROM ${readParquetSql(shards)} WHERE role = 'agent' GROUP BY tag ORDER BY tag`,
  ))
    tags[String(row.tag)] = Number(row.n);
  return { perRun, tags };
}

/** Cost of some tokens at the backend's prices (its currency), null without a price table or unknown tokens. */
export type CostOf = (prompt: number | null, completion: number | null) => number | null;

export function costOf(backend: SweepSpec['backend']): { priced: boolean; cost: CostOf } {
  const price = backend.kind === 'surrogate' ? undefined : backend.price;
  return {
    priced: price !== undefined,
    cost: (prompt, completion) =>
      price && prompt !== null && completion !== null
        ? (prompt * price.prompt_per_mtok + completion * price.completion_per_mtok) / 1e6
        : null,
  };
}

/** The manifest's usage: runs.parquet's columns added up; cost only when the backend is priced. */
export function usageTotals(rows: readonly RunTableRow[], priced: boolean, judgeCalls: number): Manifest['usage'] {
  return {
    calls: rows.reduce((s, r) => s + (r.calls ?? 0), 0),
    retries: rows.reduce((s, r) => s + (r.retries ?? 0), 0),
    prompt_tokens: rows.reduce((s, r) => s + (r.prompt_tokens ?? 0), 0),
    completion_tokens: rows.reduce((s, r) => s + (r.completion_tokens ?? 0), 0),
    cost: priced ? rows.reduce((s, r) => s + (r.cost ?? 0), 0) : null,
    judge_calls: judgeCalls,
  };
}
