import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { configArms, InputError } from '@panta/core';
import {
  CORPUS_FORMAT,
  eventsDir,
  judgeOrderParamsPath,
  judgeRunsTablePath,
  manifestPath,
  measureSweep,
  ORDER_PARAMS_TABLE,
  orderParamsPath,
  queryRows,
  readManifest,
  readParquetSql,
  readRow,
  readRunRecords,
  runsTablePath,
  shardPath,
  sqlString,
  UNMEASURED_DRIFT,
  type Manifest,
  type OrderParamRow,
} from '@panta/corpus';
import { RUN_INFO_TABLE, specSweeps, type CorpusData, type EventStats, type LoadOptions, type RunInfo } from './corpus-data.js';
import { loadEventStats } from './event-stats.js';

const RUN_SELECT = `run_id, config_id, trial, prompt_id, geometry, n, k, temperature, protocol`;

/**
 * Reads a corpus for reporting: manifest.json, runs.parquet and order_params.parquet through DuckDB. A
 * corpus that is not complete (status running or failed) is read as far as it goes: runs come from
 * runs.parquet or, when the sweep never finished a session, from the complete shards; order parameters
 * are recomputed from the complete shards (without writing anything) and flagged provisional.
 * Throws InputError (one line: file, problem, fix) for a folder that is not a corpus.
 */
export async function loadCorpus(dirArg: string, options: LoadOptions = {}): Promise<CorpusData> {
  const manifest = readCorpusManifest(dirArg);
  const dir = resolve(dirArg);
  const notes: string[] = [];
  const judge = options.judge;
  if (judge !== undefined) notes.push(judgeNote(manifest, dir, judge));
  const runsFile = judge === undefined ? runsTablePath(dir) : judgeRunsTablePath(dir, judge);
  const paramsFile = judge === undefined ? orderParamsPath(dir) : judgeOrderParamsPath(dir, judge);
  const shards = completeShards(dir);
  const runs = await loadRuns(dir, manifest, runsFile, shards, notes);
  const { orderParams, provisional } = await loadOrderParams(dirArg, manifest, paramsFile, runs, shards, notes);
  if (manifest.status !== 'complete') notes.unshift(incompleteNote(manifest, runs, provisional));
  const encoders = manifest.encoders.map((e) => e.name);
  const data: CorpusData = { dir, manifest, runs, orderParams, encoders, provisional, notes, events: null };
  if (options.events) data.events = await eventStats(data, shards);
  return data;
}

/** The note that a post-hoc judge's tags are shown, or an InputError when the corpus has no judge of that name. */
function judgeNote(manifest: Manifest, dir: string, judge: string): string {
  const known = (manifest.judges ?? []).map((j) => j.name);
  if (!known.includes(judge))
    throw new InputError(
      manifestPath(dir),
      '--judge',
      `the corpus has no post-hoc judge named ${JSON.stringify(judge)}`,
      known.length > 0 ? `use one of ${known.join(', ')}` : 'add one first with panta judge DIR --judge SPEC --name NAME',
    );
  return `Tags, rho, delta rho, FOCUS and drift are post-hoc judge ${judge}'s (panta judge); without --judge the report shows the sweep judge's.`;
}

/** The runs from runs.parquet, or from the complete shards and the run journal when no session has finished. */
async function loadRuns(dir: string, manifest: Manifest, runsFile: string, shards: Set<string>, notes: string[]): Promise<RunInfo[]> {
  if (existsSync(runsFile)) {
    const runs = await readTable(runsFile, `SELECT * FROM read_parquet(${sqlString(runsFile)})`, toRunInfo);
    // runs.parquet is rewritten when a session ends: a run finished since then is complete all the same.
    for (const r of runs) if (r.status !== 'complete' && shards.has(r.run_id)) r.status = 'complete';
    return runs;
  }
  const runs = await runsFromShards(dir, [...shards], specSweeps(manifest));
  if (manifest.status !== 'complete')
    notes.push(
      'runs.parquet is not written yet (no session of this sweep has finished): runs are read from the complete event shards, calls and retries from the run journal.',
    );
  return runs;
}

/** order_params.parquet of a complete corpus; otherwise recomputed (provisional) from the complete runs' shards. */
async function loadOrderParams(
  dirArg: string,
  manifest: Manifest,
  paramsFile: string,
  runs: readonly RunInfo[],
  shards: Set<string>,
  notes: string[],
): Promise<{ orderParams: OrderParamRow[]; provisional: boolean }> {
  const complete = manifest.status === 'complete';
  if (complete && existsSync(paramsFile)) {
    const sql = `SELECT * FROM read_parquet(${sqlString(paramsFile)}) ORDER BY run_id, encoder, sweep`;
    return { orderParams: await readTable(paramsFile, sql, toOrderParam), provisional: false };
  }
  const done = runs.filter((r) => shards.has(r.run_id));
  if (done.length === 0) return { orderParams: [], provisional: false };
  const w = (manifest.spec as { whitening?: 'zca' | 'raw' | { from: string } }).whitening ?? 'zca';
  const mode = typeof w === 'object' ? { from: resolve(dirname(manifest.spec_file), w.from) } : w;
  const measured = await measureSweep(
    resolve(dirArg),
    done.map((r) => ({ runId: r.run_id, configId: r.config_id, n: r.n, promptId: r.prompt_id })),
    manifest.encoders.map((e) => ({ name: e.name, dim: e.dim })),
    mode,
    false,
  );
  if (complete)
    notes.push(
      `order_params.parquet is missing although the manifest says complete: order parameters were recomputed here from the events; run \`panta verify ${dirArg}\`.`,
    );
  return { orderParams: measured.orderParams, provisional: true };
}

/** The first note of an incomplete corpus: how many runs are complete, and what that means for the figures. */
function incompleteNote(manifest: Manifest, runs: readonly RunInfo[], provisional: boolean): string {
  const done = runs.filter((r) => r.status === 'complete').length;
  return (
    `This corpus is incomplete (status ${manifest.status}): ${done} of ${manifest.runs.planned} runs are complete. ` +
    (provisional
      ? 'Figures and tables show the complete runs only; their order parameters were recomputed here with a whitening fitted on those runs alone, so they will change when the sweep completes.'
      : 'No run is complete yet, so there are no order parameters to show.')
  );
}

/** The event rows' aggregates for the complete runs; unreadable shards are an InputError. */
async function eventStats(data: CorpusData, shards: Set<string>): Promise<EventStats> {
  try {
    return await loadEventStats(
      data,
      data.runs.filter((r) => shards.has(r.run_id)).map((r) => r.run_id),
    );
  } catch (e) {
    const first = (e as Error).message.split('\n')[0];
    throw new InputError(
      eventsDir(data.dir),
      '',
      `unreadable event shards (${first})`,
      'run `panta verify` on the corpus, then run the sweep again to rewrite it',
    );
  }
}

/** The manifest, or an InputError naming the folder or file, the problem and the fix. */
export function readCorpusManifest(dir: string): Manifest {
  const fix = 'give the folder a sweep wrote (the --out of `panta run`)';
  if (!existsSync(dir)) throw new InputError(dir, '', 'no such folder', fix);
  if (!statSync(dir).isDirectory()) throw new InputError(dir, '', 'not a folder', fix);
  const file = manifestPath(dir);
  let manifest: Manifest | null;
  try {
    manifest = readManifest(dir);
  } catch (e) {
    throw new InputError(file, '', `unreadable manifest (${(e as Error).message})`, 'restore it, or run the sweep again into this folder');
  }
  if (!manifest) throw new InputError(file, '', 'missing: this folder is not a Panta corpus', fix);
  if (typeof manifest !== 'object' || manifest.format !== CORPUS_FORMAT) {
    throw new InputError(
      file,
      'format',
      `${JSON.stringify((manifest as { format?: unknown } | null)?.format)} is not ${CORPUS_FORMAT}`,
      fix,
    );
  }
  if (!Array.isArray(manifest.encoders) || manifest.encoders.length === 0)
    throw new InputError(file, 'encoders', 'no encoders listed', 'restore the manifest the sweep wrote');
  return manifest;
}

/** A query's rows, each read by `read`; an unreadable file, or a row its table's declaration refuses, is an InputError. */
async function readTable<T>(file: string, sql: string, read: (r: Record<string, unknown>) => T): Promise<T[]> {
  try {
    return (await queryRows(sql)).map(read);
  } catch (e) {
    const first = (e as Error).message.split('\n')[0];
    throw new InputError(
      file,
      '',
      `unreadable Parquet (${first})`,
      'run `panta verify` on the corpus, then run the sweep again to rewrite it',
    );
  }
}

/** Run ids whose finalized shard exists (events/<run_id>.parquet; parts of unfinished runs are elsewhere). */
export function completeShards(dir: string): Set<string> {
  const events = eventsDir(dir);
  if (!existsSync(events)) return new Set();
  return new Set(
    readdirSync(events)
      .filter((f) => f.endsWith('.parquet') && !f.startsWith('.'))
      .map((f) => f.slice(0, -'.parquet'.length)),
  );
}

async function runsFromShards(dir: string, runIds: string[], sweeps: number): Promise<RunInfo[]> {
  if (runIds.length === 0) return [];
  const files = runIds.map((id) => shardPath(dir, id));
  // As the engine's totals.ts counts them for runs.parquet: events are answers (role agent), tokens are every role's.
  const rows = await readTable(
    eventsDir(dir),
    `SELECT ${RUN_SELECT}, count(*) FILTER (WHERE role = 'agent') AS events, count(*) FILTER (WHERE role <> 'agent') AS extra_calls,
       max(sweep) FILTER (WHERE role = 'agent') AS sweeps_run, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens
     FROM ${readParquetSql(files)} GROUP BY ALL ORDER BY run_id`,
    (r) => r,
  );
  const journal = readRunRecords(dir);
  return rows.map((row) => {
    const rec = journal.get(String(row.run_id));
    return toRunInfo({
      ...row,
      dynamics: /-sync(?:-tpl-|-pop-|$)/.test(String(row.config_id)) ? 'synchronous' : 'asynchronous',
      template_arm: configArms(String(row.config_id)).template ?? null,
      population_arm: configArms(String(row.config_id)).population ?? null,
      status: 'complete',
      calls: rec?.calls ?? null,
      retries: rec?.retries ?? null,
      cost: null,
      stopped_early: Number(row.sweeps_run) < sweeps,
      calls_saved: (sweeps - Number(row.sweeps_run)) * Number(row.n),
      ...UNMEASURED_DRIFT,
      wall_ms: rec?.wall_ms ?? null,
    });
  });
}

function toRunInfo(r: Record<string, unknown>): RunInfo {
  return readRow(RUN_INFO_TABLE, r);
}

function toOrderParam(r: Record<string, unknown>): OrderParamRow {
  return readRow(ORDER_PARAMS_TABLE, r);
}
