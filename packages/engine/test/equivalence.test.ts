import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildGraph, parseDataset, surrogateBackendSchema } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { SurrogateAgent } from '@panta/llm';
import { readFileSync } from 'node:fs';
import { runSweep } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const SPEC = `
name: equivalence
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d, {kind: meanfield, sample: 5}, small-world-placeholder]
sizes: [16, 36]
temperatures: [0.3, 1.0]
trials: 1
sweeps: 4
seed: 99
`.replace('small-world-placeholder', '{kind: small-world, k: 4, beta: 0.2}');

const COLUMNS_BUT_TIMINGS =
  'run_id, config_id, trial, prompt_id, geometry, n, k, temperature, protocol, seed, event, sweep, agent, neighbours, read_versions, response, finish_reason, prompt_tokens, completion_tokens, backend, model, tag, judge_model, emb_hashing';

describe('exact asynchronous semantics', () => {
  it('concurrency 1 and 256 write identical shards, equal to the strictly sequential process', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const a = await runSweep(spec, { out: join(dir, 'c1'), concurrency: 1, partRows: 37 });
    const b = await runSweep(spec, { out: join(dir, 'c256'), concurrency: 256, partRows: 64 });
    expect(a.status).toBe('complete');
    expect(b.status).toBe('complete');
    const rows = (out: string) =>
      queryRows(`SELECT ${COLUMNS_BUT_TIMINGS} FROM read_parquet('${out}/events/*.parquet', union_by_name = false) ORDER BY run_id, event`);
    const r1 = await rows(join(dir, 'c1'));
    const r256 = await rows(join(dir, 'c256'));
    // 2 prompts x 4 geometries x 2 temperatures x (16 + 36) agents x (4 + 1) sweeps
    expect(r1.length).toBe(2 * 4 * 2 * (16 + 36) * 5);
    expect(r256).toEqual(r1);

    // The strictly sequential process, replayed from the rows' own agents and neighbours: each update reads
    // the latest write of itself and of each neighbour, and the surrogate's answer to exactly those texts.
    const prompts = new Map(parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6).map((p) => [p.id, p]));
    const surrogate = surrogateBackendSchema.parse({ kind: 'surrogate' });
    const byRun = new Map<string, typeof r1>();
    for (const r of r1) byRun.set(String(r.run_id), [...(byRun.get(String(r.run_id)) ?? []), r]);
    for (const [runId, events] of byRun) {
      const n = Number(events[0].n);
      const agent = new SurrogateAgent(prompts.get(String(events[0].prompt_id))!, surrogate);
      const writer = new Array<number>(n);
      const text = new Array<string>(n);
      for (const row of events) {
        const j = Number(row.event);
        const a = Number(row.agent);
        const nbs = (row.neighbours as number[]).map(Number);
        if (j < n) {
          expect(a).toBe(j);
          expect(row.read_versions).toEqual([]);
        } else {
          expect((row.read_versions as number[]).map(Number), `${runId} event ${j}`).toEqual([writer[a], ...nbs.map((b) => writer[b])]);
        }
        const previous = j < n ? undefined : text[a];
        expect(row.response).toBe(
          agent.reply(
            Number(row.seed),
            Number(row.temperature),
            previous,
            nbs.map((b) => text[b]),
          ).text,
        );
        writer[a] = j;
        text[a] = String(row.response);
      }
    }
  });

  it('a ring agent reads its two ring neighbours', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    await runSweep(spec, { out: join(dir, 'o'), concurrency: 8 });
    const rows = await queryRows(
      `SELECT agent, neighbours FROM read_parquet('${dir}/o/events/fq117-ring-n16-T0.3-glauber-t0.parquet') WHERE sweep > 0`,
    );
    const ring = buildGraph({ kind: 'ring' }, 16, 0);
    for (const r of rows)
      expect((r.neighbours as number[]).map(Number)).toEqual(Array.from(ring.neighbours(Number(r.agent), null as never)));
  });
});
