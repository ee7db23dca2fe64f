import type { RunPlan } from '@panta/core';
import { type ColumnDecl, queryRows, readParquetSql } from '@panta/corpus';
import { storedTravelJudge } from './judge-store.js';
import { travelTableRows } from './table-rows.js';
import { TRAVEL_FILE, TRAVEL_TABLE, type TravelTableRow, travelTablePath } from './table-schema.js';

const FIELDS = [
  'protocol',
  'assertions_made',
  'assertions_wrong',
  'hr',
  'hr_note',
  'tcs',
  'tcs_note',
  'detection_step',
  'detection_note',
  'recovery_steps',
  'recovery_note',
  'calls',
  'cds_sys',
  'tcs_dims',
  'judge',
  'judge_failures',
  'task_calls',
  'sync_calls',
] as const satisfies readonly (keyof TravelTableRow)[];

/** Columns added with the LLM travel judge: a table from before has none of them. */
const LATER = new Set((TRAVEL_TABLE.columns as readonly ColumnDecl[]).filter((c) => c.absent !== undefined).map((c) => c.name));

const plain = (v: unknown): unknown => {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  return v ?? null;
};

function same(a: unknown, b: unknown): boolean {
  const x = plain(a);
  const y = plain(b);
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => same(v, y[i]));
  return typeof x === 'number' && typeof y === 'number' ? Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x)) : x === y;
}

/**
 * travel.parquet, present, against the measures recomputed from the shards (every run complete). A table scored by an LLM judge is recomputed from the judge's stored verdicts (no
 * call); a table written before the judge columns existed is checked on the columns it has.
 */
export async function checkTravelTable(out: string, runs: readonly RunPlan[]): Promise<string[]> {
  const file = travelTablePath(out);
  const stored = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  const model = stored.map((r) => r.judge).find((j) => typeof j === 'string' && j !== 'reference') as string | undefined;
  const expected = await travelTableRows(out, runs, model ? storedTravelJudge(out, model) : undefined);
  const problems: string[] = [];
  if (stored.length !== expected.length) problems.push(`${TRAVEL_FILE} has ${stored.length} rows, the events give ${expected.length}`);
  const byRun = new Map(stored.map((r) => [String(r.run_id), r]));
  let mismatches = 0;
  for (const e of expected) {
    const s = byRun.get(e.run_id);
    const field = s ? FIELDS.find((f) => !(LATER.has(f) && !(f in s)) && !same(e[f], s[f])) : 'row';
    if (field && mismatches++ < 5)
      problems.push(
        `${TRAVEL_FILE}: ${e.run_id}: ${field} ${s ? `${JSON.stringify(plain(s[field]))} stored, ${JSON.stringify(e[field as keyof TravelTableRow])} recomputed` : 'missing'}`,
      );
  }
  if (mismatches > 5) problems.push(`... and ${mismatches - 5} more travel-measure mismatches`);
  return problems;
}
