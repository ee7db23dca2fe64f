import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { RHEON6, pantaAsync, pantaProcess, tempDir, writeSpec, type PantaProcess, pantaInProcess as cli } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';

// Tests of the out-folder lock: on the built binary (npm test builds it first) where processes hold it and
// signals release it, in this process where one command meets a lock file.

/** A sweep that never ends by itself (2 s a call): it holds its folder until it is stopped. */
const SLOW = `
name: slow
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [16]
temperatures: [0.5]
trials: 1
sweeps: 50
seed: 3
backend: {kind: surrogate, latency_ms: 2000}
concurrency: 2
`;
const QUICK = SLOW.replace('name: slow', 'name: quick').replace('latency_ms: 2000', 'latency_ms: 0').replace('sweeps: 50', 'sweeps: 2');

const started: PantaProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill('SIGKILL');
});

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (ok()) return;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The pid of a process that has exited (so no process has it, short of a pid reused at once). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function writeLock(out: string, holder: object): string {
  mkdirSync(join(out, '.state'), { recursive: true });
  const file = join(out, '.state', 'lock');
  writeFileSync(file, `${JSON.stringify(holder)}\n`);
  return file;
}

describe('two `panta run` on the same --out', () => {
  it('exactly one proceeds; the other exits 2 at once with one line naming the holder (pid, host, command, since) and the fix; Ctrl-C releases the lock', async () => {
    const dir = tempDir('panta-lock-');
    const spec = writeSpec(dir, SLOW);
    const out = join(dir, 'out');
    const lock = join(out, '.state', 'lock');
    const first = pantaProcess(['run', spec, '--out', out]);
    started.push(first);
    await until('the first run to take the lock', () => existsSync(lock));
    const holder = JSON.parse(readFileSync(lock, 'utf8')) as { pid: number; host: string; command: string; since: string };
    expect(holder).toMatchObject({ pid: first.pid, host: hostname() });
    expect(holder.command).toBe(`panta run ${spec} --out ${out}`);

    const second = await pantaAsync(['run', spec, '--out', out]);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stdout).toBe('');
    expect(second.stderr).toBe(
      `panta: ${out}: another panta process is writing this corpus folder: pid ${first.pid} on ${hostname()} ("panta run ${spec} --out ${out}"), since ${holder.since}; fix: wait for it to finish or stop it (kill ${first.pid}; a run resumes later), or choose another --out\n`,
    );
    // The refused process touched nothing of the first one's.
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(holder);
    expect(first.stderr()).not.toMatch(/ENOENT|Error/);

    // Ctrl-C twice: process.exit skips every finally; the lock goes anyway.
    first.kill('SIGINT');
    await until('the first Ctrl-C to be seen', () => first.stderr().includes('interrupted'));
    first.kill('SIGINT');
    const done = await first.exited;
    expect(done.code).toBe(130);
    expect(existsSync(lock)).toBe(false);
  }, 120_000);

  it('SIGTERM (Slurm, Kubernetes) stops like Ctrl-C: calls in flight finish, written events are saved, the lock is released, exit 143', async () => {
    const dir = tempDir('panta-lock-term-');
    const out = join(dir, 'out');
    const lock = join(out, '.state', 'lock');
    const run = pantaProcess(['run', writeSpec(dir, SLOW), '--out', out]);
    started.push(run);
    await until('the run to take the lock', () => existsSync(lock));
    run.kill('SIGTERM');
    const done = await run.exited;
    expect(done.code, run.stderr()).toBe(143);
    expect(run.stderr()).toContain('panta: terminated: finishing the calls in flight');
    expect(run.stderr()).toContain('written events are saved in');
    expect(existsSync(lock)).toBe(false);
  }, 120_000);

  it('a lock whose process is dead on this host (kill -9) is taken over with a warning, and is gone after the run', async () => {
    const dir = tempDir('panta-lock-stale-');
    const out = join(dir, 'out');
    const pid = deadPid();
    const lock = writeLock(out, { pid, host: hostname(), command: 'panta run old.yaml', since: '2026-01-01T00:00:00.000Z' });
    const r = await cli(['run', writeSpec(dir, QUICK), '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `panta: warning: took over the corpus folder's lock from pid ${pid} on ${hostname()} ("panta run old.yaml", since 2026-01-01T00:00:00.000Z), which is no longer running`,
    );
    expect(existsSync(lock)).toBe(false);
    const log = readFileSync(join(out, 'log.jsonl'), 'utf8');
    expect(log).toContain(
      `"holder":{"pid":${pid},"host":"${hostname()}","command":"panta run old.yaml","since":"2026-01-01T00:00:00.000Z"},"msg":"took over the lock of a process that is gone"`,
    );
    expect((await cli(['verify', out])).code).toBe(0);
  }, 120_000);

  it('a lock held from another host is reported, not broken; an unreadable one names the file to delete', async () => {
    const dir = tempDir('panta-lock-remote-');
    const spec = writeSpec(dir, QUICK);
    const out = join(dir, 'out');
    const lock = writeLock(out, { pid: 1, host: 'elsewhere.example', command: 'panta run x.yaml', since: '2026-01-01T00:00:00.000Z' });
    const r = await cli(['run', spec, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `panta: ${out}: another panta process is writing this corpus folder: pid 1 on elsewhere.example ("panta run x.yaml"), since 2026-01-01T00:00:00.000Z; fix: wait for it to finish or stop it on elsewhere.example, or choose another --out; if that process is gone, delete ${lock}\n`,
    );
    expect(existsSync(lock)).toBe(true);
    expect(existsSync(join(out, 'manifest.json'))).toBe(false);

    writeFileSync(lock, 'not a lock');
    const garbled = await cli(['run', spec, '--out', out]);
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toBe(
      `panta: ${lock}: the corpus folder's lock file does not read as a lock; fix: if no panta process is writing ${out}, delete ${lock}\n`,
    );
  });
});

describe('the collector takes the same lock', () => {
  let server: RedisServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('a collector for a folder another process is writing exits 2 naming that process', async () => {
    const dir = tempDir('panta-lock-collector-');
    server = await RedisServer.start(dir);
    const out = join(dir, 'out');
    // This test's own process is alive on this host: a holder the collector must not break.
    writeLock(out, { pid: process.pid, host: hostname(), command: 'panta run held.yaml', since: '2026-01-01T00:00:00.000Z' });
    const env = { PANTA_REDIS_URL: server.url };
    const scheduler = pantaProcess(['scheduler', writeSpec(dir, QUICK), '--out', out], env);
    started.push(scheduler);
    const collector = pantaProcess(['collector'], env);
    started.push(collector);
    const r = await collector.exited;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^panta: ${out}: another panta process is writing this corpus folder: pid ${process.pid} on .*\\("panta run held\\.yaml"\\).*; fix: `,
      ),
    );
    scheduler.kill('SIGKILL');
    await scheduler.exited;
  }, 120_000);

  it('a collector whose --out cannot be a folder (under a file, or on /proc) exits 2 in one line naming the cause, instead of hanging', async () => {
    const dir = tempDir('panta-lock-collector-out-');
    const own = await RedisServer.start(dir);
    const env = { PANTA_REDIS_URL: own.url };
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    for (const [out, why] of [
      [join(file, 'out'), `cannot be made: ${file} is a file, not a folder`],
      ['/proc/panta-out', 'cannot be made \\(the file system at /proc does not allow new folders\\)'],
    ] as const) {
      // A scheduler per case (a collector waits for a sweep a scheduler serves): it says the refusal and goes on
      // waiting for a collector that accepts the sweep, until stopped.
      const scheduler = pantaProcess(['scheduler', writeSpec(dir, QUICK), '--out', join(dir, 'out')], env);
      started.push(scheduler);
      // The collector in this process: it returns (exit 2) rather than waiting on.
      const r = await cli(['collector', '--out', out], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^panta: ${out}: ${why}; fix: `));
      for (let i = 0; i < 200 && !scheduler.stderr().includes('a collector refused this sweep'); i++) await sleep(100);
      expect(scheduler.stderr()).toContain('a collector refused this sweep and exited');
      scheduler.kill('SIGTERM');
      expect((await scheduler.exited).code).toBe(130);
    }
    await own.stop();
  }, 120_000);
});
