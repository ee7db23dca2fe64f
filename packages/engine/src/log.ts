import { redact } from '@panta/core';
import { logPath } from '@panta/corpus';
import { writeSync } from 'node:fs';
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

/** How a role writes its log: JSON lines, or one human line per entry. */
export type LogFormat = 'json' | 'text';

/**
 * $PANTA_LOG_FORMAT (json or text) when set, else text on a terminal (several roles started in one terminal
 * each prefix their lines with their name) and JSON lines otherwise (docker, Kubernetes and Slurm collect them).
 */
export function logFormat(stderr: { isTTY?: boolean } = process.stderr, env: NodeJS.ProcessEnv = process.env): LogFormat {
  const chosen = env.PANTA_LOG_FORMAT?.trim().toLowerCase();
  if (chosen === 'json' || chosen === 'text') return chosen;
  return stderr.isTTY ? 'text' : 'json';
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * One pino JSON line as a human one: `worker 4321 09:23:31 INFO message key=value ...` (the role and pid first,
 * so that lines of roles sharing a terminal tell apart; the time in UTC). A line that is not JSON is kept as is.
 */
export function humanLogLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, pid, role, msg, hostname: _host, ...rest } = entry;
  const at = typeof time === 'number' ? new Date(time).toISOString().slice(11, 19) : '';
  const fields = Object.entries(rest).map(([k, v]) => {
    const text = typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
    return `${k}=${text}`;
  });
  const head = [role ?? 'panta', pid, at, LEVELS[level as number] ?? String(level)].filter((x) => x !== undefined && x !== '');
  return `${[...head, msg ?? '', ...fields].filter((x) => x !== '').join(' ')}\n`;
}

/**
 * A distributed role's log on stderr, synchronous and redacted: JSON lines (collected by docker, Kubernetes or
 * Slurm), or on a terminal human lines prefixed with the role (see logFormat).
 */
export function roleLogger(role: string, level: string, format: LogFormat = logFormat()): Logger {
  const options = { level, base: { role, pid: process.pid }, hooks: redacting };
  if (format === 'text') return pino(options, { write: (line: string) => void writeSync(2, humanLogLine(line)) });
  return pino(options, pino.destination({ dest: 2, sync: true }));
}
