import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseText, parseDataset } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { runSweep } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);

const spec = (judge: string) => `name: judged
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.5, 1.5]
sweeps: 3
seed: 8
judge: ${judge}
`;

describe('LLM judge in a sweep', () => {
  it('tags every event through the model, judges each distinct answer once, and a resumed sweep pays nothing again', async () => {
    const server = await startSurrogateServer({ prompts, faults: { rate: 0.1, kinds: ['500', 'malformed'], seed: 2 } });
    try {
      const dir = tempDir();
      const llmJudge = `{kind: llm, backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_retries: 10}}`;
      const judged = join(dir, 'judged');
      const a = await runSweep(writeSpec(dir, spec(llmJudge), 'llm.yaml'), { out: judged });
      await runSweep(writeSpec(dir, spec('{kind: reference}'), 'ref.yaml'), { out: join(dir, 'reference') });
      expect(a.status).toBe('complete');
      const rows = (out: string) =>
        queryRows(
          `SELECT run_id, event, prompt_id, response, tag, judge_model FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`,
        );
      const [ra, rb] = [await rows(judged), await rows(join(dir, 'reference'))];
      // The surrogate judge grades as the reference judge does: the model's verdicts must match tag for tag.
      expect(ra.map((r) => r.tag)).toEqual(rb.map((r) => r.tag));
      expect(ra[0].judge_model).toBe('openai:surrogate-potts-v1');
      expect(rb[0].judge_model).toBe('reference');
      const distinct = new Set(ra.map((r) => `${r.prompt_id}\u0000${normaliseText(String(r.response))}`)).size;
      expect(server.stats().completed).toBe(distinct);
      const manifest = JSON.parse(readFileSync(join(judged, 'manifest.json'), 'utf8')) as { judge: { kind: string; model: string } };
      expect(manifest.judge).toEqual({ kind: 'llm', model: 'openai:surrogate-potts-v1' });

      // Lose a finished run and run the sweep again: its answers were judged before, so no judge call is made.
      rmSync(join(judged, 'events', 'fq117-ring-n16-T0.5-glauber-t0.parquet'));
      const before = server.stats().completed;
      const again = await runSweep(writeSpec(dir, spec(llmJudge), 'llm.yaml'), { out: judged });
      expect(again.status).toBe('complete');
      expect(server.stats().completed).toBe(before);
      expect(await rows(judged)).toEqual(ra);
    } finally {
      await server.close();
    }
  });
});
