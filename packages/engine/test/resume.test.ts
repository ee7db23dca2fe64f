import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows, verifyCorpus } from '@panta/corpus';
import { RHEON6, onDisk, panta, sweepKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

const SPEC = `name: resume
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, torus2d, {kind: meanfield, sample: 6}]
sizes: [256]
temperatures: [0.3, 1.1]
sweeps: 4
seed: 11
concurrency: 16
`;

const ALL_BUT_TIMINGS = `* EXCLUDE (latency_ms, created_at)`;

/** The uninterrupted sweep of SPEC that an interrupted and resumed one must equal: run once for the file. */
let straightRun: Promise<string> | undefined;
function straightCorpus(): Promise<string> {
  straightRun ??= (async () => {
    const dir = tempDir();
    const out = join(dir, 'straight');
    expect((await runSweep(writeSpec(dir, SPEC), { out })).status).toBe('complete');
    return out;
  })();
  return straightRun;
}

describe('resume', () => {
  it('a sweep killed with SIGKILL mid-run resumes to the corpus of an uninterrupted run', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const killed = join(dir, 'killed');
    // Kill once some runs are finalized and some are part-way (durable parts on disk).
    let seen = { parts: 0, shards: 0 };
    const partWay = () => {
      seen = onDisk(killed);
      return seen.shards >= 2 && seen.parts >= 2;
    };
    await sweepKilledWhen(spec, killed, 97, partWay, 20);
    expect(seen.shards).toBeGreaterThanOrEqual(2);
    expect(seen.parts).toBeGreaterThanOrEqual(2);
    expect(onDisk(killed).shards).toBeLessThan(12);

    const resumed = panta(['run', spec, '--out', killed]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/complete: 12\/12 runs/);
    expect((await verifyCorpus(killed)).problems).toEqual([]);

    const straight = await straightCorpus();
    const rows = (out: string) =>
      queryRows(`SELECT ${ALL_BUT_TIMINGS} FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`);
    const [a, b] = [await rows(killed), await rows(straight)];
    expect(a.length).toBe(2 * 3 * 2 * 256 * 5);
    expect(a).toEqual(b);
    const params = (out: string) => queryRows(`SELECT * FROM read_parquet('${out}/order_params.parquet') ORDER BY run_id, sweep, encoder`);
    expect(await params(killed)).toEqual(await params(straight));
  });

  it('refuses to resume into a corpus of another sweep', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    // A corpus of the same grid on 16 agents (384 events, not 6,144): the refusal reads only its identity.
    const small = SPEC.replace('sizes: [256]', 'sizes: [16]');
    expect((await runSweep(writeSpec(dir, small.replace('sweeps: 4', 'sweeps: 1')), { out })).status).toBe('complete');
    const other = panta(['run', writeSpec(dir, small.replace('sweeps: 4', 'sweeps: 2'), 'other.yaml'), '--out', out]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/other\.yaml: out: .* holds a corpus of a different sweep; fix: choose another --out/);
  });

  it('a sweep stopped on request (Ctrl-C) finishes its calls in flight, keeps what it wrote, and resumes to the same corpus', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const stopped = join(dir, 'stopped');
    const interrupt = new AbortController();
    const first = await runSweep(spec, {
      out: stopped,
      partRows: 200,
      signal: interrupt.signal,
      onProgress: (p) => {
        if (p.eventsWritten > 3000) interrupt.abort();
      },
    });
    expect(first.status).toBe('stopped');
    const saved = onDisk(stopped);
    expect(saved.shards + saved.parts).toBeGreaterThan(0);
    expect(saved.shards).toBeLessThan(12);
    const second = await runSweep(spec, { out: stopped });
    expect(second.status).toBe('complete');
    const straight = await straightCorpus();
    const rows = (out: string) =>
      queryRows(`SELECT ${ALL_BUT_TIMINGS} FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`);
    expect(await rows(stopped)).toEqual(await rows(straight));
  });
});
