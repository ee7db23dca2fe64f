import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { ROOT, corpusDiff, pantaProcess, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { RedisServer } from '../../../test/redis-server.js';
import { expectVerified } from './roles.js';

// The drift-debate example, small: every arm (its judges, feedback and regenerated turns), 2 x 3 x 2 runs.
const SPEC = `name: debate-cluster
dataset: ${ROOT}/datasets/mmlu-pro28.jsonl
prompts: [mp2804, mp2808]
geometries: [meanfield]
sizes: [3]
temperatures: [0.7]
trials: 2
sweeps: 4
dynamics: debate
protocol: [glauber, drift-policy, regenerate]
seed: 3
backend: {kind: surrogate, latency_ms: 5}
encoders: [{name: hashing, kind: hashing, dim: 64}]
concurrency: 8
`;

// The belief board's arms on relay and hub (examples/belief-board.yaml, small): a board row travels as a worker's
// result, and the members read it through Redis.
const BOARD_SPEC = `name: board-cluster
dataset: ${ROOT}/datasets/claims24.jsonl
prompts: [cl01, cl02]
geometries: [chain]
sizes: [3]
temperatures: [0.7]
trials: 1
dynamics: [relay, hub]
protocol: [glauber, board, board_inert, full, sop, table, extract, down]
population: {file: ${ROOT}/examples/team-beliefs.jsonl, assign: distinct}
seed: 17
backend: {kind: surrogate, latency_ms: 5}
encoders: [{name: hashing, kind: hashing, dim: 64}]
concurrency: 8
`;

let server: RedisServer;
const dir = tempDir('panta-teams-cluster-');
const started: PantaProcess[] = [];

beforeAll(async () => {
  server = await RedisServer.start(dir);
});
afterAll(async () => {
  for (const p of started) p.kill('SIGKILL');
  await server.stop();
});

/** A scheduler, two workers and a collector run the spec to `out`: every role exits 0, none logged an error. */
async function runDistributed(specFile: string, out: string): Promise<void> {
  const spawn = (args: string[]) => {
    const p = pantaProcess(args, { PANTA_REDIS_URL: server.url });
    started.push(p);
    return p;
  };
  const collector = spawn(['collector', '--out', out, '--durable-ms', '300']);
  const workers = [0, 1].map(() => spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']));
  const scheduler = spawn(['scheduler', specFile, '--watch-ms', '3000']);
  const scheduled = await scheduler.exited;
  expect(scheduled.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
  expect(scheduled.code, scheduled.stderr).toBe(0);
  expect((await collector.exited).code).toBe(0);
  for (const w of workers) w.kill('SIGTERM');
  expect(await Promise.all(workers.map(async (w) => (await w.exited).code))).toEqual([0, 0]);
}

describe('team schedules in distributed mode (BullMQ, a real redis-server)', () => {
  it('the belief board on relay and hub (every arm): the distributed corpus is the embedded one, boards included, and verifies', async () => {
    const specFile = writeSpec(dir, BOARD_SPEC, 'board.yaml');
    const out = join(dir, 'board-distributed');
    await runDistributed(specFile, out);
    const embedded = join(dir, 'board-embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    const [boards] = await queryRows(`SELECT count(board)::INTEGER AS n FROM read_parquet('${out}/events/*.parquet')`);
    expect(boards!.n).toBeGreaterThan(0);
    expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
    await expectVerified(out);
  });

  it('a debate sweep run by a scheduler, two workers and a collector writes the embedded corpus, and verifies', async () => {
    const specFile = writeSpec(dir, SPEC, 'debate.yaml');
    const out = join(dir, 'distributed');
    await runDistributed(specFile, out);

    const embedded = join(dir, 'embedded');
    expect((await runSweep(specFile, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    const [rows] = await queryRows(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT role)::INTEGER AS roles FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(rows!.n).toBeGreaterThan(0);
    // persona-gen, persona, vote, solution, drift-judge, feedback
    expect(rows!.roles).toBe(6);
    expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
    await expectVerified(out);
  });
});
