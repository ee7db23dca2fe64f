import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';
import type { ChatRequest, ChatResult, LlmBackend } from '@panta/llm';
import { InProcessTransport, runSweep } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

/**
 * Populations the surrogate never produces, from a model whose every answer is chosen by the test: the
 * sweep must complete, verify, and write NULL where a measurement is undefined, never crash.
 */
class ScriptedBackend implements LlmBackend {
  readonly kind = 'scripted';
  readonly model = 'scripted';
  constructor(private readonly answer: (request: ChatRequest) => string) {}
  async complete(request: ChatRequest): Promise<ChatResult> {
    return { text: this.answer(request), finishReason: 'stop', promptTokens: 10, completionTokens: 5, calls: 1 };
  }
  async close(): Promise<void> {}
}

const SPEC = `name: degenerate
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [meanfield, ring]
sizes: [16]
temperatures: [0]
sweeps: 3
seed: 3
`;

async function sweepAnswering(answer: (request: ChatRequest) => string) {
  const dir = tempDir();
  const out = join(dir, 'out');
  const backend = new ScriptedBackend(answer);
  const summary = await runSweep(writeSpec(dir, SPEC), {
    out,
    logLevel: 'silent',
    transport: (services) => new InProcessTransport({ ...services, backend }),
  });
  const params = await queryRows(`SELECT * FROM read_parquet('${out}/order_params.parquet') ORDER BY run_id, sweep`);
  const runs = await queryRows(
    `SELECT run_id, prompt_id, focus, focus_total, drift_onset, recovered, drift_tolerance FROM read_parquet('${out}/runs.parquet') ORDER BY run_id`,
  );
  const whitening = await queryRows(
    `SELECT DISTINCT prompt_id, mode, fallback FROM read_parquet('${out}/whitening/*.parquet') ORDER BY prompt_id`,
  );
  return { out, summary, params, runs, whitening };
}

async function rewrite(file: string, select: string): Promise<void> {
  await queryRows(`COPY (${select} FROM read_parquet('${file}')) TO '${file}.x' (FORMAT parquet)`);
  renameSync(`${file}.x`, file);
}

describe('populations a model can produce and the surrogate cannot', () => {
  it('every answer unjudgeable: rho and delta_rho are NULL, accuracy 0 keeps FOCUS and drift defined, and verify passes', async () => {
    // Off-topic answers that differ between agents (seeds differ): the reference judge tags all not_known.
    const { out, summary, params, runs, whitening } = await sweepAnswering(
      (r) => `Bananas grow in bunches of ${r.seed % 7 === 0 ? 'many' : 'some'} kinds.`,
    );
    expect(summary.status).toBe('complete');
    expect(params).toHaveLength(4 * 4);
    for (const p of params) {
      expect([p.rho, p.delta_rho, p.n_not_known, p.n_correct, p.n_hallucinated]).toEqual([null, null, 16, 0, 0]);
      expect(Number.isFinite(p.magnetisation) && Number.isFinite(p.cohesion)).toBe(true);
    }
    expect(whitening.map((w) => [w.mode, w.fallback])).toEqual([
      ['zca', null],
      ['zca', null],
    ]);
    for (const r of runs) {
      expect(r.focus).toEqual([0, 0, 0]);
      expect([r.focus_total, r.drift_onset, r.recovered, r.drift_tolerance]).toEqual([0, null, null, 0.5]);
    }
    const [nulls] = await queryRows(
      `SELECT count(*) FILTER (WHERE rho IS NULL) AS rho, count(*) FILTER (WHERE delta_rho IS NULL) AS delta FROM read_parquet('${out}/order_params.parquet')`,
    );
    expect(nulls).toEqual({ rho: 16, delta: 16 });
    expect(await verifyCorpus(out)).toMatchObject({ ok: true, problems: [] });
  });

  it('empty, whitespace, control-character and 100,000-character answers: the sweep completes with finite order parameters and verifies', async () => {
    const huge = 'The answer is 96. '.repeat(5556).slice(0, 100_000);
    const odd = ['', '   \n\t', '\u0000\u0001', '\u0007\u001b[31m96\u007f', huge, 'I do not know.'];
    const { out, summary, params, whitening } = await sweepAnswering((r) => odd[r.seed % odd.length]);
    expect(summary.status).toBe('complete');
    expect(whitening.map((w) => [w.mode, w.fallback])).toEqual([
      ['zca', null],
      ['zca', null],
    ]);
    for (const p of params) {
      for (const f of ['magnetisation', 'cohesion', 'cds_sys'] as const) expect([f, Number.isFinite(p[f])]).toEqual([f, true]);
      expect((p.magnetisation as number) > 0).toBe(true);
    }
    const [stored] = await queryRows(
      `SELECT max(length(response)) AS longest, count(*) FILTER (WHERE response = '') AS empty FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(stored!.longest).toBe(100_000);
    expect(stored!.empty as number).toBeGreaterThan(0);
    expect(await verifyCorpus(out)).toMatchObject({ ok: true, problems: [] });
  });

  it('every answer empty: a unanimous population like any other, m = q = 1', async () => {
    const { out, summary, params, whitening } = await sweepAnswering(() => '');
    expect(summary.status).toBe('complete');
    expect(whitening.map((w) => w.fallback)).toEqual(['degenerate_pool', 'degenerate_pool']);
    for (const p of params)
      expect([p.magnetisation, p.cohesion, p.rho, p.n_not_known].map((x) => (typeof x === 'number' ? Number(x.toFixed(9)) : x))).toEqual([
        1,
        1,
        null,
        16,
      ]);
    expect(await verifyCorpus(out)).toMatchObject({ ok: true, problems: [] });
  });

  it('every answer identical: the degenerate whitening falls back to raw, recorded, m = q = 1 at every sweep, and verify passes', async () => {
    const { out, summary, params, runs, whitening } = await sweepAnswering(() => 'The answer is 96.');
    expect(summary.status).toBe('complete');
    expect(whitening).toEqual([
      { prompt_id: 'fq117', mode: 'raw', fallback: 'degenerate_pool' },
      { prompt_id: 'fq367', mode: 'raw', fallback: 'degenerate_pool' },
    ]);
    expect(params).toHaveLength(16);
    for (const p of params) {
      expect([p.magnetisation, p.cohesion].map((x) => Math.abs((x as number) - 1) < 1e-6)).toEqual([true, true]);
      expect(p.cds_sys as number).toBeLessThan(1e-6);
    }
    // fq367 accepts 96: all correct. For fq117 it is not an answer: rho undefined, accuracy 0.
    expect(new Set(params.filter((p) => String(p.run_id).startsWith('fq367')).map((p) => p.rho))).toEqual(new Set([0]));
    expect(new Set(params.filter((p) => String(p.run_id).startsWith('fq117')).map((p) => p.rho))).toEqual(new Set([null]));
    for (const r of runs) expect([r.focus, r.focus_total, r.drift_onset]).toEqual([[0, 0, 0], 0, null]);
    expect(await verifyCorpus(out)).toMatchObject({ ok: true, problems: [] });

    // verify recomputes the fallback and the drift statistics: a whitening stored as zca, or a drift runs.parquet
    // does not follow from the events, is named.
    const whiteningFile = join(out, 'whitening', 'fq367__hashing.parquet');
    await rewrite(whiteningFile, `SELECT * REPLACE ('zca' AS mode, NULL::VARCHAR AS fallback)`);
    await rewrite(join(out, 'runs.parquet'), `SELECT * REPLACE (CASE WHEN run_id LIKE 'fq117-ring%' THEN 1 END AS drift_onset)`);
    const report = await verifyCorpus(out);
    expect(report.ok).toBe(false);
    expect(report.problems).toContain(
      'whitening of fq367/hashing is stored as zca (fallback none), the t = 0 answers give raw (fallback degenerate_pool)',
    );
    expect(report.problems).toContain(
      'runs.parquet: fq117-ring-n16-T0-glauber-t0: drift_onset does not match the order parameters (1 stored, null recomputed)',
    );
  });
});
