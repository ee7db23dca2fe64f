import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a finished (or failed) run leaves for runs.parquet that its shard cannot tell: time and calls. */
export interface RunRecord {
  run_id: string;
  status: 'complete' | 'failed';
  wall_ms: number;
  calls: number;
  retries: number;
  error?: string;
  at: string;
}

function journalPath(out: string): string {
  return join(out, '.state', 'runs.jsonl');
}

/** Appends one record durably (fsync): the journal survives a crash right after a run finishes. */
export function appendRunRecord(out: string, record: RunRecord): void {
  mkdirSync(join(out, '.state'), { recursive: true });
  const file = journalPath(out);
  appendFileSync(file, `${JSON.stringify(record)}\n`);
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * The latest record of every run. Time and calls add up over the sessions a run took; a torn last line
 * (a crash mid-append) is ignored.
 */
export function readRunRecords(out: string): Map<string, RunRecord> {
  const records = new Map<string, RunRecord>();
  const file = journalPath(out);
  if (!existsSync(file)) return records;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let r: RunRecord;
    try {
      r = JSON.parse(line) as RunRecord;
    } catch {
      continue;
    }
    const before = records.get(r.run_id);
    records.set(r.run_id, before ? { ...r, wall_ms: before.wall_ms + r.wall_ms, calls: before.calls + r.calls, retries: before.retries + r.retries } : r);
  }
  return records;
}
