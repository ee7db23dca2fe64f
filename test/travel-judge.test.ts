import { cpSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { judgeCachePath, queryRows, verifyCorpus } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { startSurrogateServer } from '@panta/llm';
import { startAdversarialServer } from './adversarial/server.js';
import { pantaInProcess as panta, ROOT, tempDir, writeSpec } from './helpers.js';

/** examples/ssvp-travel.yaml on two scenarios, one trial each (6 runs), with absolute paths and the given judge. */
function spec(judge: string): string {
  let text = readFileSync(join(ROOT, 'examples', 'ssvp-travel.yaml'), 'utf8')
    .replace('../datasets/', `${ROOT}/datasets/`)
    .replace('file: travel-roles.jsonl', `file: ${ROOT}/examples/travel-roles.jsonl`)
    .replace(/^out: .*$/m, '');
  for (const [from, to] of [
    ['trials: 30', 'trials: 1\ntrial_prompts: every\nprompts: [travel-barcelona, travel-tokyo]'],
    ['judge: {kind: reference}', `judge: ${judge}`],
  ]) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return text;
}

const table = (out: string) => queryRows(`SELECT * FROM read_parquet('${out}/travel.parquet') ORDER BY run_id`);
const plain = (v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : Array.isArray(v) ? v.map(plain) : v);
const pick = (rows: Record<string, unknown>[], cols: string[]) => rows.map((r) => Object.fromEntries(cols.map((c) => [c, plain(r[c])])));
const HR = ['run_id', 'assertions_made', 'assertions_wrong', 'hr', 'hr_note'];

async function sweep(dir: string, name: string, judge: string): Promise<string> {
  const out = join(dir, name);
  expect((await runSweep(writeSpec(dir, spec(judge), `${name}.yaml`), { out, logLevel: 'silent' })).status).toBe('complete');
  return out;
}

/** The two sweeps several tests read, each run once for the file: judged by the reference and by the surrogate LLM judge. */
const shared = tempDir('panta-travel-judge-');
let refSweep: Promise<string> | undefined;
let llmSweep: Promise<string> | undefined;
const refCorpus = () => (refSweep ??= sweep(shared, 'ref', '{kind: reference}'));
const llmCorpus = () => (llmSweep ??= sweep(shared, 'llm', '{kind: llm, backend: {kind: surrogate}}'));
/** A copy of a shared corpus in `dir`, for a test that changes it. */
const copyOf = (corpus: string, dir: string, name: string) => {
  cpSync(corpus, join(dir, name), { recursive: true });
  return join(dir, name);
};

describe('the LLM judge on the travel table (HR per assertion and TCS, Hallucination as Context Drift 4.4)', () => {
  it('the surrogate judge reproduces the reference HR exactly, scores TCS on all five dimensions, and verify recomputes it from the stored verdicts', async () => {
    const dir = tempDir();
    const refOut = await refCorpus();
    const ref = await table(refOut);
    const llmOut = await llmCorpus();
    const llm = await table(llmOut);
    expect(ref.length).toBe(6);
    expect(pick(llm, HR)).toEqual(pick(ref, HR));
    expect(ref.some((r) => r.hr !== null && Number(r.hr) > 0)).toBe(true);
    expect(ref.map((r) => r.judge)).toEqual(ref.map(() => 'reference'));
    expect(new Set(llm.map((r) => r.judge))).toEqual(new Set(['surrogate:surrogate-potts-v1']));
    expect(llm.map((r) => Number(r.judge_failures))).toEqual(llm.map(() => 0));
    // The reference check scores location only on the surrogate (it states the airport alone); the surrogate judge
    // scores every dimension, the four others on the airport (the paper's cascade), so each equals location here.
    for (const r of ref) expect((plain(r.tcs_dims) as unknown[]).filter((_x, i) => i !== 1)).toEqual([null, null, null, null]);
    for (const r of llm) {
      const dims = plain(r.tcs_dims) as (number | null)[];
      expect(dims.length).toBe(5);
      expect(
        dims.every((x) => x !== null && x === dims[1]),
        JSON.stringify(dims),
      ).toBe(true);
      expect(Number(r.tcs)).toBeCloseTo(dims[1] as number, 12);
    }
    // Location is the reference TCS's one scored dimension, scored alike on the final itinerary (gold 1, injected 0, both 0.5).
    expect(llm.map((r) => (plain(r.tcs_dims) as number[])[1])).toEqual(ref.map((r) => Number(r.tcs)));

    expect((await verifyCorpus(llmOut)).problems).toEqual([]);
    // The judge consistency check (the paper's kappa): 20 outputs at most (this corpus's answers hold 16 distinct ones),
    // each judged by two calls of their own. The surrogate
    // judge is deterministic, so the two calls agree on every label; the reference judge has nothing to measure.
    const [kappa] = await queryRows(`SELECT * FROM read_parquet('${llmOut}/travel_judge.parquet')`);
    expect(pick([kappa!], ['judge', 'outputs', 'outputs_scored', 'labels', 'agreement', 'kappa', 'kappa_note'])).toEqual([
      { judge: 'surrogate:surrogate-potts-v1', outputs: 16, outputs_scored: 16, labels: 48, agreement: 1, kappa: 1, kappa_note: null },
    ]);
    expect(readFileSync(judgeCachePath(llmOut), 'utf8')).toContain('\\u0000consistency-2');
    const [refKappa] = await queryRows(`SELECT judge, kappa FROM read_parquet('${refOut}/travel_judge.parquet')`);
    expect(refKappa).toEqual({ judge: 'reference', kappa: null });
    // The report's Table 1 says who judged.
    for (const [out, says, name] of [
      [llmOut, 'LLM judge surrogate:surrogate-potts-v1: every assertion and all five dimensions; 0 rubric replies failed', 'llm'],
      [refOut, 'reference judge: the dimensions with a checkable fact', 'ref'],
    ]) {
      const report = join(dir, `report-${name}`);
      const r = await panta(['report', out, '--out', report]);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(join(report, 'index.html'), 'utf8')).toContain(says);
    }
    // verify recomputes from the stored verdicts: without them every verdict is a judge failure, and the table
    // disagrees (a copy of the corpus, the file's other tests read it whole).
    const cache = readFileSync(judgeCachePath(llmOut), 'utf8');
    expect(cache).toContain('travel-assertions\\u0000travel-barcelona');
    expect(cache).toContain('travel-tcs\\u0000travel-tokyo');
    const uncached = copyOf(llmOut, dir, 'llm-uncached');
    rmSync(judgeCachePath(uncached));
    const problems = (await verifyCorpus(uncached)).problems;
    expect(
      problems.some((p) => /^travel\.parquet: travel-\S+: assertions_made \d+ stored, 0 recomputed/.test(p)),
      problems.join('\n'),
    ).toBe(true);
    expect(problems).toContain('travel_judge.parquet: outputs_scored 16 stored, 0 recomputed');
  });

  it('panta plan counts the travel rubric calls: one per answer and one per final itinerary of every travel run', async () => {
    const dir = tempDir();
    const llm = writeSpec(dir, spec('{kind: llm, backend: {kind: surrogate}}'), 'llm.yaml');
    const r = await panta(['plan', llm, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const calls = JSON.parse(r.stdout).calls as { kind: string; calls: number; completionTokens: number; atMost: boolean }[];
    // 6 runs; each: 3 roles x the paper's 6 steps (sweeps 0..5) = 18 answers, and one final itinerary.
    expect(calls.find((c) => c.kind === 'travel-judge')).toMatchObject({
      calls: 6 * (18 + 1),
      completionTokens: 6 * 19 * 96,
      atMost: true,
    });
    expect(calls.find((c) => c.kind === 'judge')?.calls).toBe(6 * 18);
    const ref = await panta(['plan', writeSpec(dir, spec('{kind: reference}'), 'ref.yaml'), '--json']);
    expect((JSON.parse(ref.stdout).calls as { kind: string }[]).map((c) => c.kind)).not.toContain('travel-judge');
  });

  it('a changed TCS dimension in an LLM-judged table is named by verify', async () => {
    const dir = tempDir();
    const out = copyOf(await llmCorpus(), dir, 'llm');
    const file = join(out, 'travel.parquet');
    await queryRows(
      `COPY (SELECT * REPLACE (CASE WHEN prompt_id = 'travel-tokyo' AND protocol = 'ssvp' THEN [0.5, 0.5, 0.5, 0.5, 0.5] ELSE tcs_dims END AS tcs_dims) FROM read_parquet('${file}')) TO '${file}.new' (FORMAT parquet)`,
    );
    renameSync(`${file}.new`, file);
    const problems = (await verifyCorpus(out)).problems;
    expect(
      problems.some((p) => /^travel\.parquet: travel-tokyo-\S+-ssvp-\S+: tcs_dims \[0\.5,/.test(p)),
      problems.join('\n'),
    ).toBe(true);
    // A reference-judged table written before the judge columns existed still verifies.
    const old = copyOf(await refCorpus(), dir, 'old');
    const oldFile = join(old, 'travel.parquet');
    await queryRows(
      `COPY (SELECT * EXCLUDE (tcs_dims, judge, judge_failures) FROM read_parquet('${oldFile}')) TO '${oldFile}.new' (FORMAT parquet)`,
    );
    renameSync(`${oldFile}.new`, oldFile);
    const oldProblems = (await verifyCorpus(old)).problems;
    // (the rewritten file no longer matches the manifest's checksum; its values are not questioned).
    expect(oldProblems).toEqual(['travel.parquet does not match its checksum in the manifest']);
  });

  it('serve-surrogate, through the openai client, judges the travel table as the in-process surrogate does', async () => {
    const dir = tempDir();
    const prompts = parseDataset(readFileSync(join(ROOT, 'datasets', 'travel8.jsonl'), 'utf8'), 'travel8.jsonl').slice(0, 2);
    const server = await startSurrogateServer({ prompts });
    try {
      const served = await sweep(
        dir,
        'served',
        `{kind: llm, backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1}}`,
      );
      const local = await llmCorpus();
      const cols = [...HR, 'tcs', 'tcs_note', 'tcs_dims', 'judge_failures'];
      expect(pick(await table(served), cols)).toEqual(pick(await table(local), cols));
      expect((await table(served))[0]?.judge).toBe('openai:surrogate-potts-v1');
      expect((await verifyCorpus(served)).problems).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a judge whose replies no parser accepts gives judge failures: HR and TCS null with a note, never NaN, and the corpus verifies', async () => {
    const dir = tempDir();
    const server = await startAdversarialServer({ mode: 'unparsable-verdict' });
    try {
      const out = await sweep(
        dir,
        'adv',
        `{kind: llm, backend: {kind: openai, base_url: "${server.url}", model: adversarial-1, server: vllm, max_retries: 0}}`,
      );
      const rows = await table(out);
      expect(rows.length).toBe(6);
      for (const r of rows) {
        expect(r.hr).toBeNull();
        expect(r.hr_note).toBe('the judge failed on every answer');
        expect(r.tcs).toBeNull();
        expect(r.tcs_note).toBe('the judge failed on the final itinerary');
        expect(plain(r.tcs_dims)).toEqual([null, null, null, null, null]);
        // Every rubric failed: 3 roles x 6 steps (sweeps 0..5) of answers, and the final itinerary's TCS.
        expect(Number(r.judge_failures)).toBe(3 * 6 + 1);
        expect(Number(r.assertions_made)).toBe(0);
      }
      expect(JSON.stringify(rows.map((r) => plain(r)))).not.toMatch(/NaN/);
      // The rubrics reached the model: every judge call the manifest counts (travel ones included) is a request it got.
      const judgeCalls = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).usage.judge_calls as number;
      expect(judgeCalls).toBeGreaterThan(0);
      expect(server.requests).toBeGreaterThanOrEqual(judgeCalls);
      expect((await verifyCorpus(out)).problems).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
