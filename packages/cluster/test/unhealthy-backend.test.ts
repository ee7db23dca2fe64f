import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '@panta/corpus';
import { startFaultProxy, type FaultProxy } from '../../../test/fault-proxy.js';
import { RHEON6, pantaProcess, tempDir, writeSpec, type PantaProcess } from '../../../test/helpers.js';
import { freePort } from '../../../test/redis-server.js';
import { expectVerified, logged, redisPerFile } from './roles.js';

/**
 * The distributed roles against a model server that cannot produce answers (200 with an HTML page, or 401):
 * the worker's backend trips its health breaker and reports it; the scheduler stops the sweep with the same
 * one line (exit 1) within 30 s; once the server is fixed (it then serves the surrogate), a rerun of the
 * scheduler resumes to the full corpus, which verifies.
 */
type Mode = 'html' | '401' | 'good';

let proxy: FaultProxy;
let surrogate: PantaProcess;
let url: string;
let mode: Mode = 'good';
const dir = tempDir('panta-unhealthy-');
const { roles } = redisPerFile(dir);

beforeAll(async () => {
  const port = await freePort();
  surrogate = pantaProcess(['serve-surrogate', '--port', String(port), '--dataset', RHEON6]);
  proxy = await startFaultProxy(`http://127.0.0.1:${port}`, () => {
    if (mode === 'html')
      return { status: 200, body: '<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>', type: 'text/html' };
    if (mode === '401') return { status: 401, body: '{"error":{"message":"Invalid API key"}}' };
    return undefined;
  });
  url = `${proxy.url}/v1`;
});
afterAll(async () => {
  surrogate.kill('SIGKILL');
  await proxy.close();
});

describe('distributed: a model server that cannot produce answers', () => {
  it.each([
    ['html', /gave no usable reply \(latest: not JSON: "<!DOCTYPE html><html><body><h1>Welcome to nginx!<\/h1>/],
    ['401', /HTTP 401: .*Invalid API key.*: the endpoint refuses the key; fix: check backend\.api_key_env/],
  ] as const)(
    '%s: the scheduler stops the sweep with one line naming the cause, and a rerun once fixed resumes',
    {
      timeout: 120_000,
    },
    async (kind, cause) => {
      const spec = writeSpec(
        dir,
        `name: unhealthy-${kind}\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.3, 0.9]\nsweeps: 1\nseed: 3\nencoders: [{name: h, kind: hashing, dim: 8}]\nconcurrency: 4\nbackend: {kind: openai, base_url: "${url}", model: surrogate-potts-v1, max_in_flight: 4, timeout_ms: 2000, max_retries: 2}\n`,
        `${kind}.yaml`,
      );
      const out = join(dir, kind);
      mode = kind;
      const worker = roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
      const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
      const started = Date.now();
      const first = await roles.spawn(['scheduler', spec, '--watch-ms', '3000']).exited;
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(first.code, first.stderr).toBe(1);
      const lines = first.stderr.split('\n').filter((l) => l.startsWith('panta: '));
      expect(lines, first.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`panta: openai ${url}: `);
      expect(lines[0]).toMatch(cause);
      await logged(worker, 'model endpoint unhealthy: the scheduler stops the sweep');
      // The collector stops with the same line.
      const stoppedCollector = await collector.exited;
      expect(stoppedCollector.code).toBe(1);
      expect(stoppedCollector.stderr).toContain(lines[0]);

      mode = 'good';
      const collector2 = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
      const second = await roles.spawn(['scheduler', spec, '--watch-ms', '3000']).exited;
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/^complete: sweep unhealthy-\w+-[0-9a-f]{12}, 16 events scheduled and written$/m);
      const collected = await collector2.exited;
      expect(collected.code, collected.stderr).toBe(0);
      worker.kill('SIGTERM');
      await worker.exited;
      await expectVerified(out);
      // No "" answer of the bad server was committed: a backend that never answered records no unusable reply.
      const [row] = await queryRows(
        `SELECT count(*) AS events, count(*) FILTER (WHERE reply_status <> 'ok' OR response = '') AS unusable FROM read_parquet('${out}/events/*.parquet')`,
      );
      expect(row).toEqual({ events: 16, unusable: 0 });
    },
  );

  it('an LLM judge answering HTML: the collector stops, the scheduler stops with the same line, and a rerun once fixed completes', {
    timeout: 120_000,
  }, async () => {
    const spec = writeSpec(
      dir,
      `name: unhealthy-judge\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring]\nsizes: [4]\ntemperatures: [0.3, 0.9]\nsweeps: 1\nseed: 3\nencoders: [{name: h, kind: hashing, dim: 8}]\nconcurrency: 4\njudge: {kind: llm, backend: {kind: openai, base_url: "${url}", model: surrogate-potts-v1, timeout_ms: 2000, max_retries: 2}}\n`,
      'judge.yaml',
    );
    const out = join(dir, 'judge');
    // Its probe of the judge's /v1/models gets 200 (an HTML page): up, as far as waiting for it goes.
    mode = 'html';
    const worker = roles.spawn(['worker', '--concurrency', '4', '--lock-ms', '1500']);
    const collector = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const first = await roles.spawn(['scheduler', spec, '--watch-ms', '3000']).exited;
    expect(first.code, first.stderr).toBe(1);
    const lines = first.stderr.split('\n').filter((l) => l.startsWith('panta: '));
    expect(lines, first.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^panta: openai ${url.replace(/[.]/g, '\\.')}: .*gave no usable reply \\(latest: not JSON: "<!DOCTYPE html>`),
    );
    const collected = await collector.exited;
    expect(collected.code).toBe(1);

    mode = 'good';
    const collector2 = roles.spawn(['collector', '--out', out, '--durable-ms', '300']);
    const second = await roles.spawn(['scheduler', spec, '--watch-ms', '3000']).exited;
    expect(second.code, second.stderr).toBe(0);
    expect((await collector2.exited).code).toBe(0);
    worker.kill('SIGTERM');
    await worker.exited;
    await expectVerified(out);
    const [row] = await queryRows(
      `SELECT count(*) AS events, count(*) FILTER (WHERE tag = 'judge_failure') AS failures FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ events: 16, failures: 0 });
  });
});
