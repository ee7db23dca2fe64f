import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backendSchema, InputError, shardRuns, shardWeigherFor } from '@panta/core';
import { queryRows, verifyCorpus, type Manifest } from '@panta/corpus';
import { batchInvariant, loadSweep, mergeParts, runSweep } from '../src/index.js';
import { RHEON6, corpusDiff, tempDir, writeSpec } from '../../../test/helpers.js';

// Two sizes, three protocols (ssvp's merge calls, drift-policy's judge and moderator calls and journals).
const SPEC = `name: shards
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d]
sizes: [16, 36]
temperatures: [0.6]
trials: 2
sweeps: 3
seed: 11
protocol: [glauber, ssvp, drift-policy]
ssvp: {tau: 0.2}
`;

/** Rows of `file` in corpus a and not in b, and the reverse, on every column but `exclude` (DuckDB, EXCEPT ALL). */
async function tableDiff(
  a: string,
  b: string,
  file: string,
  exclude: string[] = [],
): Promise<{ extra: number; missing: number; rows: number }> {
  const rows = (out: string) =>
    `SELECT * ${exclude.length ? `EXCLUDE (${exclude.join(', ')})` : ''} FROM read_parquet('${join(out, file)}')`;
  const [d] = await queryRows(
    `SELECT (SELECT count(*) FROM (${rows(a)} EXCEPT ALL ${rows(b)}))::INTEGER AS extra, (SELECT count(*) FROM (${rows(b)} EXCEPT ALL ${rows(a)}))::INTEGER AS missing, (SELECT count(*) FROM ${rows(a).replace(/^SELECT .* FROM /, '')})::INTEGER AS rows`,
  );
  return { extra: Number(d!.extra), missing: Number(d!.missing), rows: Number(d!.rows) };
}

const manifestOf = (out: string) => JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Manifest;

describe('job arrays: panta run --shard I/N and panta merge', () => {
  it('three parts (one stopped and resumed) merged give the corpus of one run: events, runs, whitening, order parameters and manifest, timings aside; it verifies', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const whole = join(dir, 'whole');
    expect((await runSweep(spec, { out: whole, logLevel: 'silent' })).status).toBe('complete');
    const parts = [1, 2, 3].map((i) => join(dir, 'parts', `part-${i}`));
    // Part 2 is stopped part-way (Ctrl-C, or a job array task preempted) and resumed by the same command.
    const interrupt = new AbortController();
    const stopped = await runSweep(spec, {
      out: parts[1],
      shard: { index: 2, count: 3 },
      logLevel: 'silent',
      partRows: 64,
      signal: interrupt.signal,
      onProgress: (p) => {
        if (p.eventsWritten > 600) interrupt.abort();
      },
    });
    expect(stopped.status).toBe('stopped');
    for (let i = 0; i < 3; i++) {
      const s = await runSweep(spec, { out: parts[i], shard: { index: i + 1, count: 3 }, logLevel: 'silent', concurrency: 7 * (i + 1) });
      expect(s.status).toBe('complete');
      expect(s.final).toEqual([]);
      // A part has its events and no measurement: the whitening pools every part's t = 0 answers.
      expect(existsSync(join(parts[i], 'order_params.parquet'))).toBe(false);
      expect(existsSync(join(parts[i], 'whitening'))).toBe(false);
      const m = manifestOf(parts[i]);
      expect(m.shard).toEqual({ index: i + 1, count: 3, measured_by: 'panta merge', policy: 'gpu-time' });
      expect(m.fingerprint).toBe(manifestOf(whole).fingerprint);
      const verified = await verifyCorpus(parts[i]);
      expect(verified.problems).toEqual([]);
      expect(verified.checked).toMatch(new RegExp(`^part ${i + 1} of 3: `));
    }
    // Every run in exactly one part.
    const held = parts.flatMap((p) => readdirSync(join(p, 'events')).filter((f) => f.endsWith('.parquet')));
    expect(new Set(held).size).toBe(held.length);
    expect(held.sort()).toEqual(
      readdirSync(join(whole, 'events'))
        .filter((f) => f.endsWith('.parquet'))
        .sort(),
    );

    const merged = join(dir, 'merged');
    // In any order.
    const summary = await mergeParts(merged, [parts[2], parts[0], parts[1]]);
    expect(summary.status).toBe('complete');
    expect(summary.out).toBe(merged);
    expect(readdirSync(dir).filter((f) => f.includes('merging'))).toEqual([]);

    expect(await corpusDiff(whole, merged)).toEqual({ extra: 0, missing: 0 });
    const runs = await tableDiff(whole, merged, 'runs.parquet', ['wall_ms']);
    expect(runs).toEqual({ extra: 0, missing: 0, rows: 48 });
    const params = await tableDiff(whole, merged, 'order_params.parquet');
    expect(params.rows).toBeGreaterThan(0);
    expect(params).toMatchObject({ extra: 0, missing: 0 });
    const whitenings = readdirSync(join(whole, 'whitening')).sort();
    expect(readdirSync(join(merged, 'whitening')).sort()).toEqual(whitenings);
    for (const w of whitenings) expect(await tableDiff(whole, merged, join('whitening', w)), w).toMatchObject({ extra: 0, missing: 0 });

    const a = manifestOf(whole);
    const b = manifestOf(merged);
    // Parts ran at other concurrencies: an execution setting, which the spec copy records.
    // The digest covers what differs (times, files, spec).
    const timeless = ({ started_at: _s, updated_at: _u, files: _f, digest: _d, spec, ...rest }: Manifest) => ({
      ...rest,
      spec: { ...(spec as object), concurrency: 0 },
    });
    expect(timeless(b)).toEqual(timeless(a));
    expect(b.shard).toBeUndefined();
    expect(b.backend.batch_invariant).toBe(true);
    expect(Object.keys(b.files).sort()).toEqual(Object.keys(a.files).sort());
    // The measurement is byte for byte the single run's.
    for (const f of Object.keys(a.files).filter((f) => f.startsWith('whitening/') || f === 'order_params.parquet'))
      expect(b.files[f], f).toEqual(a.files[f]);

    const verified = await verifyCorpus(merged);
    expect(verified.problems).toEqual([]);
    expect(verified.ok).toBe(true);
  });

  it('parts are dealt by planned GPU time, a pure function of the plan: balanced whatever the grid order, each run once', () => {
    const dir = tempDir();
    // Sizes alternate 16 and 1024 in grid order: a round robin over two parts would give one part every large run.
    const file = writeSpec(
      dir,
      `name: balance\ndataset: ${RHEON6}\ngeometries: [ring, meanfield]\nsizes: [16, 256]\ntemperatures: [0.1, 0.5, 0.9, 1.3]\ntrials: 3\nseed: 1\n`,
    );
    const sweep = loadSweep(file, { out: join(dir, 'o') });
    const all = sweep.runs;
    const weigh = shardWeigherFor('gpu-time', sweep.spec);
    for (const count of [1, 2, 3, 7, all.length, all.length + 5]) {
      const slices = Array.from({ length: count }, (_, i) => shardRuns(all, { index: i + 1, count }, weigh));
      const ids = slices.flat().map((r) => r.runId);
      expect(new Set(ids).size).toBe(all.length);
      expect(ids.length).toBe(all.length);
      const loads = slices.map((s) => s.reduce((t, r) => t + weigh(r), 0));
      const heaviest = Math.max(...all.map(weigh));
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(heaviest);
      // Grid order is kept within a part, and a part's process loads exactly its slice.
      for (const s of slices) expect(s.map((r) => all.indexOf(r))).toEqual(s.map((r) => all.indexOf(r)).sort((x, y) => x - y));
      if (count <= all.length)
        expect(loadSweep(file, { out: join(dir, 'o'), shard: { index: count, count } }).runs.map((r) => r.runId)).toEqual(
          slices[count - 1].map((r) => r.runId),
        );
    }
    // Two parts: each holds about half the GPU time.
    const two = [1, 2].map((index) => shardRuns(all, { index, count: 2 }, weigh).reduce((t, r) => t + weigh(r), 0));
    expect(Math.max(...two) / Math.min(...two)).toBeLessThan(1.05);
  });

  it('a part dealt by events (Panta before gpu-time) is refused on resume in one line; verify still checks it by events', async () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: old\ndataset: ${RHEON6}\nprompts: [fq117]\ngeometries: [ring, meanfield]\nsizes: [8, 24]\ntemperatures: [0.5]\nsweeps: 1\nseed: 3\n`,
    );
    const out = join(dir, 'p1');
    expect((await runSweep(spec, { out, shard: { index: 1, count: 2 }, logLevel: 'silent' })).status).toBe('complete');
    const file = join(out, 'manifest.json');
    const m = manifestOf(out);
    // The old deal: by events, recorded without a policy. Rewrite the part as that version would have left it.
    const sweep = loadSweep(spec);
    const old = shardRuns(sweep.runs, { index: 1, count: 2 });
    expect(old.map((r) => r.runId)).not.toEqual(loadSweep(spec, { shard: { index: 1, count: 2 } }).runs.map((r) => r.runId));
    delete m.shard!.policy;
    writeFileSync(file, JSON.stringify(m));
    const resumed = runSweep(spec, { out, shard: { index: 1, count: 2 }, logLevel: 'silent' });
    await expect(resumed).rejects.toThrow(InputError);
    await expect(resumed).rejects.toThrow(
      /holds part 1 of 2 of a job array whose runs were dealt by events; this Panta deals them by gpu-time/,
    );
    // verify plans the part as its manifest says it was dealt: by events, which are not the runs on disk.
    const verified = await verifyCorpus(out);
    expect(verified.ok).toBe(false);
    const absent = old.filter((r) => !existsSync(join(out, 'events', `${r.runId}.parquet`)));
    expect(absent.length).toBeGreaterThan(0);
    expect(verified.problems.join('\n')).toContain(absent[0].runId);
  });

  it("the default --out of a part is the spec's out with .part-I-of-N; the fingerprint is the whole sweep's, batch_invariant outside it", () => {
    const dir = tempDir();
    const spec = writeSpec(
      dir,
      `name: suffix\ndataset: ${RHEON6}\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nseed: 1\nout: ${join(dir, 'runs', 'suffix')}\n`,
    );
    const part = loadSweep(spec, { shard: { index: 2, count: 4 } });
    expect(part.out).toBe(join(dir, 'runs', 'suffix.part-2-of-4'));
    expect(part.fingerprint).toBe(loadSweep(spec).fingerprint);
    const served = (flag: string) =>
      writeSpec(
        dir,
        `name: served\ndataset: ${RHEON6}\ngeometries: [ring]\nsizes: [16]\ntemperatures: [0.5]\nseed: 1\nbackend: {kind: openai, base_url: "http://127.0.0.1:9/v1", model: m${flag}}\n`,
        `served${flag.length}.yaml`,
      );
    expect(loadSweep(served(', batch_invariant: true')).fingerprint).toBe(loadSweep(served('')).fingerprint);
    // The manifest's word: the spec's, true for the surrogate (a function of each event's seed), else unknown.
    const openai = { kind: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'm' };
    expect(batchInvariant(backendSchema.parse(openai))).toBeNull();
    expect(batchInvariant(backendSchema.parse({ ...openai, batch_invariant: false }))).toBe(false);
    expect(batchInvariant(backendSchema.parse({ ...openai, batch_invariant: true }))).toBe(true);
    expect(batchInvariant(backendSchema.parse({ kind: 'surrogate' }))).toBe(true);
  });
});
