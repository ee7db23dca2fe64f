import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EndpointUnavailableError, waitForEndpoints, type EndpointWait } from '@panta/llm';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import { freePort } from '../../../test/redis-server.js';
import { redisPerFile, errorLines, expectVerified, logged } from './roles.js';

const dir = tempDir('panta-late-');
// Emptied after each test: a sweep a failed test left in Redis would be served to the next test's workers.
const { roles } = redisPerFile(dir);

describe('roles that call a model wait for its endpoint', () => {
  it('a model server that starts only once the workers wait for it, and a judge once the collector waits for it: the sweep completes with no failed run, and the waits are logged', {
    timeout: 180_000,
  }, async () => {
    const [port, judgePort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${port}/v1`;
    const judgeUrl = `http://127.0.0.1:${judgePort}/v1`;
    // No retries: a call made before a server is up fails its event (and its run), or the judging of a row.
    const backend = (at: string) => `{kind: openai, base_url: "${at}", model: surrogate-potts-v1, max_retries: 0, timeout_ms: 5000}`;
    const specFile = writeSpec(
      dir,
      `name: late\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.3, 1.0]\nsweeps: 3\nseed: 9\nconcurrency: 8\nbackend: ${backend(url)}\njudge: {kind: llm, backend: ${backend(judgeUrl)}}\n`,
      'late.yaml',
    );
    const out = join(dir, 'late');
    const workers = [0, 1].map(() => roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']));
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
    // The collector answers the scheduler only once its judge answers: no event runs before then. Each server
    // starts once the roles that call it have said they wait for it (their first probes refused): a call made
    // before it is up would fail (no retries), whenever it comes up after.
    await logged(collector, "waiting for the judge's model endpoint to answer before collecting");
    const judge = roles.spawn(['serve-surrogate', '--port', String(judgePort), '--dataset', RHEON6]);
    for (const w of workers) await logged(w, 'waiting for the model endpoint to answer before running events');
    const model = roles.spawn(['serve-surrogate', '--port', String(port), '--dataset', RHEON6]);

    const scheduled = await scheduler.exited;
    expect(errorLines(scheduled.stderr)).toEqual([]);
    expect(scheduled.stdout).toMatch(/^complete: sweep late-[0-9a-f]{12}, 128 events scheduled and written$/m);
    expect(scheduled.code).toBe(0);
    const collected = await collector.exited;
    expect(collected.stdout).toMatch(/^complete: 2\/2 runs, 128 events; corpus: /m);
    expect(collected.code).toBe(0);
    for (const w of workers) w.kill('SIGTERM');
    for (const w of workers) {
      const done = await w.exited;
      expect(done.code).toBe(0);
      expect(done.stderr).toMatch(/panta worker: \d+ events committed, \d+ duplicates skipped, 0 failed/);
      expect(done.stderr).not.toContain('event failed');
      // A line when it starts waiting and every 10 s after, naming what it waits for and where.
      const waits = done.stderr.split('\n').filter((l) => l.includes('waiting for the model endpoint'));
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(waits[0]!)).toMatchObject({ endpoint: url, limit_s: 600, last: 'ECONNREFUSED' });
    }
    const judgeWaits = collected.stderr.split('\n').filter((l) => l.includes("waiting for the judge's model endpoint"));
    expect(JSON.parse(judgeWaits[0]!)).toMatchObject({ endpoint: judgeUrl, limit_s: 600, last: 'ECONNREFUSED' });
    for (const server of [model, judge]) {
      server.kill('SIGTERM');
      await server.exited;
    }
    await expectVerified(out);
  });

  it('a worker whose model never answers exits 1 past --wait-endpoint with one line naming it, and fails no event', async () => {
    const port = await freePort();
    const specFile = writeSpec(
      dir,
      `name: dead\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nsweeps: 1\nseed: 9\nbackend: {kind: openai, base_url: "http://127.0.0.1:${port}/v1", model: m, max_retries: 0}\n`,
      'dead.yaml',
    );
    roles.spawn(['collector', '--out', join(dir, 'dead'), '--durable-ms', '300']);
    const scheduler = roles.spawn(['scheduler', specFile, '--watch-ms', '3000']);
    const worker = roles.spawn(['worker', '--concurrency', '2', '--wait-endpoint', '2']);
    const done = await worker.exited;
    expect(done.code).toBe(1);
    expect(done.stderr.split('\n').filter((l) => l.startsWith('panta: '))).toEqual([
      `panta: the model endpoint http://127.0.0.1:${port}/v1 did not answer within 2 s (last: ECONNREFUSED); fix: start the model server there (or check that this host reaches it), give --base-url, or raise --wait-endpoint`,
    ]);
    expect(done.stderr).not.toContain('event failed');
    expect(scheduler.stderr()).not.toContain('run failed');
  });

  it('gives up past its bound with one line naming the endpoint, credentials redacted', async () => {
    const port = await freePort();
    const waits: EndpointWait[] = [];
    const root = `http://127.0.0.1:${port}/v1?api_key=hunter2-very-secret`;
    // A stepped clock, 250 ms a reading: probes 1 to 5 see 250..1250 ms waited (a wait logged at 250, 750 and
    // 1250), the sixth 1500 and gives up, however long the probes really take on a loaded machine.
    let clock = 0;
    const error = await waitForEndpoints([{ root, apiKey: 'EMPTY' }], {
      timeoutMs: 1500,
      pollMs: 20,
      logEveryMs: 500,
      onWait: (w) => waits.push(w),
      now: () => (clock += 250),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointUnavailableError);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^the model endpoint http:\/\/127\.0\.0\.1:\d+\/v1\?api_key=\[redacted\] did not answer within 2 s \(last: ECONNREFUSED\); fix: /,
    );
    expect(message).not.toContain('hunter2');
    expect(waits.map((w) => w.waitedS)).toEqual([0, 1, 1]);
    expect(waits.every((w) => !w.endpoint.includes('hunter2') && w.limitS === 2)).toBe(true);
  });

  it('stops waiting at once when its role is stopped', async () => {
    const port = await freePort();
    const stop = new AbortController();
    const waiting = waitForEndpoints([{ root: `http://127.0.0.1:${port}/v1`, apiKey: 'EMPTY' }], {
      timeoutMs: 600_000,
      signal: stop.signal,
    });
    setTimeout(() => stop.abort(), 300);
    await expect(waiting).resolves.toBeUndefined();
  });
});
