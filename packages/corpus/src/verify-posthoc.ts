import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { judgeOrderParamsPath, judgeRunsTablePath, orderParamsPath, parsePosthocJournalName, posthocDir } from './corpus-paths.js';
import { readParquetSql } from './duckdb.js';
import type { Manifest } from './manifest.js';
import { judgeOrderParams, judgeRunDrift, readOrderParams } from './measure/judge-measure.js';
import type { OrderParamRow } from './measure/order-params-io.js';
import { queryRows } from './parquet-table.js';
import { RUN_DRIFT_COLUMNS } from './run-table-schema.js';

const TOLERANCE = 1e-9;

function same(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (typeof a === 'number' || typeof b === 'number') {
    const x = Number(a);
    const y = Number(b);
    return Math.abs(x - y) <= TOLERANCE * Math.max(1, Math.abs(x), Math.abs(y));
  }
  return a === b;
}

const TAG_FIELDS = ['rho', 'delta_rho', 'n_correct', 'n_hallucinated', 'n_not_known', 'n_judge_failure'] as const;
const DRIFT_FIELDS = RUN_DRIFT_COLUMNS.map((c) => c.name);

/**
 * Each post-hoc judge the manifest records (`panta judge`): its order parameters and runs.parquet recomputed
 * from its `tag_<judge>` column and the corpus's order parameters (checked before this) match the stored ones.
 * A post-hoc pass that did not finish leaves its journal: said, so the user reruns it. `runs` is null when
 * the shards did not check out (the judges are then not measured).
 */
export async function checkPosthoc(
  out: string,
  manifest: Manifest,
  runs: readonly { runId: string; n: number }[] | null,
  tolerance: number | 'auto',
): Promise<string[]> {
  const problems: string[] = [];
  const dir = posthocDir(out);
  for (const file of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const pending = parsePosthocJournalName(file);
    if (pending)
      problems.push(`panta ${pending.pass} of ${pending.name} did not finish (${join(dir, file)} remains): run it again to complete it`);
  }
  const judges = manifest.judges ?? [];
  if (judges.length === 0 || !runs) return problems;
  const stored = await readOrderParams(orderParamsPath(out));
  const first = manifest.encoders[0].name;
  for (const judge of judges) {
    let params: OrderParamRow[];
    try {
      params = await judgeOrderParams(out, runs, judge.name, stored);
    } catch (e) {
      problems.push(`judge ${judge.name}: its tags cannot be read: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    const file = judgeOrderParamsPath(out, judge.name);
    if (!existsSync(file)) {
      problems.push(`judge ${judge.name}: ${file} is missing`);
      continue;
    }
    const onDisk = await readOrderParams(file);
    const key = (r: OrderParamRow) => `${r.run_id}|${r.sweep}|${r.encoder}`;
    const byKey = new Map(onDisk.map((r) => [key(r), r]));
    if (onDisk.length !== params.length)
      problems.push(`judge ${judge.name}: ${onDisk.length} order-parameter rows, the tags give ${params.length}`);
    const bad = params.filter((r) => {
      const s = byKey.get(key(r));
      return !s || TAG_FIELDS.some((f) => !same(r[f], s[f]));
    });
    if (bad.length > 0)
      problems.push(
        `judge ${judge.name}: order parameters of ${bad.length} snapshots do not match its tags (first: ${bad[0].run_id} sweep ${bad[0].sweep})`,
      );
    const drift = judgeRunDrift(params, runs, first, tolerance);
    const runsFile = judgeRunsTablePath(out, judge.name);
    if (!existsSync(runsFile)) {
      problems.push(`judge ${judge.name}: ${runsFile} is missing`);
      continue;
    }
    const rows = new Map((await queryRows(`SELECT * FROM ${readParquetSql([runsFile])}`)).map((r) => [String(r.run_id), r]));
    const off = drift.filter((d) => {
      const r = rows.get(d.run_id);
      return !r || DRIFT_FIELDS.some((f) => !same(d[f], r[f]));
    });
    if (off.length > 0)
      problems.push(`judge ${judge.name}: runs.parquet drift of ${off.length} runs does not match its tags (first: ${off[0].run_id})`);
  }
  return problems;
}
