import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { queryRows } from '@panta/corpus';

export const ROOT = resolve(import.meta.dirname, '..');
export const RHEON6 = join(ROOT, 'datasets', 'rheon6.jsonl');

/** A fresh temporary folder for one test. */
export function tempDir(prefix = 'panta-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes a sweep spec (YAML text) into `dir` and returns its path. */
export function writeSpec(dir: string, yaml: string, name = 'spec.yaml'): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

import { spawnSync } from 'node:child_process';

/**
 * Runs `code` in a fresh Node process (the built packages, from the repository's root) and lists the CommonJS
 * modules it loaded, each as its package path's first two segments (`bullmq/dist`, `@duckdb/node-bindings`,
 * `pino/pino.js`): what a start-up loads, for the tests that keep native bindings lazy.
 */
export function cjsPackagesLoaded(code: string): Set<string> {
  const list = `const { createRequire } = await import('node:module'); const keys = Object.keys(createRequire(import.meta.url).cache); console.log(JSON.stringify([...new Set(keys.map((k) => k.split('node_modules/').pop().split('/').slice(0, 2).join('/')))]));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `${code}\n${list}`], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cjsPackagesLoaded: exit ${r.status}: ${r.stderr}`);
  return new Set(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as string[]);
}

/** Runs the built `panta` binary (npm test builds it first) and returns exit code and output. */
export function panta(args: string[], cwd = ROOT): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'packages', 'cli', 'bin', 'panta.js'), ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

import { spawn } from 'node:child_process';

/** `panta` without blocking this process: needed when the test itself serves the model the sweep calls. */
export function pantaAsync(args: string[], cwd = ROOT): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'packages', 'cli', 'bin', 'panta.js'), ...args], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `panta` process the test can signal (a role of the distributed mode). */
export interface PantaProcess {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  kill(signal?: NodeJS.Signals): void;
  /** What it has written to stderr so far. */
  stderr(): string;
}

export function pantaProcess(args: string[], env: Record<string, string> = {}, cwd = ROOT): PantaProcess {
  const child = spawn(process.execPath, [join(ROOT, 'packages', 'cli', 'bin', 'panta.js'), ...args], {
    cwd,
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { pid: child.pid!, exited, kill: (signal = 'SIGTERM') => void child.kill(signal), stderr: () => stderr };
}

/**
 * Rows of corpus `a` not in `b` and of `b` not in `a`, on every event column but timings, compared by DuckDB
 * (EXCEPT ALL keeps duplicates): both 0 when the two corpora hold the same rows, every role included.
 */
export async function corpusDiff(a: string, b: string): Promise<{ extra: number; missing: number }> {
  const rows = (out: string) => `SELECT * EXCLUDE (latency_ms, created_at) FROM read_parquet('${out}/events/*.parquet')`;
  const [diff] = await queryRows(
    `SELECT (SELECT count(*) FROM (${rows(a)} EXCEPT ALL ${rows(b)}))::INTEGER AS extra, (SELECT count(*) FROM (${rows(b)} EXCEPT ALL ${rows(a)}))::INTEGER AS missing`,
  );
  return diff as { extra: number; missing: number };
}

/** The event rows of corpus `out` on the columns a served and an in-process surrogate must write alike (no timings). */
export function servedColumns(out: string): Promise<Record<string, unknown>[]> {
  const cols = 'run_id, event, role, seed, response, divergence, persona, prompt_tokens, completion_tokens, tag';
  return queryRows(`SELECT ${cols} FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event, role, seed`);
}

/** Parts of unfinished runs and finalized shards now on disk in corpus `out`. */
export function onDisk(out: string): { parts: number; shards: number } {
  const events = join(out, 'events');
  if (!existsSync(events)) return { parts: 0, shards: 0 };
  const shards = readdirSync(events).filter((f) => f.endsWith('.parquet')).length;
  const root = join(events, '.parts');
  const parts = existsSync(root)
    ? readdirSync(root).reduce((n, d) => n + readdirSync(join(root, d)).filter((f) => f.endsWith('.parquet')).length, 0)
    : 0;
  return { parts, shards };
}

/**
 * Runs `node test/fixtures/<fixture> ...args` and kills it with SIGKILL once `until()` holds (asked every `pollMs`,
 * for 60 s at the most), or stops asking when it exits on its own first. Resolves once it has exited, with
 * whether it had exited before it was killed (a test of work cut short expects false).
 */
export async function fixtureKilledWhen(
  fixture: string,
  args: string[],
  until: () => boolean | Promise<boolean>,
  pollMs = 10,
): Promise<{ exitedFirst: boolean }> {
  const child = spawn(process.execPath, [join(ROOT, 'test', 'fixtures', fixture), ...args], { cwd: ROOT, stdio: 'ignore' });
  let exitedFirst = false;
  const exited = new Promise((r) => child.once('exit', r)).then(() => (exitedFirst = true));
  const deadline = Date.now() + 60_000;
  while (!exitedFirst && Date.now() < deadline && !(await until())) await new Promise((r) => setTimeout(r, pollMs));
  const first = exitedFirst;
  child.kill('SIGKILL');
  await exited;
  return { exitedFirst: first };
}

/** Runs sweep `spec` into `out` with durable parts of `partRows` rows (test/fixtures/run-sweep.mjs), killed once `until()` holds. */
export async function sweepKilledWhen(
  spec: string,
  out: string,
  partRows: number,
  until: () => boolean | Promise<boolean>,
  pollMs = 10,
): Promise<void> {
  await fixtureKilledWhen('run-sweep.mjs', [spec, out, String(partRows)], until, pollMs);
}

/**
 * `panta ARGS` run in this process (the CLI's `runCli` on the sources, its stdout and stderr captured): the
 * command's logic and output without a node start and a load of the bundle per call (0.5 to 1 s of CPU each).
 * A test of what the process itself does (exit status as a process, signals, the built bundle) spawns the binary
 * instead (`panta`, `pantaAsync`). The CLI is imported on the first call, so files that never call this do not
 * load it. One call at a time: the process's streams are swapped for the call. `env` is set in process.env for
 * the call and restored after it.
 */
export async function pantaInProcess(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { runCli } = await import('@panta/cli');
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  try {
    const code = await runCli(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    return { code, stdout, stderr };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
