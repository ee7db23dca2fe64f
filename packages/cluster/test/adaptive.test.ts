import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { SWEEPS_KEY, sweepKeys } from '../src/index.js';
import { ROOT, corpusDiff, pantaAsync, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { expectVerified, logged, redisPerFile } from './roles.js';

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

/** The published sweep's keys and payload (with the grids of the scheduler's round). */
async function published(): Promise<{ keys: ReturnType<typeof sweepKeys>; payload?: { round?: number; grids?: [string, number[]][] } }> {
  const ids = Object.keys(await redis.client.hgetall(SWEEPS_KEY));
  const keys = sweepKeys(ids[0] ?? '');
  const text = ids.length === 1 ? await redis.client.get(keys.spec) : null;
  return { keys, ...(text ? { payload: JSON.parse(text) } : {}) };
}

/**
 * Waits until round `round` runs: its grids published, and rows written of a run it added to `before` (the
 * grids of the round before, by group: group ising-meanfield-glauber holds run ising-meanfield-n8-T0.7-glauber-t0).
 * Returns its grids.
 */
async function running(round: number, before: Map<string, number[]>): Promise<Map<string, number[]>> {
  for (let i = 0; i < 2400; i++) {
    const { keys, payload } = await published();
    if (payload?.round === round) {
      const grids = new Map(payload.grids);
      const added = [...grids].flatMap(([g, temps]) =>
        temps
          .filter((t) => !(before.get(g) ?? [0.4, 1, 1.6]).includes(t))
          .map((t) => ({ head: g.split('-').slice(0, 2).join('-'), t: `-T${t}-` })),
      );
      const written = await redis.client.hgetall(keys.written);
      const ran = (run: string) => added.some((a) => run.startsWith(`${a.head}-`) && run.includes(a.t));
      if (Object.entries(written).some(([run, n]) => Number(n) > 0 && ran(run))) return grids;
    }
    await sleep(25);
  }
  throw new Error(`round ${round} never ran; the payload's round: ${(await published()).payload?.round}`);
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
    const first = await running(1, new Map());
    current.kill('SIGKILL');
    expect((await current.exited).signal).toBe('SIGKILL');
    current = scheduler();

    // Redis killed (AOF, appendfsync always) and restarted mid-round 2.
    await running(2, first);
    await redis.server.restart('SIGKILL', 700);

    const ended = await current.exited;
    expect(ended.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
    expect(ended.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    expect(await Promise.all(workers.map(async (w) => (await w.exited).code))).toEqual([0]);
    // The status the scheduler left says how far the rounds went.
    const shown = await pantaAsync(['status', '--redis', redis.url]);
    expect(shown.stdout).toContain('runs 20/20 finished');
    expect(shown.stdout).toContain('adaptive temperatures: round 2 of 2');

    // The embedded sweep's grids and rows; verify replays the rounds from the runs.
    const embedded = join(dir, 'embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    const grids = manifestOf(embedded).adaptive!.grids;
    for (const temps of Object.values(grids)) expect(temps.length).toBe(5);
    expect(manifestOf(out).adaptive?.grids).toEqual(grids);
    expect(manifestOf(out).runs).toEqual(manifestOf(embedded).runs);
    expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
    await expectVerified(out);
  });
});
