import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EVENT_ROWS_SQL } from '@panta/core';
import { eventsDir, parsePartName, partsDir, partsRoot, shardPath, tmpName, validateRunId } from './corpus-paths.js';
import { sqlString, withConnection } from './duckdb.js';
import { exists, fsyncDir, removeQuietly } from './fs-durable.js';

/** What of a run's events is durably on disk. */
export interface ShardProgress {
  /** events/<run_id>.parquet exists and opens. */
  finalized: boolean;
  /** Complete, contiguous part files in event order (full paths); empty when finalized. */
  parts: string[];
  /** The first event not durably written: resume the run there (EventShardWriter's startEvent). */
  nextEvent: number;
  /** Damaged or out-of-sequence files deleted by this inspection (a shard or parts that do not read). */
  discarded: string[];
}

/**
 * Inspects (and repairs) a run's durable output after a crash or stop:
 * - a finalized shard whose footer reads is the answer (leftover parts are deleted);
 * - otherwise part files count from event 0 while each opens and starts where the previous ended; the
 *   first corrupt part (e.g. truncated: its footer fails to read) or gap ends the run of good parts, and
 *   it and every later part are deleted;
 * - stale .tmp files (a write cut short before its rename) are deleted.
 */
export async function shardProgress(dir: string, runId: string): Promise<ShardProgress> {
  validateRunId(runId);
  const shard = shardPath(dir, runId);
  const parts = partsDir(dir, runId);
  await removeQuietly(tmpName(shard));
  const discarded: string[] = [];

  if (await exists(shard)) {
    const rows = await parquetRows(shard);
    if (rows !== undefined) {
      // A crash between the shard's rename and the parts' deletion leaves both.
      await removeQuietly(parts);
      return { finalized: true, parts: [], nextEvent: rows, discarded };
    }
    // Written by tmp + rename, so only a damaged disk gets here; the parts (if still there) decide.
    await removeQuietly(shard);
    discarded.push(shard);
  }

  let names: string[];
  try {
    names = await readdir(parts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { finalized: false, parts: [], nextEvent: 0, discarded };
    throw err;
  }
  const candidates: { path: string; first: number }[] = [];
  for (const name of names) {
    const first = parsePartName(name);
    if (first === undefined) await removeQuietly(join(parts, name));
    else candidates.push({ path: join(parts, name), first });
  }
  candidates.sort((a, b) => a.first - b.first);

  const good: string[] = [];
  let next = 0;
  let i = 0;
  for (; i < candidates.length; i++) {
    const c = candidates[i];
    if (c.first !== next) break;
    const rows = await parquetRows(c.path);
    if (rows === undefined || rows === 0) break;
    good.push(c.path);
    next += rows;
  }
  for (; i < candidates.length; i++) {
    await removeQuietly(candidates[i].path);
    discarded.push(candidates[i].path);
  }
  if (good.length < candidates.length || names.length > candidates.length) await fsyncDir(parts);
  return { finalized: false, parts: good, nextEvent: next, discarded };
}

/** Runs with a shard and runs with parts only, counted from the folder's names (nothing opened): for a resume's summary line. */
export function runsOnDisk(dir: string): { runsComplete: number; runsPartial: number } {
  const names = (folder: string) => {
    try {
      return readdirSync(folder);
    } catch {
      return [];
    }
  };
  const shards = new Set(
    names(eventsDir(dir))
      .filter((n) => n.endsWith('.parquet'))
      .map((n) => n.slice(0, -'.parquet'.length)),
  );
  const partial = names(partsRoot(dir)).filter(
    (run) => !shards.has(run) && names(partsDir(dir, run)).some((n) => parsePartName(n) !== undefined),
  );
  return { runsComplete: shards.size, runsPartial: partial.length };
}

/**
 * Events in a file (its agent rows; extra-call rows share their event's index), or undefined when the file
 * does not open as Parquet.
 */
async function parquetRows(path: string): Promise<number | undefined> {
  try {
    return await withConnection(async (con) => {
      const reader = await con.runAndReadAll(`SELECT count(*)::DOUBLE AS n FROM read_parquet(${sqlString(path)}) WHERE ${EVENT_ROWS_SQL}`);
      const rows = reader.getRows();
      return rows.length === 1 ? Number(rows[0][0]) : undefined;
    });
  } catch {
    return undefined;
  }
}
