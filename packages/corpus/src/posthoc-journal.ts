import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDir } from './fs-durable.js';

/**
 * The journal of a post-hoc pass (`panta embed`, `panta judge`): its first line says what the pass adds
 * (the encoder or judge, whether it replaces), then one line per shard rewritten. A rerun after a crash
 * skips those shards; the journal goes once the manifest records the pass. Lines are fsynced: a line is
 * written only after its shard's rename, so a shard it names is done (a torn last line is ignored, and
 * that shard is done again, to the same bytes' values).
 */
export interface PosthocJournal<H> {
  header: H;
  done: Set<string>;
  /** Model calls the done shards cost (a resumed pass adds them to its own: its count is an uninterrupted pass's). */
  calls: number;
}

export function readPosthocJournal<H>(file: string): PosthocJournal<H> | null {
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8').split('\n');
  let header: H | undefined;
  const done = new Set<string>();
  let calls = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    let entry: { header?: H; done?: string; calls?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (header === undefined && entry.header !== undefined) header = entry.header;
    else if (typeof entry.done === 'string' && !done.has(entry.done)) {
      done.add(entry.done);
      if (typeof entry.calls === 'number' && Number.isInteger(entry.calls) && entry.calls > 0) calls += entry.calls;
    }
  }
  return header === undefined ? null : { header, done, calls };
}

function appendLine(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${JSON.stringify(value)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Starts a journal (replacing a headless one, which a crash before its first line could leave). */
export async function startPosthocJournal(file: string, header: unknown): Promise<void> {
  rmSync(file, { force: true });
  appendLine(file, { header });
  await fsyncDir(dirname(file));
}

/** A shard done, with the model calls it cost (a judge pass; none for an embedding pass). */
export function recordPosthocDone(file: string, runId: string, calls?: number): void {
  appendLine(file, calls ? { done: runId, calls } : { done: runId });
}

export async function removePosthocJournal(file: string): Promise<void> {
  rmSync(file, { force: true });
  await fsyncDir(dirname(file));
}
