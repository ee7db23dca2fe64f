import { join } from 'node:path';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The sweep's structured log: JSON lines appended to `<out>/log.jsonl` (a resumed sweep appends to the same
 * file), one line per run opened, resumed, finished or failed, and per sweep start and end. Synchronous
 * writes: a few lines per run, and a line must not be lost when the process is killed right after it.
 */
export function sweepLogger(out: string, level: string): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: join(out, 'log.jsonl'), append: true, mkdir: true, sync: true }));
}

/** A distributed role's log: JSON lines on stderr (collected by docker, Kubernetes or Slurm), synchronous. */
export function roleLogger(role: string, level: string): Logger {
  return pino({ level, base: { role, pid: process.pid } }, pino.destination({ dest: 2, sync: true }));
}
