import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE, checkContextBudget, parseDataset, parseSweepSpec, planSweep, sweepSpecJsonSchema } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { ROOT, panta, tempDir, writeSpec } from './helpers.js';

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

describe('examples double as smoke tests', () => {
  it('quickstart: the full grid, cut to two sweeps, runs, verifies and opens in DuckDB', async () => {
    const spec = parseSweepSpec(read('examples/quickstart.yaml'), 'quickstart.yaml');
    expect(spec.geometries.map((g) => g.kind)).toEqual(['ring', 'torus2d', 'torus3d', 'meanfield']);
    expect(Math.max(...(spec.sizes as number[]))).toBeGreaterThanOrEqual(512);
    expect(spec.temperatures).toHaveLength(3);
    expect(spec.trials).toBe(2);
    expect(spec.backend.kind).toBe('surrogate');
    const dir = tempDir();
    const text = read('examples/quickstart.yaml').replace('../datasets/', `${ROOT}/datasets/`).replace(/^sweeps: 10$/m, 'sweeps: 2').replace('sizes: [64, 729]', 'sizes: [64]');
    const file = writeSpec(dir, text);
    const out = join(dir, 'quickstart');
    const r = panta(['run', file, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/complete: 48\/48 runs/);
    expect(panta(['verify', out]).code).toBe(0);
    const [counts] = await queryRows(
      `SELECT count(*) AS events, count(DISTINCT run_id) AS runs, min(len(emb_hashing)) AS dmin, max(len(emb_hashing)) AS dmax FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(counts).toEqual({ events: 48 * 64 * 3, runs: 48, dmin: 384, dmax: 384 });
    const [params] = await queryRows(`SELECT count(*) AS n, count(DISTINCT encoder) AS e FROM '${out}/order_params.parquet'`);
    expect(params).toEqual({ n: 48 * 3, e: 1 });
  });

  it('eraclitus: the paper-scale grid plans 8,640 runs against an OpenAI-compatible endpoint', () => {
    const spec = parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml');
    const prompts = parseDataset(read('datasets/rheon6.jsonl'), 'rheon6.jsonl');
    const runs = planSweep(spec, prompts, 'eraclitus.yaml');
    expect(runs).toHaveLength(6 * 4 * 12 * 6 * 5);
    // every prompt, quoted answers at full length, fits Qwen3's 32k context
    expect(() => checkContextBudget(spec, runs, DEFAULT_TEMPLATE, 'eraclitus.yaml')).not.toThrow();
    expect(spec.temperatures[0]).toBe(0.1);
    expect(spec.temperatures.at(-1)).toBe(1.6);
    expect(spec.backend.kind).toBe('openai');
    expect(new Set(prompts.filter((p) => p.false_premise).map((p) => p.id)).size).toBe(3);
  });

  it('protocols: the five arms on a ring and a mean field, cut to two sweeps, run and verify', async () => {
    const dir = tempDir();
    const text = read('examples/protocols.yaml')
      .replace('../datasets/', `${ROOT}/datasets/`)
      .replace('file: beliefs.jsonl', `file: ${ROOT}/examples/beliefs.jsonl`)
      .replace(/^sweeps: 8$/m, 'sweeps: 2');
    const out = join(dir, 'protocols');
    const r = panta(['run', writeSpec(dir, text), '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/complete: 80\/80 runs/);
    expect(panta(['verify', out]).code).toBe(0);
    const arms = await queryRows(`SELECT DISTINCT protocol FROM read_parquet('${out}/events/*.parquet') ORDER BY protocol`);
    expect(arms.map((a) => a.protocol)).toEqual(['belief-board', 'drift-policy', 'glauber', 'isolated', 'ssvp']);
  });

  it('the committed JSON Schema is the one the spec schema generates', () => {
    expect(JSON.parse(read('schema/sweep.schema.json'))).toEqual(JSON.parse(JSON.stringify(sweepSpecJsonSchema())));
  });
});

describe('datasets', () => {
  it('rheon6 holds fq117 and fq367 with the answers the paper discusses', () => {
    const prompts = new Map(parseDataset(read('datasets/rheon6.jsonl'), 'rheon6.jsonl').map((p) => [p.id, p]));
    expect(prompts.size).toBe(6);
    expect(prompts.get('fq117')!.false_premise).toBe(true);
    expect(prompts.get('fq117')!.false_answers).toContain('1729');
    expect(prompts.get('fq367')!.accepted).toContain('96');
    expect(prompts.get('fq367')!.false_answers).toEqual(expect.arrayContaining(['95', '97']));
  });

  it('freshqa.jsonl is the whole shared subset', () => {
    expect(parseDataset(read('datasets/freshqa.jsonl'), 'freshqa.jsonl')).toHaveLength(264);
  });
});
