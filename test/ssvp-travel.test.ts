import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { runSweep } from '@panta/engine';
import { startSurrogateServer } from '@panta/llm';
import { ROOT, servedColumns, tempDir, writeSpec } from './helpers.js';
import { travelExample } from './travel-example.js';

describe('examples/ssvp-travel.yaml (Hallucination as Context Drift, section 4)', () => {
  it('scripts/build-travel.mjs writes the committed datasets/travel8.jsonl, which check-datasets accepts', () => {
    const out = join(tempDir(), 'travel8.jsonl');
    const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-travel.mjs'), out], { encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(ROOT, 'datasets', 'travel8.jsonl'), 'utf8'));
    const prompts = parseDataset(readFileSync(out, 'utf8'), out);
    expect(prompts.map((p) => p.id)).toEqual([
      'travel-barcelona',
      'travel-tokyo',
      'travel-paris',
      'travel-new-york',
      'travel-rome',
      'travel-amsterdam',
      'travel-prague',
      'travel-sydney',
    ]);
    for (const p of prompts) {
      expect(Object.keys(p.briefings ?? {}).sort()).toEqual(['advisor', 'booking', 'planner']);
      expect(p.assertions?.map((a) => a.name)).toEqual(['airport', 'weather', 'schedule']);
    }
  });

  it('serve-surrogate answers the travel roles (summaries, merges, briefings, broadcasts) as the in-process surrogate does', async () => {
    const dir = tempDir();
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'travel8.jsonl'), 'utf8'), 'travel8.jsonl').slice(0, 2);
    const server = await startSurrogateServer({ prompts });
    try {
      const small = { 'trials: 30': 'trials: 1\ntrial_prompts: every\nprompts: [travel-barcelona, travel-tokyo]' };
      const served = travelExample({
        ...small,
        'backend: {kind: surrogate}': `backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 16}`,
      });
      expect((await runSweep(writeSpec(dir, served, 'served.yaml'), { out: join(dir, 'served'), logLevel: 'silent' })).status).toBe(
        'complete',
      );
      expect(
        (await runSweep(writeSpec(dir, travelExample(small), 'local.yaml'), { out: join(dir, 'local'), logLevel: 'silent' })).status,
      ).toBe('complete');
      const [x, y] = [await servedColumns(join(dir, 'served')), await servedColumns(join(dir, 'local'))];
      expect(x.filter((r) => r.role === 'merge').length).toBeGreaterThan(0);
      expect(x).toEqual(y);
    } finally {
      await server.close();
    }
  }, 240_000);
});
