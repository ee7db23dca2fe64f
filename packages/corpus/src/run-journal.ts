import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { redactValue } from '@panta/core';
import { runJournalPath, stateDir } from './corpus-paths.js';

/** What a session of a run (finished, failed or stopped) leaves for runs.parquet that its shard cannot tell: time and calls. */
export interface RunRecord {
  run_id: string;
  status: 'complete' | 'failed' | 'stopped';
  wall_ms: number;
  calls: number;
  retries: number;
  error?: string;
  at: string;
}

/**
 * Appends one record durably (fsync): the journal survives a crash right after a run finishes. Async: an
 * fsync takes milliseconds, which on the event loop would stall every call in flight. Redacted: a failure's
 * error can quote what a server sent back, an echoed API key included.
 */
export async function appendRunRecord(out: string, record: RunRecord): Promise<void> {
  await mkdir(stateDir(out), { recursive: true });
  // One write on an O_APPEND descriptor: records of runs closing at once never interleave.
  const fh = await open(runJournalPath(out), 'a');
  try {
    await fh.writeFile(`${JSON.stringify(redactValue(record))}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The latest record of every run. Time and calls add up over the sessions a run took; a torn last line
 * (a crash mid-append) is ignored. Redacted again as read: a journal written before a key was registered
 * (an older session) does not carry it into runs.parquet or the console.
 */
export function readRunRecords(out: string): Map<string, RunRecord> {
  const records = new Map<string, RunRecord>();
  const file = runJournalPath(out);
  if (!existsSync(file)) return records;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let r: RunRecord;
    try {
      r = redactValue(JSON.parse(line) as RunRecord);
    } catch {
      continue;
    }
    const before = records.get(r.run_id);
    records.set(
      r.run_id,
      before ? { ...r, wall_ms: before.wall_ms + r.wall_ms, calls: before.calls + r.calls, retries: before.retries + r.retries } : r,
    );
  }
  return records;
}
