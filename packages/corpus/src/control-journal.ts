import { readFile, mkdir, open, writeFile } from 'node:fs/promises';
import { redactValue } from '@panta/core';
import { controlDir, controlJournalPath } from './corpus-paths.js';
import { commitFile, fsyncFile } from './fs-durable.js';

/**
 * A run's sweep boundaries (early stopping, drift-policy), one JSON line each: the control state after the
 * sweep and the protocol calls made there. A boundary is journalled before any event of the next sweep runs,
 * so a resumed run continues from the same decisions, and the calls' rows are written with that sweep.
 */
export interface BoundaryRecord<S = unknown, C = unknown> {
  sweep: number;
  state: S;
  calls: C[];
}

/** Appends one boundary durably; redacted, as every journal (a protocol call's error can quote a server). */
export async function appendBoundary(out: string, runId: string, record: BoundaryRecord): Promise<void> {
  const path = controlJournalPath(out, runId);
  await mkdir(controlDir(out), { recursive: true });
  const fh = await open(path, 'a');
  try {
    await fh.writeFile(`${JSON.stringify(redactValue(record))}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * The boundaries of a run whose sweep is durable (events up to (sweep + 1) N - 1 written, given `startEvent`
 * and N); later ones were decided on events being redone and are dropped from the journal. A torn last line is
 * ignored.
 */
export async function readBoundaries<S, C>(out: string, runId: string, startEvent: number, n: number): Promise<BoundaryRecord<S, C>[]> {
  const path = controlJournalPath(out, runId);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const all: BoundaryRecord<S, C>[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      all.push(JSON.parse(line) as BoundaryRecord<S, C>);
    } catch {
      break;
    }
  }
  const kept = all.filter((r) => (r.sweep + 1) * n <= startEvent);
  if (kept.length !== all.length || (text.length > 0 && !text.endsWith('\n'))) {
    const tmp = `${path}.tmp`;
    await writeFile(tmp, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
    await fsyncFile(tmp);
    await commitFile(tmp, path);
  }
  return kept;
}
