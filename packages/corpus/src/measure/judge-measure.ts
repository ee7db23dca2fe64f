import { TAGS, driftTolerance, snapshotAccuracy, type Tag } from '@panta/core';
import { judgeOrderParamsPath, judgeRunsTablePath, runsTablePath, shardPath, tmpName } from '../corpus-paths.js';
import { BufferTable } from '../buffer-table.js';
import { readParquetSql, sqlIdent, sqlString, withConnection } from '../duckdb.js';
import { RUN_ID_COLUMNS, tagColumnName } from '../event-schema.js';
import { readEvents } from '../event-reader.js';
import { commitFile, removeQuietly } from '../fs-durable.js';
import { queryRows, writeParquetTable } from '../parquet-table.js';
import { readRow } from '../table.js';
import { runDriftColumns } from '../run-drift.js';
import { RUN_DRIFT_COLUMNS, type RunTableRow } from '../run-table-schema.js';
import { ORDER_PARAMS_TABLE, type OrderParamRow } from './order-params-io.js';

/**
 * A post-hoc judge's measurement (`panta judge`). Its tags change what the tags give (counts, rho, delta
 * rho; FOCUS and drift in runs.parquet) and nothing else: magnetisation, cohesion and CDS come from the
 * embeddings and the whitening, which no judge touches. So its order parameters are the corpus's rows with
 * the tag fields recounted from its `tag_<judge>` column, snapshot by snapshot as RunMeasurer counts them
 * (each agent's latest answer after sweep t; not_known before an agent's first answer).
 */

type TagFields = Pick<OrderParamRow, 'rho' | 'n_correct' | 'n_hallucinated' | 'n_not_known' | 'n_judge_failure'>;

/** The tag fields of each snapshot of a run, by sweep, from the column `column` of its shard. */
export async function runTagSnapshots(file: string, n: number, column: string): Promise<TagFields[]> {
  const tags = new Array<Tag>(n).fill('not_known');
  const snapshots: TagFields[] = [];
  let expected = 0;
  for await (const batch of readEvents([file], { columns: ['event', 'agent', column], where: "role = 'agent'" })) {
    const events = batch.columns.event as number[];
    const agents = batch.columns.agent as number[];
    const values = batch.columns[column] as (string | null)[];
    for (let r = 0; r < batch.rows; r++) {
      if (events[r] !== expected) throw new Error(`${file}: expected event ${expected}, found ${events[r]}`);
      expected++;
      const tag = values[r];
      if (!TAGS.includes(tag as Tag)) throw new Error(`${file}: event ${events[r]} has ${column} ${JSON.stringify(tag)}, not a tag`);
      tags[agents[r]] = tag as Tag;
      if (events[r] % n === n - 1) snapshots.push(countTags(tags));
    }
  }
  return snapshots;
}

function countTags(tags: readonly Tag[]): TagFields {
  const c = { correct: 0, hallucinated: 0, not_known: 0, judge_failure: 0 };
  for (const t of tags) c[t]++;
  const judged = c.correct + c.hallucinated;
  return {
    rho: judged > 0 ? c.hallucinated / judged : null,
    n_correct: c.correct,
    n_hallucinated: c.hallucinated,
    n_not_known: c.not_known,
    n_judge_failure: c.judge_failure,
  };
}

/**
 * The judge's order parameters: every row of `stored` (the corpus's order_params.parquet, in its order) with
 * the judge's tag fields; delta rho against the judge's own rho at t = 0 (null where either is undefined).
 */
export async function judgeOrderParams(
  out: string,
  runs: readonly { runId: string; n: number }[],
  judge: string,
  stored: readonly OrderParamRow[],
): Promise<OrderParamRow[]> {
  const column = tagColumnName(judge);
  const byRun = new Map<string, TagFields[]>();
  for (const run of runs) byRun.set(run.runId, await runTagSnapshots(shardPath(out, run.runId), run.n, column));
  return stored.map((row) => {
    const snapshots = byRun.get(row.run_id);
    const own = snapshots?.[row.sweep];
    if (!own) throw new Error(`order parameters of ${row.run_id} sweep ${row.sweep}: no such snapshot in its shard's ${column}`);
    const rho0 = snapshots[0].rho;
    return { ...row, ...own, delta_rho: own.rho !== null && rho0 !== null ? own.rho - rho0 : null };
  });
}

/** The tag-derived columns of runs.parquet for one run. */
export type RunDrift = Pick<RunTableRow, 'run_id' | (typeof RUN_DRIFT_COLUMNS)[number]['name']>;

/** FOCUS and drift of each run from these order parameters (rows of `encoder`, as finishSweep reads them). */
export function judgeRunDrift(
  params: readonly OrderParamRow[],
  runs: readonly { runId: string; n: number }[],
  encoder: string,
  setting: number | 'auto',
): RunDrift[] {
  const series = new Map<string, { sweep: number; accuracy: number | null }[]>();
  for (const p of params) {
    if (p.encoder !== encoder) continue;
    const list = series.get(p.run_id) ?? [];
    list.push({ sweep: p.sweep, accuracy: snapshotAccuracy(p) });
    series.set(p.run_id, list);
  }
  return runs.map((run) => {
    const accuracy = (series.get(run.runId) ?? []).sort((a, b) => a.sweep - b.sweep).map((s) => s.accuracy);
    return { run_id: run.runId, ...runDriftColumns(accuracy, driftTolerance(setting, run.n)) };
  });
}

/** Reads an order_params.parquet in file order. */
export async function readOrderParams(file: string): Promise<OrderParamRow[]> {
  const rows = await queryRows(`SELECT * FROM ${readParquetSql([file])}`);
  return rows.map((r) => readRow(ORDER_PARAMS_TABLE, r));
}

/** Writes the judge's order_params.parquet and runs.parquet (the corpus's, its drift columns replaced). */
export async function writeJudgeTables(
  out: string,
  judge: string,
  params: readonly OrderParamRow[],
  drift: readonly RunDrift[],
): Promise<void> {
  await writeParquetTable(judgeOrderParamsPath(out, judge), ORDER_PARAMS_TABLE, params);
  const file = judgeRunsTablePath(out, judge);
  const tmp = tmpName(file);
  try {
    await withConnection(async (con) => {
      const staged = await BufferTable.create(con, [RUN_ID_COLUMNS[0], ...RUN_DRIFT_COLUMNS]);
      try {
        staged.appendColumns(
          staged.columns.map((c) => drift.map((d) => d[c.name as keyof RunDrift])),
          drift.length,
        );
        staged.flush();
        const replace = RUN_DRIFT_COLUMNS.map((c) => `d.${sqlIdent(c.name)} AS ${sqlIdent(c.name)}`).join(', ');
        await con.run(
          `COPY (SELECT r.* EXCLUDE (file_row_number) REPLACE (${replace}) FROM read_parquet(${sqlString(runsTablePath(out))}, file_row_number = true) r JOIN ${sqlIdent(staged.table)} d ON r.run_id = d.run_id ORDER BY r.file_row_number) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd)`,
        );
      } finally {
        await staged.close();
      }
    });
    await commitFile(tmp, file);
  } catch (err) {
    await removeQuietly(tmp);
    throw err;
  }
}
