import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { SWEEPS_KEY, sweepKeys } from '../src/index.js';
import { ROOT, corpusDiff, panta, pantaAsync, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { logged, redisPerFile } from './roles.js';

/**
 * Two configuration groups (a mean field and a ring) of Ising spins on the heat-bath surrogate, two rounds of
 * one temperature each: 600 events in round 0 and 200 in each round after, chains of up to 60 calls of 5 ms.
 */
const SPEC = `name: adaptive-cluster
dataset: ${join(ROOT, 'datasets', 'spins.jsonl')}
prompts: [ising]
geometries: [meanfield, ring]
sizes: [8, 12]
temperatures: {adaptive: {range: [0.4, 1.6], start: 3, add: 1, rounds: 2, target: chi-peak}}
trials: 1
sweeps: 4
seed: 9
backend: {kind: surrogate, scenario: ising-meanfield, coupling: 1, latency_ms: 5}
encoders: [{name: hashing, kind: hashing, dim: 16}]
`;

const dir = tempDir('panta-adaptive-');
const redis = redisPerFile(dir);

const manifestOf = (out: string) => JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;

/** The scheduler's status hash for the one sweep published. */
async function status(): Promise<Record<string, string>> {
  const ids = Object.keys(await redis.client.hgetall(SWEEPS_KEY));
  return ids.length === 1 ? redis.client.hgetall(sweepKeys(ids[0]!).status) : {};
}

/** Waits until the scheduler reports round `round` running with at least `events` of the sweep's events written. */
async function reached(round: number, events: number): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const s = await status();
    if (Number(s.round ?? -1) === round && Number(s.eventsWritten ?? 0) >= events) return;
    await sleep(25);
  }
  throw new Error(`the scheduler never reported round ${round} with ${events} events written: ${JSON.stringify(await status())}`);
}

describe('adaptive temperatures on the cluster', () => {
  it('runs the rounds as embedded: the scheduler killed between rounds and mid-round, and Redis restarted, end with the same grids and corpus', {
    timeout: 240_000,
  }, async () => {
    const specFile = writeSpec(dir, SPEC, 'adaptive.yaml');
    const out = join(dir, 'cluster');
    const { roles } = redis;
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const workers = [roles.spawn(['worker', '--concurrency', '8', '--lock-ms', '1500'])];
    const scheduler = () => roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
    let current: PantaProcess = scheduler();

    // Killed as round 0 ends: every run closed, the collector asked for round 1's grids.
    await logged(current, /"round":1,"msg":"adaptive temperatures: every run of the round before is closed/);
    current.kill('SIGKILL');
    expect((await current.exited).signal).toBe('SIGKILL');
    current = scheduler();

    // The restarted scheduler finds round 0 on disk, gets round 1's grids again from the collector, and runs
    // them; killed mid-round.
    await reached(1, 600 + 50);
    const shown = await pantaAsync(['status', '--redis', redis.url]);
    expect(shown.stdout).toContain('adaptive temperatures: round 1 of 2');
    current.kill('SIGKILL');
    expect((await current.exited).signal).toBe('SIGKILL');
    current = scheduler();

    // Redis killed (AOF, appendfsync always) and restarted mid-round 2.
    await reached(2, 800 + 50);
    await redis.server.restart('SIGKILL', 700);

    const ended = await current.exited;
    expect(ended.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
    expect(ended.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    expect(await Promise.all(workers.map(async (w) => (await w.exited).code))).toEqual([0]);

    // The embedded sweep's grids and rows; verify replays the rounds from the runs.
    const embedded = join(dir, 'embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    const grids = manifestOf(embedded).adaptive!.grids;
    for (const temps of Object.values(grids)) expect(temps.length).toBe(5);
    expect(manifestOf(out).adaptive?.grids).toEqual(grids);
    expect(manifestOf(out).runs).toEqual(manifestOf(embedded).runs);
    expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
    const verified = panta(['verify', out]);
    expect(verified.stdout + verified.stderr).toContain('complete and consistent');
    expect(verified.code).toBe(0);
  });
});
