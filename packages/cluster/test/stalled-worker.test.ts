import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { errorLines, expectVerified, logged, redisPerFile } from './roles.js';

const dir = tempDir('panta-stalled-');
const { roles } = redisPerFile(dir);

// Calls of 6 s in the worker's own (surrogate) backend; the worker's BullMQ lock is 1 s, renewed every 0.5 s.
const spec = `name: stalled\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.3]\nsweeps: 1\nseed: 3\nbackend: {kind: surrogate, latency_ms: 6000}\n`;

describe('a worker stopped longer than its job lock', () => {
  it('says, when it runs again, that it lost the lock and how long since it last renewed it; the corpus is exactly the sweep', {
    timeout: 240_000,
  }, async () => {
    const specFile = writeSpec(dir, spec, 'stalled.yaml');
    const out = join(dir, 'out');
    const worker = roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1000']);
    await logged(worker, 'worker started');
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '1000']);
    await logged(worker, 'sweep loaded');
    // Its first calls are under way (6 s each): the process is stopped for 3 s, three times its lock, as a
    // starved or paused process is; its locks lapse in Redis meanwhile.
    await sleep(1500);
    worker.kill('SIGSTOP');
    await sleep(3000);
    worker.kill('SIGCONT');
    await logged(worker, 'lost the lock of jobs');
    const line = worker
      .stderr()
      .split('\n')
      .find((l) => l.includes('lost the lock of jobs'));
    const lost = JSON.parse(line!) as { jobs: string[]; sinceLastRenewalMs: number; lockMs: number };
    expect(lost.lockMs).toBe(1000);
    expect(lost.jobs.length).toBeGreaterThan(0);
    expect(lost.sinceLastRenewalMs).toBeGreaterThanOrEqual(2500);

    const scheduled = await scheduler.exited;
    expect(errorLines(scheduled.stderr)).toEqual([]);
    expect(scheduled.code).toBe(0);
    expect((await collector.exited).code).toBe(0);
    await expectVerified(out);
    worker.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });
});
