import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError, promptSchema, type Prompt } from '@panta/core';
import {
  acquireOutLock,
  manifestPath,
  parquetColumnNames,
  queryRows,
  readManifest,
  readParquetSql,
  recordPosthocDone,
  runsTablePath,
  shardPath,
  type Manifest,
  type OutLock,
} from '@panta/corpus';
import { fileChecksums } from './checksums.js';
import type { Logger } from './log.js';

/** A run of a finished corpus, as a post-hoc pass needs it (runs.parquet's row, in plan order). */
export interface PosthocRun {
  runId: string;
  configId: string;
  n: number;
  promptId: string;
  /** Agent answers in its shard (one per event). */
  events: number;
}

/** A finished corpus opened for a post-hoc pass: its folder locked for this process. */
export interface PosthocCorpus {
  out: string;
  manifest: Manifest;
  runs: PosthocRun[];
  prompts: Map<string, Prompt>;
  lock: OutLock;
}

/** What a post-hoc pass reports as it goes, in the sweep's progress terms (the CLI shows both one way). */
export interface PosthocProgress {
  /** Answers embedded or judged, those of shards done before this session included. */
  eventsExecuted: number;
  /** Answers in shards rewritten (durable). */
  eventsWritten: number;
  eventsTotal: number;
  /** Of eventsWritten, those of shards a previous session rewrote. */
  eventsOnDisk: number;
  /** Judge calls (or encoder batches) in flight. */
  inflight: number;
  /** Calls to the judge's model in this session. */
  calls: number;
  runsFinished: number;
  runsTotal: number;
}

/**
 * Opens `dir` for a pass: a complete corpus (not a part of a job array) with its runs, prompts and manifest;
 * anything else is bad input (exit 2) with nothing written. The folder's lock keeps a sweep, a merge and
 * another pass out while this one rewrites shards.
 */
export async function openPosthocCorpus(dir: string): Promise<PosthocCorpus> {
  const out = resolve(dir);
  if (!existsSync(out)) throw new InputError(dir, '', 'no such folder', 'give the folder of a finished corpus (a panta run --out)');
  let manifest: Manifest | null;
  try {
    manifest = readManifest(out);
  } catch (e) {
    throw new InputError(manifestPath(dir), '', `unreadable manifest (${(e as Error).message})`, 'restore it, or re-run the sweep');
  }
  if (!manifest) throw new InputError(manifestPath(dir), '', 'missing: this is not a Panta corpus', 'give the folder a sweep wrote');
  if (manifest.shard)
    throw new InputError(
      manifestPath(dir),
      'shard',
      'this is one part of a job array',
      'run panta merge first, then the pass on the merged corpus',
    );
  if (manifest.status !== 'complete')
    throw new InputError(
      manifestPath(dir),
      'status',
      `the corpus is ${manifest.status}, not complete`,
      'finish it first (run the same panta run command again), then the pass',
    );
  const rows = await queryRows(`SELECT run_id, config_id, n, prompt_id, events FROM ${readParquetSql([runsTablePath(out)])}`);
  const runs = rows.map((r) => ({
    runId: String(r.run_id),
    configId: String(r.config_id),
    n: Number(r.n),
    promptId: String(r.prompt_id),
    events: Number(r.events),
  }));
  for (const r of runs)
    if (!existsSync(shardPath(out, r.runId)))
      throw new InputError(shardPath(dir, r.runId), '', 'missing', `run panta verify ${dir} and repair the corpus first`);
  const prompts = new Map(manifest.prompts.map((p) => promptSchema.parse(p)).map((p) => [p.id, p]));
  const lock = acquireOutLock(out);
  return { out, manifest, runs, prompts, lock };
}

/**
 * The manifest's checksums again after a pass: every file it vouched for (shards were rewritten) and the
 * pass's new files.
 */
export async function refreshChecksums(out: string, manifest: Manifest, added: readonly string[]): Promise<Manifest['files']> {
  const listed = new Set([...Object.keys(manifest.files).map((f) => resolve(out, f)), ...added.map((f) => resolve(out, f))]);
  return fileChecksums(out, [...listed].sort());
}

/**
 * Runs `work(i)` for i in 0..count-1 with at most `limit` at once, in order of start; the first failure
 * rejects once the others in flight settle.
 */
export async function pool(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < count) {
      const i = next++;
      try {
        await work(i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, lane));
  if (failure) throw failure.error;
}

/** What the shard loop of a pass needs (see rewriteShards). */
export interface ShardPass {
  /** The column the pass writes to every shard. */
  column: string;
  /** Recompute a column a previous pass wrote (otherwise a shard holding it was done before a crash). */
  replace: boolean;
  /** Runs the pass's journal records as done. */
  done: ReadonlySet<string>;
  journalFile: string;
  progress: PosthocProgress;
  signal?: AbortSignal;
  onProgress?(progress: PosthocProgress): void;
  log: Logger;
  /** Model calls made so far in this session (a judge pass): each shard's share is journaled with it. */
  calls?(): number;
}

/**
 * The shard loop both passes run: each run's shard in turn is rewritten with its column by `rewrite` and
 * journaled; a shard done before (journaled, or renamed into place with its column just before a crash) is only
 * counted; an abort stops the loop before the next shard. Returns the shards rewritten and whether it stopped.
 */
export async function rewriteShards(
  out: string,
  runs: readonly PosthocRun[],
  pass: ShardPass,
  rewrite: (run: PosthocRun, file: string) => Promise<void>,
): Promise<{ rewritten: number; stopped: boolean }> {
  const { progress } = pass;
  let rewritten = 0;
  for (const run of runs) {
    const file = shardPath(out, run.runId);
    if (pass.done.has(run.runId) || (!pass.replace && (await parquetColumnNames(file)).includes(pass.column))) {
      progress.eventsExecuted += run.events;
      progress.eventsWritten += run.events;
      progress.eventsOnDisk += run.events;
      progress.runsFinished++;
      pass.onProgress?.({ ...progress });
      continue;
    }
    if (pass.signal?.aborted) return { rewritten, stopped: true };
    const callsBefore = pass.calls?.() ?? 0;
    await rewrite(run, file);
    recordPosthocDone(pass.journalFile, run.runId, (pass.calls?.() ?? 0) - callsBefore);
    pass.log.debug({ run: run.runId }, 'shard rewritten');
    rewritten++;
    progress.eventsWritten += run.events;
    progress.runsFinished++;
    pass.onProgress?.({ ...progress });
  }
  return { rewritten, stopped: false };
}
