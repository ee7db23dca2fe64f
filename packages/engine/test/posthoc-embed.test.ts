import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '@panta/core';
import { posthocJournalPath, queryRows, readPosthocJournal, verifyCorpus } from '@panta/corpus';
import { embedCorpus, runSweep } from '../src/index.js';
import { RHEON6, ROOT, fixtureKilledWhen, pantaAsync as panta, tempDir, writeSpec } from '../../../test/helpers.js';

const TINY = join(ROOT, 'packages', 'embed', 'test', 'fixtures', 'tiny-encoder');

const spec = (encoders: string, protocol = 'glauber') => `name: posthoc-embed
protocol: ${protocol}
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16]
temperatures: [0.4, 1.4]
trials: 2
sweeps: 3
seed: 4
encoders:
${encoders}`;

const HASHING = '  - {name: hashing, kind: hashing, dim: 384}\n';
const MINI = '  - {name: mini, kind: hashing, dim: 128}\n';
const TINY_ENC = `  - {name: tiny, kind: onnx, path: ${TINY}, max_batch: 16}\n`;

/** Every table of a corpus as DuckDB reads it back, timings left out (latency, creation time, wall time). */
async function tables(out: string): Promise<Record<string, unknown>> {
  const events = `read_parquet('${out}/events/*.parquet')`;
  const whitening: Record<string, unknown> = {};
  for (const f of readdirSync(join(out, 'whitening')).sort())
    whitening[f] = await queryRows(`SELECT * FROM read_parquet('${join(out, 'whitening', f)}')`);
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { encoders: unknown; status: string };
  return {
    columns: (await queryRows(`DESCRIBE SELECT * FROM ${events}`)).map((r) => `${String(r.column_name)} ${String(r.column_type)}`),
    events: await queryRows(`SELECT * EXCLUDE (latency_ms, created_at) FROM ${events} ORDER BY run_id, event, role`),
    orderParams: await queryRows(`SELECT * FROM read_parquet('${out}/order_params.parquet')`),
    runs: await queryRows(`SELECT * EXCLUDE (wall_ms) FROM read_parquet('${out}/runs.parquet')`),
    whitening,
    encoders: manifest.encoders,
    status: manifest.status,
  };
}

/**
 * The corpus of spec(HASHING), swept once for the file: a test that needs it (to embed into, or as the
 * uninterrupted twin or the whitening source) takes its own copy, as a second sweep of the same spec would give.
 */
let hashed: Promise<string> | undefined;
async function hashingCorpus(target: string): Promise<string> {
  hashed ??= (async () => {
    const dir = tempDir();
    const out = join(dir, 'hashing');
    expect((await runSweep(writeSpec(dir, spec(HASHING)), { out })).status).toBe('complete');
    return out;
  })();
  cpSync(await hashed, target, { recursive: true });
  return target;
}

/** `panta verify`'s report (verifyCorpus, in-process): its problems, none when the corpus verifies. */
async function problems(out: string): Promise<string[]> {
  return (await verifyCorpus(out)).problems;
}

describe('panta embed: a new encoder over a finished corpus', () => {
  it('adds a hashing encoder of another dimension and the tiny ONNX model: columns, whitening and order parameters equal a sweep that had them from the start, and verify passes', async () => {
    const dir = tempDir();
    const out = join(dir, 'posthoc');
    const straight = join(dir, 'straight');
    // ssvp's merge calls are rows without an embedding: NULL in a new column as in a sweep's.
    expect((await runSweep(writeSpec(dir, spec(HASHING, '[glauber, ssvp]'), 'one.yaml'), { out })).status).toBe('complete');
    expect(
      (await runSweep(writeSpec(dir, spec(HASHING + MINI + TINY_ENC, '[glauber, ssvp]'), 'three.yaml'), { out: straight })).status,
    ).toBe('complete');
    const [merges] = await queryRows(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${straight}/events/*.parquet') WHERE role = 'merge' AND emb_mini IS NULL`,
    );
    expect(merges.n).toBeGreaterThan(0);

    const mini = await embedCorpus(out, { name: 'mini', kind: 'hashing', dim: 128 });
    expect(mini).toMatchObject({ status: 'complete', shardsRewritten: 32, shardsTotal: 32, answers: 32 * 16 * 4 });
    expect(await problems(out)).toEqual([]);
    const tiny = await embedCorpus(out, { name: 'tiny', kind: 'onnx', path: TINY, max_batch: 16, max_wait_ms: 2, device: 'cpu' });
    expect(tiny.status).toBe('complete');

    const [a, b] = [await tables(out), await tables(straight)];
    expect(a.columns).toEqual(b.columns);
    expect((a.columns as string[]).slice(-4)).toEqual([
      'emb_hashing FLOAT[]',
      'emb_mini FLOAT[]',
      'emb_tiny FLOAT[]',
      'created_at TIMESTAMP',
    ]);
    expect(a.events).toEqual(b.events);
    expect(a.orderParams).toEqual(b.orderParams);
    expect((a.orderParams as { encoder: string }[]).filter((r) => r.encoder === 'tiny')).toHaveLength(32 * 4);
    expect(a.whitening).toEqual(b.whitening);
    expect(Object.keys(a.whitening as object)).toContain('fq367__mini.parquet');
    expect(a.runs).toEqual(b.runs);
    expect(a.encoders).toEqual(b.encoders);
    const verified = await panta(['verify', out]);
    expect(verified.stdout).toMatch(/^ok:/m);
    expect(verified.code).toBe(0);
    expect(existsSync(posthocJournalPath(out, 'embed', 'tiny'))).toBe(false);
  }, 180_000);

  it("a name the corpus has is refused (InputError, nothing rewritten) unless --replace, and never one of the sweep's own encoders", async () => {
    const dir = tempDir();
    const out = await hashingCorpus(join(dir, 'out'));
    const manifest = () => readFileSync(join(out, 'manifest.json'), 'utf8');
    const first = manifest();
    await expect(embedCorpus(out, { name: 'hashing', kind: 'hashing', dim: 64 }, { replace: true })).rejects.toThrow(InputError);
    expect(manifest()).toBe(first);
    await embedCorpus(out, { name: 'mini', kind: 'hashing', dim: 64 });
    const second = manifest();
    const before = await queryRows(`SELECT emb_mini FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`);
    await expect(embedCorpus(out, { name: 'mini', kind: 'hashing', dim: 32 })).rejects.toThrow(
      /has an encoder named mini already.*--replace/,
    );
    expect(await queryRows(`SELECT emb_mini FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`)).toEqual(before);
    expect(manifest()).toBe(second);
    // --replace recomputes the column at the new dimension, and the corpus verifies.
    await embedCorpus(out, { name: 'mini', kind: 'hashing', dim: 32 }, { replace: true });
    const [row] = await queryRows(
      `SELECT min(len(emb_mini)) AS lo, max(len(emb_mini)) AS hi FROM read_parquet('${out}/events/*.parquet') WHERE role = 'agent'`,
    );
    expect(row).toEqual({ lo: 32, hi: 32 });
    expect(await problems(out)).toEqual([]);
    expect(JSON.parse(manifest()).encoders.map((e: { name: string; dim: number }) => `${e.name}:${e.dim}`)).toEqual([
      'hashing:384',
      'mini:32',
    ]);
  }, 180_000);

  it('killed (SIGKILL) mid-way, a rerun picks up at the first shard not done and gives the same corpus', async () => {
    const dir = tempDir();
    const out = await hashingCorpus(join(dir, 'killed'));
    const straight = await hashingCorpus(join(dir, 'straight'));
    const encoder = { name: 'mini', kind: 'hashing', dim: 128 };
    const journal = posthocJournalPath(out, 'embed', 'mini');
    const pass = ['embed', out, JSON.stringify(encoder), '150'];
    const killed = await fixtureKilledWhen('posthoc-pass.mjs', pass, () => (readPosthocJournal(journal)?.done.size ?? 0) >= 3, 5);
    expect(killed.exitedFirst).toBe(false);
    const done = readPosthocJournal(journal)?.done.size ?? 0;
    expect(done).toBeGreaterThanOrEqual(3);
    expect(done).toBeLessThan(16);
    // The corpus is mid-pass: verify says so.
    const midway = await verifyCorpus(out);
    expect(midway.ok).toBe(false);
    expect(midway.problems.join('\n')).toMatch(/panta embed of mini did not finish/);

    const resumed = await embedCorpus(out, { name: 'mini', kind: 'hashing', dim: 128 });
    expect(resumed.status).toBe('complete');
    expect(resumed.shardsRewritten).toBe(16 - done);
    expect(await problems(out)).toEqual([]);
    await embedCorpus(straight, { name: 'mini', kind: 'hashing', dim: 128 });
    const [a, b] = [await tables(out), await tables(straight)];
    expect(a).toEqual(b);
  }, 180_000);

  it("a corpus whitened from another corpus (whitening: {from}) takes a new encoder once the source has it, in the source's whitening", async () => {
    const dir = tempDir();
    const source = await hashingCorpus(join(dir, 'source'));
    const out = join(dir, 'out');
    const other = spec(HASHING).replace('seed: 4', 'seed: 5\nwhitening: {from: source}');
    expect((await runSweep(writeSpec(dir, other, 'other.yaml'), { out })).status).toBe('complete');
    const mini = { name: 'mini', kind: 'hashing', dim: 128 } as const;
    await expect(embedCorpus(out, mini)).rejects.toThrow(/whitening\.from: .*has no encoder "mini"/);
    expect(readPosthocJournal(posthocJournalPath(out, 'embed', 'mini'))).toBeNull();
    await embedCorpus(source, mini);
    await embedCorpus(out, mini);
    for (const p of ['fq117', 'fq367'])
      expect(readFileSync(join(out, 'whitening', `${p}__mini.parquet`))).toEqual(
        readFileSync(join(source, 'whitening', `${p}__mini.parquet`)),
      );
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(Object.keys(manifest.whitening.files).sort()).toEqual(['fq117__hashing', 'fq117__mini', 'fq367__hashing', 'fq367__mini']);
    expect(await problems(out)).toEqual([]);
  }, 180_000);
});
