import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { liveStatusPath, stateDir } from './corpus-paths.js';

/**
 * `<out>/.state/status.json`: what the process writing a corpus is doing, rewritten about once a second by
 * `panta run` (the embedded counterpart of the `panta:<sweep>:status` hash the scheduler keeps in Redis), so
 * that `panta dashboard --corpus DIR` can watch a running sweep at event granularity rather than from the
 * durable parts alone. Informational only: nothing resumes from it.
 */
export interface LiveStatus {
  /** The writing process, and when it last wrote this file (ms since the epoch). */
  pid: number;
  updatedAt: number;
  /** running: a session is writing; stopped: it was interrupted (resume with the same command); finished: it ended. */
  state: 'running' | 'stopped' | 'finished';
  eventsWritten: number;
  /** Events answered (ahead of eventsWritten while rows wait to be appended); absent in older files. */
  eventsExecuted?: number;
  eventsTotal: number;
  /** Events per second over the last few seconds. */
  eventsPerSecond: number;
  /** Calls in flight; calls, tokens and retries of this session. */
  inflight: number;
  calls: number;
  tokens: number;
  retries: number;
  runsTotal: number;
  runsActive: number;
  runsFinished: number;
  runsFailed: number;
  /** The runs open now. */
  runs: { run: string; written: number; total: number; inflight: number }[];
}

export { liveStatusPath } from './corpus-paths.js';

/** Written whole under a temporary name, then renamed: a reader never sees half a status. */
export function writeLiveStatus(out: string, status: LiveStatus): void {
  const file = liveStatusPath(out);
  mkdirSync(stateDir(out), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(status));
  renameSync(`${file}.tmp`, file);
}

/** The last status written, or null when there is none (or it does not parse). */
export function readLiveStatus(out: string): LiveStatus | null {
  try {
    return JSON.parse(readFileSync(liveStatusPath(out), 'utf8')) as LiveStatus;
  } catch {
    return null;
  }
}
