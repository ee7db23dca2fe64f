import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { EndpointUnhealthyError, startSurrogateServer, type SurrogateServer } from '@panta/llm';
import { runSweep } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
let clean: SurrogateServer;
let faulty: SurrogateServer;

beforeAll(async () => {
  clean = await startSurrogateServer({ prompts });
  faulty = await startSurrogateServer({ prompts, faults: { rate: 0.2, seed: 5 } });
});
afterAll(async () => {
  await clean.close();
  await faulty.close();
});

const spec = (backend: string) => `name: faults
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, {kind: meanfield, sample: 4}]
sizes: [16]
temperatures: [0.3, 0.9]
sweeps: 3
seed: 21
concurrency: 32
backend: ${backend}
`;

const rows = (out: string) =>
  queryRows(`SELECT * EXCLUDE (latency_ms, created_at) FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`);

describe.each(['openai', 'anthropic'])('%s backend against serve-surrogate with 20%% faults of every kind', (kind) => {
  it('completes, writes the corpus of the fault-free sweep, and never exceeds max_in_flight', async () => {
    const dir = tempDir();
    const backend = (url: string) =>
      `{kind: ${kind}, base_url: "${kind === 'openai' ? `${url}/v1` : url}", model: surrogate-potts-v1, max_in_flight: 6, timeout_ms: 2000, max_retries: 12, price: {prompt_per_mtok: 0.5, completion_per_mtok: 2}}`;
    const a = await runSweep(writeSpec(dir, spec(backend(clean.url)), 'clean.yaml'), { out: join(dir, 'clean') });
    const before = faulty.stats();
    const b = await runSweep(writeSpec(dir, spec(backend(faulty.url)), 'faulty.yaml'), { out: join(dir, 'faulty') });
    expect(a.status).toBe('complete');
    expect(b.status).toBe('complete');
    const stats = faulty.stats();
    const injected = Object.values(stats.faults).reduce((s, n) => s + n, 0) - Object.values(before.faults).reduce((s, n) => s + n, 0);
    expect(injected).toBeGreaterThan(40);
    for (const k of ['429', '500', '503', 'timeout', 'reset', 'malformed', 'empty'] as const) expect(stats.faults[k], k).toBeGreaterThan(0);
    expect(stats.maxConcurrent).toBeLessThanOrEqual(6);
    const [ra, rb] = [await rows(join(dir, 'clean')), await rows(join(dir, 'faulty'))];
    expect(ra.length).toBe(2 * 2 * 2 * 16 * 4);
    expect(rb).toEqual(ra);
    expect(ra[0].backend).toBe(kind);
    const [runs] = await queryRows(
      `SELECT sum(calls) AS calls, sum(retries) AS retries, sum(events) AS events, sum(prompt_tokens) AS p, sum(completion_tokens) AS c, sum(cost) AS cost FROM '${dir}/faulty/runs.parquet'`,
    );
    expect(Number(runs!.retries)).toBeGreaterThan(40);
    expect(Number(runs!.calls)).toBe(Number(runs!.events) + Number(runs!.retries));
    expect(Number(runs!.cost)).toBeCloseTo((Number(runs!.p) * 0.5 + Number(runs!.c) * 2) / 1e6, 12);
    const manifest = JSON.parse(readFileSync(join(dir, 'faulty', 'manifest.json'), 'utf8')) as {
      usage: { calls: number; retries: number; cost: number };
    };
    expect(manifest.usage.calls).toBe(Number(runs!.calls));
    expect(manifest.usage.cost).toBeCloseTo(Number(runs!.cost), 12);
  });
});

describe('an event that exhausts its retries', () => {
  it('fails its run loudly, and the next run of the sweep resumes it against a healthy endpoint', async () => {
    const dead = await startSurrogateServer({ prompts, faults: { rate: 1, kinds: ['500'], seed: 1 } });
    try {
      const dir = tempDir();
      const out = join(dir, 'out');
      // max_unusable_share 1: the health breaker never trips, so each event fails on its own.
      const backend = (url: string) =>
        `{kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: 4, timeout_ms: 2000, max_retries: 1, max_unusable_share: 1}`;
      const failed = await runSweep(writeSpec(dir, spec(backend(dead.url)), 'dead.yaml'), { out });
      expect(failed.status).toBe('failed');
      expect(failed.failed).toHaveLength(8);
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { status: string; runs: { failed: string[] } };
      expect(manifest.status).toBe('failed');
      expect(manifest.runs.failed).toHaveLength(8);
      const runs = await queryRows(`SELECT status, count(*) AS n FROM '${out}/runs.parquet' GROUP BY status`);
      expect(runs).toEqual([{ status: 'failed', n: 8 }]);
      const log = readFileSync(join(out, 'log.jsonl'), 'utf8');
      expect(log).toMatch(/"msg":"run failed"/);
      const resumed = await runSweep(writeSpec(dir, spec(backend(clean.url)), 'healthy.yaml'), { out });
      expect(resumed.status).toBe('complete');
      expect(resumed.runsComplete).toBe(8);
    } finally {
      await dead.close();
    }
  });
});

describe('an endpoint that only fails', () => {
  it('stops the sweep with one line naming it and the status, and the sweep resumes once the endpoint is fixed', async () => {
    const dead = await startSurrogateServer({ prompts, faults: { rate: 1, kinds: ['500'], seed: 1 } });
    try {
      const dir = tempDir();
      const out = join(dir, 'out');
      const backend = (url: string) =>
        `{kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: 4, timeout_ms: 2000, max_retries: 1}`;
      const err = await runSweep(writeSpec(dir, spec(backend(dead.url)), 'dead.yaml'), { out }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EndpointUnhealthyError);
      const line = (err as Error).message;
      expect(line).not.toContain('\n');
      expect(line).toMatch(
        new RegExp(`^openai ${dead.url.replace(/[.]/g, '\\.')}/v1: \\d+ of its last \\d+ attempts failed \\(latest: HTTP 500: `),
      );
      // It stopped near the minimum count, not after every event's retries (128 events x 2 attempts).
      expect(dead.stats().requests).toBeLessThan(60);
      const log = readFileSync(join(out, 'log.jsonl'), 'utf8');
      expect(log).toMatch(/"msg":"backend unhealthy: stopping the sweep"/);
      const resumed = await runSweep(writeSpec(dir, spec(backend(clean.url)), 'healthy.yaml'), { out });
      expect(resumed.status).toBe('complete');
      expect(resumed.runsComplete).toBe(8);
    } finally {
      await dead.close();
    }
  });
});
