import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvLine, parseCsv } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { runSweep } from '@panta/engine';
import { RHEON6, pantaInProcess, tempDir, writeSpec } from '../helpers.js';
import { adversarialSpec } from './expect-corpus.js';
import { startAdversarialServer, type AdversarialServer } from './server.js';

// The passes over a finished corpus (panta embed, panta judge, panta annotate, panta report) on a corpus of
// answers Panta did not write (empty, 100,000 characters, control characters, invalid UTF-8, off-topic), and a
// post-hoc judge whose verdicts no parser accepts: each pass completes, the corpus verifies, and every number
// is defined or null, never NaN.

const dir = tempDir('panta-adversarial-posthoc-');
let answers: AdversarialServer;
let judge: AdversarialServer;
let out: string;
beforeAll(async () => {
  answers = await startAdversarialServer({ mode: 'mixed' });
  judge = await startAdversarialServer({ mode: 'unparsable-verdict' });
  out = join(dir, 'mixed');
  const spec = writeSpec(dir, adversarialSpec('mixed', RHEON6, answers.url), 'mixed.yaml');
  expect((await runSweep(spec, { out, logLevel: 'silent' })).status).toBe('complete');
}, 120_000);
afterAll(async () => {
  await answers.close();
  await judge.close();
});

async function verified(): Promise<void> {
  const v = await pantaInProcess(['verify', out]);
  expect(v.stdout + v.stderr).toContain('complete and consistent');
  expect(v.code).toBe(0);
}

describe('passes over a corpus of adversarial answers', () => {
  it('panta embed adds a column of finite vectors for every answer, empty and huge ones too, and order parameters', async () => {
    const r = await pantaInProcess(['embed', out, '--encoder', 'extra:hashing:64']);
    expect(r.code, r.stderr).toBe(0);
    const rows = await queryRows<{ response: string; dim: number; finite: boolean }>(
      `SELECT response, len(emb_extra) AS dim, list_bool_and(list_transform(emb_extra, x -> isfinite(x))) AS finite FROM read_parquet('${out}/events/**/*.parquet') WHERE emb_extra IS NOT NULL`,
    );
    expect(rows.length).toBe(48);
    expect(rows.some((x) => x.response.trim() === '')).toBe(true);
    for (const x of rows) expect([x.dim, x.finite]).toEqual([64, true]);
    const order = await queryRows<{ m: number | null; q: number | null }>(
      `SELECT magnetisation AS m, cohesion AS q FROM read_parquet('${out}/order_params.parquet') WHERE encoder = 'extra'`,
    );
    expect(order.length).toBeGreaterThan(0);
    for (const o of order) for (const v of [o.m, o.q]) expect(v === null || Number.isFinite(v)).toBe(true);
    await verified();
  }, 120_000);

  it('panta judge with a model that cannot grade: every verdict judge_failure, its rho null, the sweep tags kept', async () => {
    const spec = `{kind: llm, backend: {kind: openai, base_url: "${judge.url}", model: adversarial-1, server: vllm, max_retries: 1}}`;
    const r = await pantaInProcess(['judge', out, '--judge', spec, '--name', 'broken']);
    expect(r.code, r.stderr).toBe(0);
    const tags = await queryRows<{ tag: string; posthoc: string }>(
      `SELECT tag, tag_broken AS posthoc FROM read_parquet('${out}/events/**/*.parquet') WHERE tag_broken IS NOT NULL`,
    );
    expect(tags.length).toBe(48);
    expect(tags.every((t) => t.posthoc === 'judge_failure')).toBe(true);
    expect(tags.some((t) => t.tag !== 'judge_failure')).toBe(true);
    const rho = await queryRows<{ rho: number | null; delta: number | null }>(
      `SELECT rho, delta_rho AS delta FROM read_parquet('${out}/judges/broken/order_params.parquet')`,
    );
    expect(rho.length).toBeGreaterThan(0);
    expect(rho.every((x) => x.rho === null && x.delta === null)).toBe(true);
    await verified();
  }, 120_000);

  it('panta annotate: a sample of these answers round-trips through CSV, and kappas are numbers or "undefined", never NaN', async () => {
    const sample = join(dir, 'sample.csv');
    const e = await pantaInProcess(['annotate', 'export', out, '--n', '12', '--out', sample]);
    expect(e.code, e.stderr).toBe(0);
    const [header, ...rows] = parseCsv(readFileSync(sample, 'utf8'));
    expect(rows.length).toBe(12);
    const label = header!.indexOf('label');
    const filled = join(dir, 'annotator.csv');
    writeFileSync(filled, [header!, ...rows.map((row) => row.map((v, i) => (i === label ? 'not_known' : v)))].map(csvLine).join('\n'));
    const s = await pantaInProcess(['annotate', 'score', out, filled]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).not.toMatch(/NaN/);
    expect(s.stdout).toMatch(/kappa/i);
  }, 120_000);

  it('panta report draws it all without a NaN', async () => {
    const r = await pantaInProcess(['report', out]);
    expect(r.code, r.stderr).toBe(0);
    const report = join(out, 'report');
    const files = ['index.html', ...readdirSync(join(report, 'tables')).map((f) => join('tables', f))];
    for (const f of files) expect(readFileSync(join(report, f), 'utf8'), f).not.toMatch(/\bNaN\b/);
    // Table 8 from the annotation above, the post-hoc judge among the raters
    expect(readFileSync(join(report, 'index.html'), 'utf8')).toMatch(/kappa/i);
  }, 120_000);

  it("panta report --judge draws the post-hoc judge's tags (all judge_failure: no majority anywhere); an unknown name is one line, exit 2", async () => {
    const at = join(dir, 'by-broken');
    const r = await pantaInProcess(['report', out, '--judge', 'broken', '--out', at]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("post-hoc judge broken's");
    // No snapshot has a majority of usable tags under the broken judge, whatever the sweep judge said.
    const fate = (d: string) =>
      readFileSync(join(d, 'tables', 'majority-fate.csv'), 'utf8')
        .trim()
        .split('\n')
        .at(-1);
    expect(fate(at)).toBe('pooled,2,0,0,0,0,2');
    expect(fate(join(out, 'report'))).not.toBe('pooled,2,0,0,0,0,2');
    for (const f of ['index.html', ...readdirSync(join(at, 'tables')).map((t) => join('tables', t))])
      expect(readFileSync(join(at, f), 'utf8'), f).not.toMatch(/\bNaN\b/);
    const bad = await pantaInProcess(['report', out, '--judge', 'nope', '--out', join(dir, 'nope')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/--judge: .*no post-hoc judge named "nope".*fix: use one of broken/);
  }, 120_000);
});
