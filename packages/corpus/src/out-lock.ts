import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { hostname } from 'node:os';
import { InputError } from '@panta/core';
import { outLockPath, stateDir } from './corpus-paths.js';

/**
 * `<out>/.state/lock`: one process writes a corpus folder at a time (`panta run`, or the collector of a
 * distributed sweep). The file is created atomically (a link of a complete temporary file, which fails when
 * the name exists, also on NFS), so a reader never sees half a holder. A lock whose process is dead on this
 * host (kill -9, a crash) is taken over, and said so; one held from another host cannot be checked from here
 * and is only reported.
 */
export interface OutLockHolder {
  pid: number;
  host: string;
  /** The command line, credentials in URLs masked. */
  command: string;
  /** ISO time the lock was taken. */
  since: string;
  /** Linux: the process's start time (clock ticks after boot), which tells a reused pid from the holder. */
  started?: string;
}

export interface OutLock {
  readonly file: string;
  readonly holder: OutLockHolder;
  /** The dead holder whose lock this one replaced, if any. */
  readonly tookOver?: OutLockHolder;
  /** Removes the lock if it is still this one; idempotent (also done when the process exits). */
  release(): void;
}

export { outLockPath } from './corpus-paths.js';

/** Locks held by this process: a lock file naming this pid but absent here is a previous life's (a container's pid 1). */
const heldHere = new Set<string>();

/**
 * Takes `<out>/.state/lock` (creating the folders), or throws an InputError naming the process that holds it.
 * Call it after the input is validated: it is the first thing written into the folder.
 */
export function acquireOutLock(out: string, command = commandLine()): OutLock {
  const file = outLockPath(out);
  try {
    mkdirSync(stateDir(out), { recursive: true });
  } catch (e) {
    throw unwritable(out, e);
  }
  const holder: OutLockHolder = {
    pid: process.pid,
    host: hostname(),
    command,
    since: new Date().toISOString(),
    ...startedField(process.pid),
  };
  const text = `${JSON.stringify(holder)}\n`;
  let tookOver: OutLockHolder | undefined;
  for (let attempt = 0; !create(file, text); attempt++) {
    const raw = readText(file);
    if (raw === undefined) {
      // Released between the two calls (try again), or there but unreadable.
      if (attempt >= 5)
        throw new InputError(
          file,
          '',
          "the corpus folder's lock file cannot be read",
          `make ${file} readable, or delete it if no panta process is writing ${out}`,
        );
      continue;
    }
    const other = parseHolder(raw);
    if (!other)
      throw new InputError(
        file,
        '',
        "the corpus folder's lock file does not read as a lock",
        `if no panta process is writing ${out}, delete ${file}`,
      );
    if (alive(other, file) || attempt >= 5) throw heldError(out, file, other);
    if (takeOver(file, raw)) tookOver = other;
  }
  heldHere.add(file);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    heldHere.delete(file);
    process.off('exit', release);
    if (readText(file) === text) removeQuietly(file);
  };
  // process.exit (a second Ctrl-C) skips every finally; an exit listener still runs.
  process.on('exit', release);
  return { file, holder, ...(tookOver ? { tookOver } : {}), release };
}

/** Creates `file` holding `text` if no file has that name; false if one does. */
function create(file: string, text: string): boolean {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(tmp, text);
  } catch (e) {
    throw unwritable(dirname(dirname(file)), e);
  }
  try {
    linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A filesystem without hard links: an exclusive create, then the text (a reader may see it empty a moment).
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw e;
    return createExclusive(file, text);
  } finally {
    removeQuietly(tmp);
  }
}

function createExclusive(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Removes a dead holder's lock, under a takeover guard so that two processes finding the same dead lock do
 * not both remove it (the second would remove the first one's new lock). False when another process is
 * taking it over now: the caller reads the lock again.
 */
function takeOver(file: string, deadText: string): boolean {
  const guard = `${file}.takeover`;
  if (!createExclusive(guard, `${process.pid} ${hostname()}\n`)) {
    const [pid, host] = (readText(guard) ?? '').trim().split(' ');
    if (host === hostname() && pid !== undefined && !pidAlive(Number(pid))) removeQuietly(guard);
    else sleepSync(50);
    return false;
  }
  try {
    if (readText(file) !== deadText) return false;
    removeQuietly(file);
    return true;
  } finally {
    removeQuietly(guard);
  }
}

function unwritable(out: string, e: unknown): InputError {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  const why: Record<string, string> = {
    EACCES: 'no permission to write there',
    EPERM: 'no permission to write there',
    EROFS: 'a read-only filesystem',
    ENOTDIR: 'a file is in the way',
    EEXIST: 'a file is in the way',
    ENOSPC: 'no space left',
  };
  return new InputError(
    out,
    '',
    `cannot write the corpus folder (${why[code] ?? (e as Error).message})`,
    'choose an --out in a folder you can write to',
  );
}

function heldError(out: string, file: string, h: OutLockHolder): InputError {
  const here = h.host === hostname();
  const who = `pid ${h.pid} on ${h.host} ("${h.command}"), since ${h.since}`;
  const fix = here
    ? `wait for it to finish or stop it (kill ${h.pid}; a run resumes later), or choose another --out`
    : `wait for it to finish or stop it on ${h.host}, or choose another --out; if that process is gone, delete ${file}`;
  return new InputError(out, '', `another panta process is writing this corpus folder: ${who}`, fix);
}

/** Whether the holder may still be running: always, unless it is on this host and provably gone. */
function alive(h: OutLockHolder, file: string): boolean {
  if (h.host !== hostname()) return true;
  if (h.pid === process.pid) return heldHere.has(file);
  if (!pidAlive(h.pid)) return false;
  const now = startedField(h.pid).started;
  return h.started === undefined || now === undefined || now === h.started;
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat, after the command name (which may hold spaces and parentheses). */
function startedField(pid: number): { started?: string } {
  const stat = readText(`/proc/${pid}/stat`);
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const started = fields?.[19];
  return started ? { started } : {};
}

function parseHolder(raw: string): OutLockHolder | undefined {
  try {
    const h = JSON.parse(raw) as Partial<OutLockHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string') return undefined;
    return {
      pid: h.pid,
      host: h.host,
      command: String(h.command ?? '?'),
      since: String(h.since ?? '?'),
      ...(typeof h.started === 'string' ? { started: h.started } : {}),
    };
  } catch {
    // not a holder
  }
  return undefined;
}

function commandLine(): string {
  const [, script = 'node', ...args] = process.argv;
  const name = basename(script) === 'panta.js' ? 'panta' : basename(script);
  const text = [name, ...args].join(' ').replace(/\/\/[^@/\s]*@/g, '//***@');
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
