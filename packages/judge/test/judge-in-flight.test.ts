import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDataset, resolveJudgeInFlight, sweepSpecSchema, type JudgeSpec } from '@panta/core';
import { loadSweep } from '@panta/engine';
import { startSurrogateServer } from '@panta/llm';
import { createJudge } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const fq367 = prompts.find((p) => p.id === 'fq367')!;

const sweep = (concurrency: number | undefined, judgeBackend: object) => {
  const spec = sweepSpecSchema.parse({
    name: 'judged',
    dataset: RHEON6,
    geometries: ['ring'],
    sizes: [8],
    temperatures: [1],
    ...(concurrency === undefined ? {} : { concurrency }),
    judge: { kind: 'llm', backend: { kind: 'openai', model: 'grader', ...judgeBackend } },
  });
  resolveJudgeInFlight(spec);
  return spec;
};
const inFlight = (judge: JudgeSpec) => (judge.kind === 'llm' && judge.backend.kind === 'openai' ? judge.backend.max_in_flight : undefined);

describe("the judge's concurrency", () => {
  it("follows the sweep's concurrency per endpoint unless the spec sets it, never below 64", () => {
    const url = 'http://127.0.0.1:9/v1';
    expect(inFlight(sweep(256, { base_url: url }).judge)).toBe(256);
    expect(inFlight(sweep(256, { base_url: [url, 'http://127.0.0.1:10/v1'] }).judge)).toBe(256);
    expect(inFlight(sweep(16, { base_url: url }).judge)).toBe(64);
    expect(inFlight(sweep(undefined, { base_url: url }).judge)).toBe(64);
    expect(inFlight(sweep(256, { base_url: url, max_in_flight: 8 }).judge)).toBe(8);
    expect(inFlight(sweep(16, { base_url: url, max_in_flight: 100 }).judge)).toBe(100);
    // the agents' backend keeps its own default
    expect(sweep(256, { base_url: url }).backend).toMatchObject({ kind: 'surrogate' });
    // a resolved spec parses again to itself (manifests hold it)
    const resolved = sweep(256, { base_url: url });
    expect(sweepSpecSchema.parse(resolved)).toEqual(resolved);
    expect(() => sweep(256, { base_url: url, max_in_flight: 0 })).toThrow();
  });

  it('follows the concurrency the sweep runs at: a --concurrency override included', () => {
    const judge = (max = '') => `{kind: llm, backend: {kind: openai, base_url: "http://127.0.0.1:9/v1", model: grader${max}}}`;
    const file = (max?: string) =>
      writeSpec(
        tempDir(),
        `name: j\ndataset: ${RHEON6}\ngeometries: [ring]\nsizes: [8]\ntemperatures: [1]\nconcurrency: 32\njudge: ${judge(max)}\n`,
      );
    expect(inFlight(loadSweep(file()).spec.judge)).toBe(64);
    expect(inFlight(loadSweep(file(), { concurrency: 512 }).spec.judge)).toBe(512);
    expect(inFlight(loadSweep(file(', max_in_flight: 16'), { concurrency: 512 }).spec.judge)).toBe(16);
  });

  it('keeps that many verdicts in flight against a slow judge, not 64', async () => {
    // long enough for every connection to open before the first verdict comes back, on a loaded machine too
    const server = await startSurrogateServer({ prompts, latencyMs: 1000 });
    try {
      // most open at once is the server's high-water mark: the smaller case first
      for (const [concurrency, expected] of [
        [16, 64],
        [256, 256],
      ]) {
        const spec = sweep(concurrency, { base_url: `${server.url}/v1`, model: 'surrogate-potts-v1' });
        const judge = createJudge(spec.judge, 'spec.yaml', prompts);
        const before = server.stats().completed;
        // distinct answers (the digits of a year would change a verdict; letters do not)
        const letters = (i: number) => [...i.toString(20)].map((d) => 'bcdfghjklmnpqrstvwxz'[parseInt(d, 20)]).join('');
        const tags = await Promise.all(
          Array.from({ length: expected + 20 }, (_, i) => judge.judge(fq367, `She was 96, note ${letters(i)}.`)),
        );
        await judge.close();
        expect(new Set(tags)).toEqual(new Set(['correct']));
        expect(server.stats().completed - before).toBe(expected + 20);
        expect(server.stats().maxConcurrent).toBe(expected);
      }
    } finally {
      await server.close();
    }
  });

  it('takes 64 for a judge spec parsed outside a sweep', async () => {
    const server = await startSurrogateServer({ prompts, latencyMs: 200 });
    try {
      const spec = sweepSpecSchema.shape.judge.parse({
        kind: 'llm',
        backend: { kind: 'openai', base_url: `${server.url}/v1`, model: 'surrogate-potts-v1' },
      });
      expect(inFlight(spec)).toBe(0);
      const judge = createJudge(spec, 'spec.yaml', prompts);
      await Promise.all(Array.from({ length: 100 }, (_, i) => judge.judge(fq367, `96 ${'x'.repeat(i)}`)));
      await judge.close();
      expect(server.stats().maxConcurrent).toBe(64);
    } finally {
      await server.close();
    }
  });
});
