import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseText, parseDataset, parseJudgeBlock, type JudgeSpec } from '@panta/core';
import {
  judgeOrderParams,
  judgeRunDrift,
  posthocJournalPath,
  posthocJudgeCachePath,
  queryRows,
  readEvents,
  readOrderParams,
  readPosthocJournal,
  shardPath,
  verifyCorpus,
  writeShardColumn,
} from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { judgeCorpus, runSweep } from '../src/index.js';
import { RHEON6, fixtureKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);

const spec = (extra = '') => `name: posthoc-judge
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.5, 1.5]
trials: 2
sweeps: 3
seed: 8
${extra}`;

const llmBlock = (url: string) => `{kind: llm, backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_retries: 10}}`;
/** The judge block as `panta judge --judge` parses it (the schema's defaults filled in). */
const llmJudge = (url: string): JudgeSpec => parseJudgeBlock(llmBlock(url), '--judge');

const table = (file: string) => queryRows(`SELECT * FROM read_parquet('${file}')`);

/** The corpus of spec(), swept once for the file; each test that judges it takes its own copy at `target`. */
let swept: Promise<string> | undefined;
async function sweptCorpus(target: string): Promise<string> {
  swept ??= (async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    expect((await runSweep(writeSpec(dir, spec()), { out })).status).toBe('complete');
    return out;
  })();
  cpSync(await swept, target, { recursive: true });
  return target;
}

describe('panta judge: another judge over a finished corpus', () => {
  it("the LLM judge against serve-surrogate reproduces the reference judge's tags, rho and drift, keeps the sweep's tags, judges each distinct answer once, and verify passes", async () => {
    const server = await startSurrogateServer({ prompts });
    try {
      const dir = tempDir();
      const out = await sweptCorpus(join(dir, 'out'));
      const events = `read_parquet('${out}/events/*.parquet')`;
      const before = await queryRows(`SELECT run_id, event, tag FROM ${events} ORDER BY run_id, event`);

      const summary = await judgeCorpus(out, llmJudge(server.url), { name: 'qwen' });
      expect(summary).toMatchObject({ status: 'complete', shardsRewritten: 16, shardsTotal: 16 });
      const rows = await queryRows(`SELECT run_id, event, prompt_id, response, tag, tag_qwen FROM ${events} ORDER BY run_id, event`);
      expect(rows.map((r) => r.tag_qwen)).toEqual(rows.map((r) => r.tag));
      expect(rows.map(({ run_id, event, tag }) => ({ run_id, event, tag }))).toEqual(before);
      const distinct = new Set(rows.map((r) => `${String(r.prompt_id)}\u0000${normaliseText(String(r.response))}`)).size;
      expect(server.stats().completed).toBe(distinct);
      expect(summary.calls).toBe(distinct);

      expect(await table(join(out, 'judges', 'qwen', 'order_params.parquet'))).toEqual(await table(join(out, 'order_params.parquet')));
      expect(await table(join(out, 'judges', 'qwen', 'runs.parquet'))).toEqual(await table(join(out, 'runs.parquet')));
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
      expect(manifest.judge).toEqual({ kind: 'reference', model: 'reference' });
      expect(manifest.judges).toEqual([
        { name: 'qwen', kind: 'llm', model: 'openai:surrogate-potts-v1', calls: distinct, tags: manifest.tags },
      ]);
      expect(Object.keys(manifest.files)).toContain(join('judges', 'qwen', 'order_params.parquet'));
      expect((await verifyCorpus(out)).problems).toEqual([]);

      // The name is taken: refused without --replace; with it, the verdict cache answers every call.
      await expect(judgeCorpus(out, llmJudge(server.url), { name: 'qwen' })).rejects.toThrow(/judge named qwen already/);
      const again = await judgeCorpus(out, llmJudge(server.url), { name: 'qwen', replace: true });
      expect(again.calls).toBe(0);
      expect(server.stats().completed).toBe(distinct);
      expect((await verifyCorpus(out)).problems).toEqual([]);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('order parameters and drift of a judge come from its own tags (hand-computed on a synchronous run of 16 agents)', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    expect((await runSweep(writeSpec(dir, spec('dynamics: synchronous\n')), { out })).status).toBe('complete');
    const [run] = await queryRows(`SELECT run_id FROM read_parquet('${out}/runs.parquet') LIMIT 1`);
    const runId = String(run.run_id);
    const file = shardPath(out, runId);
    // sweep 0: agents 0-3 hallucinated, the rest correct; sweep 1: all hallucinated; sweep 2: agents 0-7
    // not_known, the rest hallucinated; sweep 3: agents 0-7 correct, the rest not_known.
    const tagOf = (sweep: number, agent: number) =>
      [
        agent < 4 ? 'hallucinated' : 'correct',
        'hallucinated',
        agent < 8 ? 'not_known' : 'hallucinated',
        agent < 8 ? 'correct' : 'not_known',
      ][sweep];
    const tags: string[] = [];
    for await (const b of readEvents([file], { columns: ['sweep', 'agent'] }))
      for (let r = 0; r < b.rows; r++) tags.push(tagOf((b.columns.sweep as number[])[r], (b.columns.agent as number[])[r]));
    await writeShardColumn(file, { name: 'tag_hand', type: 'VARCHAR' }, tags);
    const stored = (await readOrderParams(join(out, 'order_params.parquet'))).filter((p) => p.run_id === runId);
    const params = await judgeOrderParams(out, [{ runId, n: 16 }], 'hand', stored);
    expect(params.map((p) => [p.sweep, p.rho, p.delta_rho, p.n_correct, p.n_hallucinated, p.n_not_known])).toEqual([
      [0, 0.25, 0, 12, 4, 0],
      [1, 1, 0.75, 0, 16, 0],
      [2, 1, 0.75, 0, 8, 8],
      [3, 0, -0.25, 8, 0, 8],
    ]);
    // Embedding fields are the corpus's own.
    expect(params.map((p) => p.cohesion)).toEqual(stored.map((p) => p.cohesion));
    // accuracy 0.75, 0, 0, 0.5: FOCUS -0.75, 0, 0.5; tolerance 2/sqrt(16) = 0.5; sweeps 1 and 2 are more than
    // 0.5 below 0.75, so drift sets in at 1; sweep 3 (0.5) never gets back to 0.75.
    expect(judgeRunDrift(params, [{ runId, n: 16 }], 'hashing', 'auto')).toEqual([
      { run_id: runId, focus: [-0.75, 0, 0.5], focus_total: -0.25, drift_tolerance: 0.5, drift_onset: 1, recovered: false },
    ]);
  }, 180_000);

  it('killed (SIGKILL) mid-way, a rerun resumes at the first shard not done, asks only for verdicts not cached, and gives the same tags', async () => {
    const server = await startSurrogateServer({ prompts, latencyMs: 2 });
    try {
      const dir = tempDir();
      const out = await sweptCorpus(join(dir, 'out'));
      const judge = llmJudge(server.url);
      const journal = posthocJournalPath(out, 'judge', 'qwen');
      const pass = ['judge', out, llmBlock(server.url), '150', 'qwen'];
      const killed = await fixtureKilledWhen('posthoc-pass.mjs', pass, () => (readPosthocJournal(journal)?.done.size ?? 0) >= 3, 5);
      expect(killed.exitedFirst).toBe(false);
      while (server.stats().open > 0) await new Promise((r) => setTimeout(r, 10));
      const done = readPosthocJournal(journal)?.done.size ?? 0;
      expect(done).toBeGreaterThanOrEqual(3);
      expect(done).toBeLessThan(16);
      const cached = readFileSync(posthocJudgeCachePath(out, 'qwen'), 'utf8')
        .split('\n')
        .filter((l) => l.trim()).length;
      const calledBefore = server.stats().completed;

      const resumed = await judgeCorpus(out, judge, { name: 'qwen' });
      expect(resumed).toMatchObject({ status: 'complete', shardsRewritten: 16 - done });
      const rows = await queryRows(
        `SELECT prompt_id, response, tag, tag_qwen FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`,
      );
      expect(rows.map((r) => r.tag_qwen)).toEqual(rows.map((r) => r.tag));
      const distinct = new Set(rows.map((r) => `${String(r.prompt_id)}\u0000${normaliseText(String(r.response))}`)).size;
      // Every verdict the killed pass had cached is not asked again.
      expect(server.stats().completed - calledBefore).toBe(distinct - cached);
      expect(existsSync(journal)).toBe(false);
      expect(await table(join(out, 'judges', 'qwen', 'order_params.parquet'))).toEqual(await table(join(out, 'order_params.parquet')));
      expect((await verifyCorpus(out)).problems).toEqual([]);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('stopped after a few shards and resumed, the manifest counts the calls of an uninterrupted pass', async () => {
    const server = await startSurrogateServer({ prompts });
    try {
      const dir = tempDir();
      const out = await sweptCorpus(join(dir, 'out'));
      const whole = join(dir, 'whole');
      cpSync(out, whole, { recursive: true });
      const judge = llmJudge(server.url);
      const calls = (folder: string) =>
        (JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8')) as { judges: { name: string; calls: number }[] }).judges.find(
          (j) => j.name === 'qwen',
        )!.calls;
      expect((await judgeCorpus(whole, judge, { name: 'qwen' })).status).toBe('complete');

      const stop = new AbortController();
      const stopped = await judgeCorpus(out, judge, {
        name: 'qwen',
        signal: stop.signal,
        onProgress: (p) => p.runsFinished >= 3 && stop.abort(),
      });
      expect(stopped.status).toBe('stopped');
      expect(stopped.calls).toBeGreaterThan(0);
      const resumed = await judgeCorpus(out, judge, { name: 'qwen' });
      expect(resumed.status).toBe('complete');
      expect(resumed.calls).toBeLessThan(calls(whole));
      expect(calls(out)).toBe(calls(whole));
    } finally {
      await server.close();
    }
  });
});
