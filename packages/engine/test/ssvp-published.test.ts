import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_MERGE_INSTRUCTION, SUMMARY_INSTRUCTION, parseDataset } from '@panta/core';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { startSurrogateServer } from '@panta/llm';
import { RHEON6, onDisk, panta, servedColumns, sweepKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

// One agent in four holds an injected wrong belief (the paper's injected mismatch).
const BELIEFS = '{"id": "wrong-97", "belief": "97"}\n';

const SPEC = (extra = '') => `name: ssvp-published
dataset: ${RHEON6}
prompts: [fq367]
geometries: [ring]
sizes: [8]
temperatures: [0.7]
trials: 2
sweeps: 3
seed: 21
protocol: [no-sync, ssvp, full-broadcast]
ssvp: {tau: 0.2}
population: {file: beliefs.jsonl, assign: fraction, fraction: 0.25}
${extra}`;

type Row = Record<string, unknown> & { run_id: string; event: number; role: string; protocol: string; divergence: number | null };

async function rows(out: string): Promise<Row[]> {
  const all = await queryRows(
    `SELECT * EXCLUDE (latency_ms, created_at, emb_hashing) FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event, role <> 'summary', role <> 'merge', seed`,
  );
  return all.map((r) => ({ ...r, event: Number(r.event), neighbours: [...(r.neighbours as number[])].map(Number) }) as unknown as Row);
}

/** SPEC() swept once for the file at concurrency 64: the twin of the concurrency-1 sweep and of the served one. */
let wide: Promise<string> | undefined;
function concurrency64(): Promise<string> {
  wide ??= (async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const out = join(dir, 'c64');
    expect((await runSweep(writeSpec(dir, SPEC()), { out, concurrency: 64, logLevel: 'silent' })).status).toBe('complete');
    return out;
  })();
  return wide;
}

describe('SSVP as published, for populations', () => {
  it('no-sync, ssvp and full-broadcast: a summary per event, merges only for pairs above tau, full broadcast reads everyone; verify accepts it and concurrency 1 and 64 write the same rows', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const spec = writeSpec(dir, SPEC());
    const a = await runSweep(spec, { out: join(dir, 'c1'), concurrency: 1, partRows: 17, logLevel: 'silent' });
    expect(a.status).toBe('complete');
    const all = await rows(join(dir, 'c1'));
    expect(await rows(await concurrency64())).toEqual(all);
    expect((await verifyCorpus(join(dir, 'c1'))).problems).toEqual([]);

    const of = (protocol: string, role: string) => all.filter((r) => r.protocol === protocol && r.role === role);
    for (const p of ['no-sync', 'ssvp', 'full-broadcast']) {
      // (sweeps + 1) * N events per run, 2 runs: a summary before every answer.
      expect(of(p, 'agent')).toHaveLength(64);
      expect(of(p, 'summary')).toHaveLength(64);
      // The gate's CDS is measured from sweep 1 on, in every arm.
      expect(of(p, 'agent').filter((r) => Number(r.sweep) >= 1 && r.divergence === null)).toEqual([]);
    }
    expect(of('no-sync', 'merge')).toHaveLength(0);
    expect(of('full-broadcast', 'merge')).toHaveLength(0);
    const merges = of('ssvp', 'merge');
    expect(merges.length).toBeGreaterThan(0);
    for (const m of merges) expect(m.divergence!).toBeGreaterThan(0.2);
    // Every ssvp answer whose largest pair CDS exceeds tau has its merges; none below.
    for (const r of of('ssvp', 'agent')) {
      const n = merges.filter((m) => m.run_id === r.run_id && m.event === r.event).length;
      expect(n > 0, `${r.run_id} event ${r.event}`).toBe(r.divergence !== null && r.divergence > 0.2);
    }
    // The injected belief surfaces: the first merges come at sweep 1, the first exchange.
    expect(Math.min(...merges.map((m) => Number(m.sweep)))).toBe(1);
    expect(merges.some((m) => String(m.response).startsWith('Contradiction with agent'))).toBe(true);
    // full-broadcast reads every other agent; no-sync its ring neighbours.
    for (const r of of('full-broadcast', 'agent').filter((x) => Number(x.sweep) >= 1)) expect((r.neighbours as number[]).length).toBe(7);
    for (const r of of('no-sync', 'agent').filter((x) => Number(x.sweep) >= 1)) expect((r.neighbours as number[]).length).toBe(2);

    // calibrate-tau on the no-sync arm prints a tau and its table.
    const cal = panta(['calibrate-tau', join(dir, 'c1')]);
    expect(cal.code).toBe(0);
    expect(cal.stdout).toMatch(/arm no-sync, 48 updates of 2 runs/);
    expect(cal.stdout).toMatch(/^tau = \d\.\d\d: the lowest tau/m);
  }, 240_000);

  it('a sweep killed with SIGKILL mid-run resumes to the same rows: versions (answer and summary) are read back from the parts', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const spec = writeSpec(dir, SPEC('concurrency: 8\n').replace('sizes: [8]', 'sizes: [64]').replace('sweeps: 3', 'sweeps: 4'));
    const killed = join(dir, 'killed');
    // Kill once a run is finalized and others are part-way (durable parts on disk).
    let seen = { parts: 0, shards: 0 };
    const partWay = () => {
      seen = onDisk(killed);
      return seen.shards >= 1 && seen.parts >= 3;
    };
    await sweepKilledWhen(spec, killed, 13, partWay);
    expect(seen.parts).toBeGreaterThanOrEqual(3);
    expect(onDisk(killed).shards).toBeLessThan(6);
    const resumed = panta(['run', spec, '--out', killed]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await verifyCorpus(killed)).problems).toEqual([]);
    const straight = join(dir, 'straight');
    expect((await runSweep(spec, { out: straight, logLevel: 'silent' })).status).toBe('complete');
    expect(await rows(killed)).toEqual(await rows(straight));
  }, 240_000);

  it('the prompts are the paper’s, and serve-surrogate answers them as the in-process surrogate does', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'beliefs.jsonl'), BELIEFS);
    const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6).filter((p) => p.id === 'fq367');
    const server = await startSurrogateServer({ prompts });
    try {
      const served = writeSpec(
        dir,
        SPEC(`backend: {kind: openai, base_url: "${server.url}/v1", model: surrogate-potts-v1, max_in_flight: 16}\n`),
        'served.yaml',
      );
      expect((await runSweep(served, { out: join(dir, 'served'), logLevel: 'silent' })).status).toBe('complete');
      const [x, y] = [await servedColumns(join(dir, 'served')), await servedColumns(await concurrency64())];
      expect(x.filter((r) => r.role === 'merge').length).toBeGreaterThan(0);
      expect(x).toEqual(y);
    } finally {
      await server.close();
    }
  }, 240_000);

  it('renders the ContextSummary and ContextMerge instructions verbatim', () => {
    expect(SUMMARY_INSTRUCTION).toBe('Summarize your current spatial context, task history, and active goals in 3 sentences or fewer.');
    expect(CONTEXT_MERGE_INSTRUCTION).toBe(
      'Identify any beliefs you hold that directly contradict the incoming context. State which source is more likely authoritative given the timestamps and information quality involved.',
    );
  });
});
