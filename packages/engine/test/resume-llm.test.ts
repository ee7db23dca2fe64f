import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { queryRows, shardProgress, verifyCorpus } from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { loadSweep, runSweep } from '../src/index.js';
import { RHEON6, pantaAsync as panta, sweepKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);

describe('resume against an LLM endpoint', () => {
  it('a sweep killed mid-run resumes to the same corpus and pays no second call for an event already written', async () => {
    const server = await startSurrogateServer({ prompts, latencyMs: 2 });
    try {
      const dir = tempDir();
      const spec = writeSpec(
        dir,
        `name: resume-llm
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [64]
temperatures: [0.4, 1.2]
sweeps: 3
seed: 5
concurrency: 16
backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 16}
`,
      );
      const out = join(dir, 'out');
      const sweep = loadSweep(spec, { out });
      const written = async () => {
        let n = 0;
        for (const r of sweep.runs) {
          const p = await shardProgress(out, r.runId);
          n += p.finalized ? (r.sweeps + 1) * r.n : p.nextEvent;
        }
        return n;
      };
      const total = sweep.runs.reduce((s, r) => s + (r.sweeps + 1) * r.n, 0);
      await sweepKilledWhen(spec, out, 50, () => server.stats().completed >= total / 3);
      while (server.stats().open > 0) await new Promise((r) => setTimeout(r, 10));
      const done = await written();
      expect(done).toBeGreaterThan(0);
      expect(done).toBeLessThan(total);
      const before = server.stats().completed;
      const resumed = await panta(['run', spec, '--out', out]);
      expect(resumed.code).toBe(0);
      // exactly one call per event not yet durably written: none for the written ones
      expect(server.stats().completed - before).toBe(total - done);
      expect((await verifyCorpus(out)).problems).toEqual([]);

      const straight = join(dir, 'straight');
      expect((await runSweep(spec, { out: straight, logLevel: 'silent' })).status).toBe('complete');
      const rows = (o: string) =>
        queryRows(`SELECT * EXCLUDE (latency_ms, created_at) FROM read_parquet('${o}/events/*.parquet') ORDER BY run_id, event`);
      expect(await rows(out)).toEqual(await rows(straight));
    } finally {
      await server.close();
    }
  });
});
