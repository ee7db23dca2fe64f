import { queryRows, readParquetSql, shardPath } from '@panta/corpus';
import type { CorpusData, EventStats, RoleUsage } from './corpus-data.js';
import { loadRelay, relayApplies } from './relay.js';

/** Queries the finalized shards of `complete` (run ids); the runs' other columns come from `data`. */
export async function loadEventStats(data: CorpusData, complete: readonly string[]): Promise<EventStats> {
  const done = new Set(complete);
  const runs = data.runs.filter((r) => done.has(r.run_id));
  let roles: RoleUsage[] | null = null;
  if (runs.length > 0 && new Set(runs.map((r) => r.protocol)).size > 1) {
    const rows = await queryRows(
      `SELECT run_id, role, count(*) AS calls, coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens
       FROM ${readParquetSql(runs.map((r) => shardPath(data.dir, r.run_id)))} GROUP BY run_id, role ORDER BY run_id, role`,
    );
    roles = rows.map((r) => ({
      run_id: String(r.run_id),
      role: String(r.role),
      calls: Number(r.calls),
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
    }));
  }
  const relay = relayApplies(runs) ? await loadRelay(data.dir, runs) : null;
  return { roles, relay };
}
