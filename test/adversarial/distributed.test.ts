import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepIdOf } from '@panta/cluster';
import { queryRows } from '@panta/corpus';
import { loadSweep, runSweep } from '@panta/engine';
import { redisPerFile } from '../../packages/cluster/test/roles.js';
import { type PantaProcess, RHEON6, corpusDiff, pantaProcess, tempDir, writeSpec } from '../helpers.js';
import { adversarialSpec, expectNoUsableTags, expectSoundCorpus, expectUnanimous } from './expect-corpus.js';
import { startAdversarialServer, type AdversarialServer } from './server.js';

// The same sweeps as sweeps.test.ts through the cluster's transport (scheduler, worker and collector as real
// `panta` processes on a real redis-server): complete, verified, and row for row the embedded corpus.

const dir = tempDir('panta-adversarial-cluster-');
const redis = redisPerFile(dir);
const MODES = ['never-matching', 'identical', 'mixed'] as const;
type Mode = (typeof MODES)[number];
type Exited = Awaited<PantaProcess['exited']>;

interface Distributed {
  spec: string;
  out: string;
  scheduled: Exited;
  collected: Exited;
}

/**
 * The three sweeps run at once, before the tests, on one Redis and one worker (a worker serves whatever sweep
 * a job names): each sweep's scheduler, and its collector told which sweep is its own. A role mostly waits (on
 * Redis, on its peers, on the model server), so the sweeps overlap. What a sweep did fails only the test that
 * reads it; each test sweeps the same spec embedded.
 */
const servers: AdversarialServer[] = [];
const runs = new Map<Mode, Promise<Distributed>>();
/** Every role started, killed after the last test (a hook that timed out leaves none behind). */
const roles: PantaProcess[] = [];
let worker: Promise<Exited>;
beforeAll(async () => {
  const env = { PANTA_REDIS_URL: redis.url };
  const spawn = (args: string[]) => {
    const p = pantaProcess(args, env);
    roles.push(p);
    return p;
  };
  const shared = spawn(['worker', '--concurrency', '16']);
  for (const mode of MODES) {
    const server = await startAdversarialServer({ mode });
    servers.push(server);
    const spec = writeSpec(dir, adversarialSpec(`cluster-${mode}`, RHEON6, server.url), `${mode}.yaml`);
    const out = join(dir, mode);
    const loaded = loadSweep(spec, { out });
    const collector = spawn(['collector', '--out', out, '--durable-ms', '100', '--sweep', sweepIdOf(loaded.spec.name, loaded.fingerprint)]);
    const scheduler = spawn(['scheduler', spec]);
    runs.set(
      mode,
      Promise.all([scheduler.exited, collector.exited]).then(([scheduled, collected]) => ({ spec, out, scheduled, collected })),
    );
  }
  await Promise.allSettled(runs.values());
  shared.kill('SIGTERM');
  worker = shared.exited;
  await worker;
}, 400_000);
afterAll(async () => {
  for (const p of roles) p.kill('SIGKILL');
  for (const s of servers) await s.close();
});

/** The mode's sweep through the cluster (every role exited 0, the scheduler logged no error), and embedded. */
async function distributed(mode: Mode): Promise<{ out: string; embedded: string }> {
  const { spec, out, scheduled, collected } = await runs.get(mode)!;
  expect(scheduled.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
  expect(scheduled.code).toBe(0);
  expect(collected.code).toBe(0);
  expect((await worker).code).toBe(0);
  const embedded = join(dir, `${mode}-embedded`);
  expect((await runSweep(spec, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
  return { out, embedded };
}

async function expectSameCorpus(out: string, embedded: string): Promise<void> {
  expect(await corpusDiff(out, embedded)).toEqual({ extra: 0, missing: 0 });
  const order = (d: string) => queryRows(`SELECT * FROM read_parquet('${d}/order_params.parquet') ORDER BY ALL`);
  expect(await order(out)).toEqual(await order(embedded));
}

describe('distributed sweeps against an adversarial server', () => {
  it('never-matching: complete, verified, rho null, the embedded corpus', async () => {
    const { out, embedded } = await distributed('never-matching');
    expectNoUsableTags((await expectSoundCorpus(out)).order);
    await expectSameCorpus(out, embedded);
  });

  it('identical: m = q = 1, the embedded corpus', async () => {
    const { out, embedded } = await distributed('identical');
    expectUnanimous((await expectSoundCorpus(out)).order);
    await expectSameCorpus(out, embedded);
  });

  it('mixed: empty replies recorded through the result codec, control characters read through Redis as embedded', async () => {
    const { out, embedded } = await distributed('mixed');
    const { answers } = await expectSoundCorpus(out);
    expect(answers.some((a) => a.reply_status === 'empty' && a.response === '')).toBe(true);
    expect(answers.some((a) => a.response.includes('\u001b['))).toBe(true);
    await expectSameCorpus(out, embedded);
  });
});
