import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE, checkContextBudget, parseDataset, parseSweepSpec, planSweep, sweepSpecJsonSchema } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { ROOT, panta, pantaInProcess as cli, tempDir, writeSpec } from './helpers.js';

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
    const text = read('examples/quickstart.yaml')
      .replace('../datasets/', `${ROOT}/datasets/`)
      .replace(/^sweeps: 10$/m, 'sweeps: 2')
      .replace('sizes: [64, 729]', 'sizes: [64]');
    const file = writeSpec(dir, text);
    const out = join(dir, 'quickstart');
    // the quickstart as a user runs it: the built binary (the other examples run the CLI in this process)
    const r = panta(['run', file, '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/complete: 48\/48 runs/);
    expect((await cli(['verify', out])).code).toBe(0);
    const [counts] = await queryRows(
      `SELECT count(*) AS events, count(DISTINCT run_id) AS runs, min(len(emb_hashing)) AS dmin, max(len(emb_hashing)) AS dmax FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(counts).toEqual({ events: 48 * 64 * 3, runs: 48, dmin: 384, dmax: 384 });
    const [params] = await queryRows(`SELECT count(*) AS n, count(DISTINCT encoder) AS e FROM '${out}/order_params.parquet'`);
    expect(params).toEqual({ n: 48 * 3, e: 1 });
  });

  it("eraclitus: the paper's campaign, 432 configurations (three sizes per geometry) and 2,160 runs against an OpenAI-compatible endpoint", () => {
    const spec = parseSweepSpec(read('examples/eraclitus.yaml'), 'eraclitus.yaml');
    const prompts = parseDataset(read('datasets/rheon6.jsonl'), 'rheon6.jsonl');
    const runs = planSweep(spec, prompts, 'eraclitus.yaml');
    // 6 prompts x 6 temperatures x 12 (geometry, N) pairs, 5 trials
    expect(new Set(runs.map((r) => r.configId)).size).toBe(6 * 6 * 12);
    expect(runs).toHaveLength(6 * 6 * 12 * 5);
    expect(new Set(runs.map((r) => `${r.geometryLabel}/${r.n}`)).size).toBe(12);
    // A.3: fixed 100-token answers, thinking off; A.4: an independent judge; Appendix E: four encoders
    expect([spec.max_tokens, spec.fixed_length]).toEqual([100, true]);
    if (spec.backend.kind !== 'openai' || spec.judge.kind !== 'llm' || spec.judge.backend.kind !== 'openai')
      throw new Error('served models');
    expect(spec.backend.thinking).toBe(false);
    expect(spec.judge.backend.model).toBe('Qwen/Qwen2.5-72B-Instruct');
    expect(spec.judge.backend.base_url).not.toEqual(spec.backend.base_url);
    expect(spec.encoders).toHaveLength(4);
    // every prompt, quoted answers at full length, fits Qwen3's 32k context
    expect(() => checkContextBudget(spec, runs, DEFAULT_TEMPLATE, 'eraclitus.yaml')).not.toThrow();
    expect(spec.temperatures[0]).toBe(0.1);
    expect(spec.temperatures.at(-1)).toBe(1.6);
    expect(spec.backend.kind).toBe('openai');
    expect(new Set(prompts.filter((p) => p.false_premise).map((p) => p.id)).size).toBe(3);
  });

  it('protocols: the five arms on a ring and a mean field, cut to two sweeps of 16 agents, run and verify', async () => {
    const dir = tempDir();
    const text = read('examples/protocols.yaml')
      .replace('../datasets/', `${ROOT}/datasets/`)
      .replace('file: beliefs.jsonl', `file: ${ROOT}/examples/beliefs.jsonl`)
      .replace(/^sizes: \[64\]$/m, 'sizes: [16]')
      .replace(/^sweeps: 8$/m, 'sweeps: 2');
    // the cuts must take, or this test silently runs a larger sweep
    expect(text).toMatch(/^sizes: \[16\]\n(.*\n)*sweeps: 2$/m);
    const out = join(dir, 'protocols');
    const r = await cli(['run', writeSpec(dir, text), '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/complete: 80\/80 runs/);
    expect((await cli(['verify', out])).code).toBe(0);
    const arms = await queryRows(`SELECT DISTINCT protocol FROM read_parquet('${out}/events/*.parquet') ORDER BY protocol`);
    expect(arms.map((a) => a.protocol)).toEqual(['belief-board', 'drift-policy', 'glauber', 'isolated', 'ssvp']);
  });

  it('relay: chains of three lengths under glauber and ssvp, cut to eight sweeps, run, verify and report accuracy at the token budget', async () => {
    const spec = parseSweepSpec(read('examples/relay.yaml'), 'relay.yaml');
    expect(spec.geometries.map((g) => g.kind)).toEqual(['chain']);
    expect(spec.sizes).toEqual([4, 8, 16, 32, 64]);
    expect(spec.sweeps).toBe(64);
    expect(spec.backend.kind).toBe('surrogate');
    const dir = tempDir();
    const text = read('examples/relay.yaml')
      .replace('../datasets/', `${ROOT}/datasets/`)
      .replace(/^sizes: \[4, 8, 16, 32, 64\]$/m, 'sizes: [4, 8, 16]')
      .replace(/^trials: 4$/m, 'trials: 2')
      .replace(/^sweeps: 64$/m, 'sweeps: 8');
    // the cuts must take, or this test silently runs the whole example
    expect(text).toMatch(/^sizes: \[4, 8, 16\]\ntemperatures: \[0.7\]\ntrials: 2\nsweeps: 8$/m);
    const out = join(dir, 'relay');
    const r = await cli(['run', writeSpec(dir, text), '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/complete: 24\/24 runs/);
    expect((await cli(['verify', out])).code).toBe(0);
    // a chain: after the initial answers agent 0 reads nobody and agent i reads agent i - 1 only
    const roles = await queryRows(
      `SELECT protocol, role, count(*)::INTEGER AS rows,
         count(*) FILTER (WHERE sweep >= 1 AND NOT CASE WHEN agent = 0 THEN len(neighbours) = 0 ELSE neighbours = [agent - 1] END)::INTEGER AS off_chain
       FROM read_parquet('${out}/events/*.parquet') GROUP BY ALL ORDER BY ALL`,
    );
    const agentRows = 2 * 2 * (4 + 8 + 16) * 9;
    expect(roles.filter((x) => x.role === 'agent')).toEqual([
      { protocol: 'glauber', role: 'agent', rows: agentRows, off_chain: 0 },
      { protocol: 'ssvp', role: 'agent', rows: agentRows, off_chain: 0 },
    ]);
    // ssvp writes a summary per event and reads a diverging neighbour through a merge call; glauber makes none
    expect(roles.filter((x) => x.role !== 'agent').map((x) => [x.protocol, x.role])).toEqual([
      ['ssvp', 'merge'],
      ['ssvp', 'summary'],
    ]);
    const report = join(dir, 'report');
    expect((await cli(['report', out, '--out', report])).code).toBe(0);
    const [header, ...lines] = readFileSync(join(report, 'tables', 'lost-in-propagation-accuracy.csv'), 'utf8')
      .trim()
      .split('\n');
    expect(header).toMatch(/^prompt,protocol,T,N,runs,budget B \(tokens\),/);
    // one row per prompt, protocol and chain length, each over both trials
    expect(lines.map((l) => l.split(',').slice(0, 5).join(',')).sort()).toEqual(
      ['fq117', 'fq367'].flatMap((p) => ['glauber', 'ssvp'].flatMap((a) => [4, 8, 16].map((n) => `${p},${a},0.7,${n},2`))).sort(),
    );
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
