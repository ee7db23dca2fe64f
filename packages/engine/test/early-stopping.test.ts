import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlCentre, measureControl, shouldStop, type SweepControl, type Tag } from '@panta/core';
import { queryRows, readEvents, verifyCorpus } from '@panta/corpus';
import { RHEON6, corpusDiff, panta, sweepKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep, type SweepProgress } from '../src/index.js';

const SPEC = `name: early
dataset: ${RHEON6}
prompts: [fq117, fq367]
geometries: [ring, {kind: meanfield, sample: 8}]
sizes: [144]
temperatures: [0.1, 1.0]
trials: 2
sweeps: 8
seed: 21
protocol: [glauber, drift-policy]
early_stopping: {}
concurrency: 32
`;

/** The control series of a run, recomputed from its shard: what the stop rule saw after each sweep. */
async function controlSeries(file: string, n: number): Promise<SweepControl[]> {
  const emb = new Array<Float32Array>(n);
  const tags = new Array<Tag>(n);
  const series: SweepControl[] = [];
  let mean0: number[] | undefined;
  for await (const b of readEvents([file], { columns: ['event', 'agent', 'tag', 'emb_hashing'], where: "role = 'agent'" })) {
    const vectors = b.columns.emb_hashing as Float32Array;
    for (let r = 0; r < b.rows; r++) {
      const agent = (b.columns.agent as number[])[r];
      emb[agent] = vectors.slice(r * 384, (r + 1) * 384);
      tags[agent] = (b.columns.tag as Tag[])[r];
      if ((b.columns.event as number[])[r] % n === n - 1) {
        mean0 ??= controlCentre(emb);
        series.push(measureControl(emb, tags, mean0));
      }
    }
  }
  return series;
}

/** SPEC swept once, uninterrupted, for the file: its folder, summary and last progress report. */
let uninterruptedRun: Promise<{ out: string; summary: Awaited<ReturnType<typeof runSweep>>; last: SweepProgress | undefined }> | undefined;
function uninterrupted() {
  uninterruptedRun ??= (async () => {
    const dir = tempDir();
    const out = join(dir, 'o');
    let last: SweepProgress | undefined;
    const summary = await runSweep(writeSpec(dir, SPEC), { out, logLevel: 'silent', onProgress: (p) => (last = p) });
    return { out, summary, last };
  })();
  return uninterruptedRun;
}

describe('early stopping', () => {
  it('a run stops after the first sweep where magnetisation and rho have settled; runs.parquet records it and verify accepts it', async () => {
    const { out, summary, last } = await uninterrupted();
    expect(summary.status).toBe('complete');
    // Progress counts to the events the runs will make: a stopped run's remaining sweeps leave the total.
    expect(last!.eventsWritten).toBe(summary.eventsWritten);
    expect(last!.eventsTotal).toBe(summary.eventsWritten);
    const runs = await queryRows(
      `SELECT run_id, n, stopped_early, sweeps_run, calls_saved, events, calls, extra_calls FROM read_parquet('${out}/runs.parquet')`,
    );
    const rule = { window: 2, tolerance: 0.04, rho_tolerance: 0.03, min_sweeps: 2 };
    let stopped = 0;
    for (const r of runs) {
      const series = await controlSeries(join(out, 'events', `${String(r.run_id)}.parquet`), 144);
      let expected = 8;
      for (let t = 0; t < 8; t++) {
        if (shouldStop(series.slice(0, t + 1), rule)) {
          expected = t;
          break;
        }
      }
      expect(Number(r.sweeps_run), String(r.run_id)).toBe(expected);
      expect(series.length).toBe(expected + 1);
      expect(r.stopped_early).toBe(expected < 8);
      expect(Number(r.calls_saved)).toBe((8 - expected) * 144);
      expect(Number(r.events)).toBe((expected + 1) * 144);
      expect(Number(r.calls)).toBe(Number(r.events) + Number(r.extra_calls));
      if (expected < 8) stopped++;
    }
    // Low temperature settles within a few sweeps; not every run does.
    expect(stopped).toBeGreaterThan(0);
    expect(stopped).toBeLessThan(runs.length);
    const params = await queryRows(
      `SELECT run_id, max(sweep)::INTEGER AS last, list(n_correct / (n_correct + n_hallucinated + n_not_known + n_judge_failure) ORDER BY sweep) AS acc FROM read_parquet('${out}/order_params.parquet') WHERE encoder = 'hashing' GROUP BY run_id`,
    );
    const focus = await queryRows(`SELECT run_id, focus FROM read_parquet('${out}/runs.parquet')`);
    for (const p of params) {
      expect(p.last).toBe(Number(runs.find((r) => r.run_id === p.run_id)!.sweeps_run));
      // FOCUS(t) = accuracy(t) - accuracy(t - 1), accuracy = #correct / #agents (a non-answer is wrong), one per sweep the run made.
      const acc = (p.acc as number[]).map(Number);
      const want = acc.slice(1).map((a, t) => a - acc[t]);
      const got = (focus.find((f) => f.run_id === p.run_id)!.focus as (number | null)[]).map((x) => (x === null ? null : Number(x)));
      expect(got.length).toBe(want.length);
      got.forEach((g, t) => expect(g).toBeCloseTo(want[t], 12));
    }
    const verify = await verifyCorpus(out);
    expect(verify.problems).toEqual([]);
    expect(verify.ok).toBe(true);
    // verify recomputes the rule: under a stricter tolerance (in a copy) these runs stopped where it does not hold.
    const edited = join(tempDir(), 'strict');
    cpSync(out, edited, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(edited, 'manifest.json'), 'utf8'));
    manifest.spec.early_stopping.tolerance = 0.001;
    writeFileSync(join(edited, 'manifest.json'), JSON.stringify(manifest));
    const strict = await verifyCorpus(edited);
    expect(strict.ok).toBe(false);
    expect(strict.problems.join('\n')).toMatch(/stopped after sweep \d+, where the early-stopping rule does not hold/);
  });

  it('killed mid-run (SIGKILL) and resumed, sweep boundaries and their calls come out as in an uninterrupted run', async () => {
    const dir = tempDir();
    const spec = writeSpec(dir, SPEC);
    const killed = join(dir, 'killed');
    const journals = join(killed, '.state', 'control');
    await sweepKilledWhen(
      spec,
      killed,
      61,
      () => existsSync(journals) && readdirSync(journals).length >= 4 && existsSync(join(killed, 'events', '.parts')),
    );
    expect(existsSync(join(killed, 'manifest.json'))).toBe(true);
    // Killed mid-run: boundaries journalled, some runs unfinished.
    expect(readdirSync(join(killed, 'events')).filter((f) => f.endsWith('.parquet')).length).toBeLessThan(16);
    const resumed = panta(['run', spec, '--out', killed]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const straight = (await uninterrupted()).out;
    expect(await corpusDiff(killed, straight)).toEqual({ extra: 0, missing: 0 });
    const [moderators] = await queryRows(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${killed}/events/*.parquet') WHERE role = 'moderator'`,
    );
    expect(moderators!.n).toBeGreaterThan(0);
    const runs = (out: string) =>
      queryRows(`SELECT run_id, sweeps_run, calls_saved, extra_calls FROM read_parquet('${out}/runs.parquet') ORDER BY run_id`);
    expect(await runs(killed)).toEqual(await runs(straight));
  });
});
