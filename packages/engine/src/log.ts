import { redact } from '@panta/core';
import { logPath } from '@panta/corpus';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Every line passes through the process's redactor as it is written (registered API keys, URL credentials,
 * credential headers become `[redacted]`): whatever a message or an error object holds, a key that a server
 * echoed never reaches the log. The patterns stop at quotes and backslashes, so a line stays valid JSON.
 */
const redacting: LoggerOptions['hooks'] = { streamWrite: redact };

/**
 * The sweep's structured log: JSON lines appended to `<out>/log.jsonl` (a resumed sweep appends to the same
 * file), one line per run opened, resumed, finished or failed, and per sweep start and end. Synchronous
 * writes: a few lines per run, and a line must not be lost when the process is killed right after it.
 */
export function sweepLogger(out: string, level: string): Logger {
  return pino(
    { level, base: { pid: process.pid }, hooks: redacting },
    pino.destination({ dest: logPath(out), append: true, mkdir: true, sync: true }),
  );
}

/** A distributed role's log: JSON lines on stderr (collected by docker, Kubernetes or Slurm), synchronous, redacted. */
export function roleLogger(role: string, level: string): Logger {
  return pino({ level, base: { role, pid: process.pid }, hooks: redacting }, pino.destination({ dest: 2, sync: true }));
}
