import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { redisPerFile } from '../../packages/cluster/test/roles.js';
import { RHEON6, corpusDiff, tempDir, writeSpec } from '../helpers.js';
import { adversarialSpec, expectNoUsableTags, expectSoundCorpus, expectUnanimous } from './expect-corpus.js';
import { startAdversarialServer, type AdversarialMode } from './server.js';

// The same sweeps as sweeps.test.ts through the cluster's transport (scheduler, worker and collector as real
// `panta` processes on a real redis-server): complete, verified, and row for row the embedded corpus.

const dir = tempDir('panta-adversarial-cluster-');
const { roles } = redisPerFile(dir);

async function distributed(mode: AdversarialMode): Promise<{ out: string; embedded: string }> {
  const server = await startAdversarialServer({ mode });
  try {
    const spec = writeSpec(dir, adversarialSpec(`cluster-${mode}`, RHEON6, server.url), `${mode}.yaml`);
    const out = join(dir, mode);
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '100']);
    const worker = roles.spawn(['worker', '--concurrency', '8']);
    const scheduler = roles.spawn(['scheduler', spec]);
    const scheduled = await scheduler.exited;
    expect(scheduled.stderr.split('\n').filter((l) => l.includes('"level":50'))).toEqual([]);
    expect(scheduled.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    const embedded = join(dir, `${mode}-embedded`);
    expect((await runSweep(spec, { out: embedded, logLevel: 'silent' })).status).toBe('complete');
    return { out, embedded };
  } finally {
    await server.close();
  }
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
