import { join } from 'node:path';

/**
 * Where a corpus keeps event shards (DESIGN.md section 5):
 *   <dir>/events/<run_id>.parquet                          finalized shard
 *   <dir>/events/.parts/<run_id>/part-<first event>.parquet  durable parts of an unfinished run
 * The parts folder starts with a dot so `events/*.parquet` globs see finalized shards only.
 */

/** Throws unless `runId` is usable as one file name on every platform (no separators, no leading dot). */
export function validateRunId(runId: string): void {
  if (!runId || runId.startsWith('.') || /[/\\\0-\x1f:*?"<>|]/.test(runId) || runId.length > 200) {
    throw new Error(`run id ${JSON.stringify(runId)} cannot be a file name: no path separators, control characters, :*?"<>|, or leading dot`);
  }
}

export function eventsDir(dir: string): string {
  return join(dir, 'events');
}

export function shardPath(dir: string, runId: string): string {
  return join(dir, 'events', `${runId}.parquet`);
}

export function partsDir(dir: string, runId: string): string {
  return join(dir, 'events', '.parts', runId);
}

/** Zero-padded so lexical order is event order. */
export function partFileName(firstEvent: number): string {
  return `part-${String(firstEvent).padStart(12, '0')}.parquet`;
}

export function partPath(dir: string, runId: string, firstEvent: number): string {
  return join(partsDir(dir, runId), partFileName(firstEvent));
}

/** The first event of a part file name, or undefined for any other name (tmp files included). */
export function parsePartName(name: string): number | undefined {
  const m = /^part-(\d{12,})\.parquet$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The name a file is written under before its rename into place. */
export function tmpName(path: string): string {
  return `${path}.tmp`;
}
