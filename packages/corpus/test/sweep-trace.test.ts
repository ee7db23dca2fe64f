import { rename } from 'node:fs/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EncoderColumn, EventRow, Tag } from '@panta/core';
import { EventShardWriter, SweepTrace, closeDuckDB, measureSweep, shardPath, type MeasuredRun, type SweepMeasurement } from '@panta/corpus';
import { makeRow, tempDir } from './helpers.js';

const ENCODERS: EncoderColumn[] = [
  { name: 'wide', dim: 24 },
  { name: 'narrow', dim: 6 },
];
const N = 7;
const SWEEPS = 5;
const TAGS: Tag[] = ['correct', 'hallucinated', 'not_known', 'judge_failure'];

/** Deterministic integers, so each run draws its agents and answers from a small shared pool. */
function lcg(seed: number): (k: number) => number {
  let s = seed >>> 0;
  return (k) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % k;
  };
}

/** A pool of answers per prompt: equal answers embed equally, so vectors repeat across events and runs. */
function pool(prompt: string): Record<string, Float32Array>[] {
  const r = lcg(prompt.length * 977 + prompt.charCodeAt(1));
  return Array.from({ length: 9 }, () =>
    Object.fromEntries(ENCODERS.map((e) => [e.name, Float32Array.from({ length: e.dim }, () => r(2001) / 1000 - 1)])),
  );
}

const RUNS: MeasuredRun[] = ['q1', 'q2'].flatMap((promptId) =>
  [0, 1, 2].map((t) => ({
    runId: `${promptId}-ring-n${N}-T0.5-glauber-t${t}`,
    configId: `${promptId}-ring-n${N}-T0.5-glauber`,
    n: N,
    promptId,
  })),
);

/** One run's answer rows: every agent once in sweep 0, then random agents (with replacement, as Glauber picks). */
function runRows(run: MeasuredRun): EventRow[] {
  const answers = pool(run.promptId);
  const r = lcg(run.runId.length * 31 + Number(run.runId.at(-1)));
  return Array.from({ length: N * (SWEEPS + 1) }, (_, e) => {
    const pick = r(answers.length);
    return {
      ...makeRow(run.runId, e, ENCODERS),
      prompt_id: run.promptId,
      sweep: Math.floor(e / N),
      agent: e < N ? e : r(N),
      tag: TAGS[(pick + r(2)) % 4],
      embeddings: answers[pick],
    };
  });
}

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  for (const run of RUNS) {
    const writer = await EventShardWriter.open({ dir, runId: run.runId, encoders: ENCODERS, partRows: 10 });
    for (const row of runRows(run)) await writer.append(row);
    await writer.finalize();
  }
});
afterEach(async () => {
  await cleanup();
});
afterAll(async () => {
  await closeDuckDB();
});

/** Records the given runs into a trace, as their collectors would, and seals them. */
function traced(runs: readonly MeasuredRun[], budget = 1 << 20, onDropped?: (bytes: number) => void): SweepTrace {
  const trace = new SweepTrace(ENCODERS, budget, onDropped);
  for (const run of runs) {
    const t = trace.start(run.runId, run.promptId);
    const rows = runRows(run);
    for (const row of rows) t?.add(row.sweep, row.agent, row.tag as Tag, row.embeddings);
    trace.seal(run.runId, rows.length);
  }
  return trace;
}

function plain(m: SweepMeasurement) {
  const whitenings = [...m.whitenings].flatMap(([p, per]) =>
    [...per].map(([e, w]) => [p, e, w.samples, w.lambda, Array.from(w.mean), Array.from(w.matrix)]),
  );
  return { whitenings, orderParams: m.orderParams };
}

describe('SweepTrace', () => {
  it('measures a sweep from memory exactly as from its shards: whitenings and order parameters, bit for bit', async () => {
    const fromShards = await measureSweep(dir, RUNS, ENCODERS, 'zca', false);
    expect(fromShards.orderParams).toHaveLength(RUNS.length * (SWEEPS + 1) * ENCODERS.length);
    const trace = traced(RUNS);
    for (const run of RUNS) expect(trace.sealed(run.runId)?.length).toBe(N * (SWEEPS + 1));
    // With every run traced the shards are not read at all: move them away.
    for (const run of RUNS) await rename(shardPath(dir, run.runId), `${shardPath(dir, run.runId)}.away`);
    const fromTrace = await measureSweep(dir, RUNS, ENCODERS, 'zca', false, trace);
    expect(plain(fromTrace)).toEqual(plain(fromShards));
    // The pool's nine answers are stored once per prompt and encoder, however often they were given.
    expect(trace.vectors('q1', 0).length).toBeLessThanOrEqual(9);
  });

  it('mixes traced runs with runs read back (resumed or finalized earlier) and still gives the same numbers', async () => {
    const fromShards = await measureSweep(dir, RUNS, ENCODERS, 'raw', false);
    const trace = traced(RUNS);
    trace.forget(RUNS[1].runId);
    trace.forget(RUNS[5].runId);
    expect(trace.sealed(RUNS[1].runId)).toBeUndefined();
    expect(plain(await measureSweep(dir, RUNS, ENCODERS, 'raw', false, trace))).toEqual(plain(fromShards));
  });

  it('uses a trace only when it holds every answer of the shard, and only for the same encoders', async () => {
    const trace = new SweepTrace(ENCODERS, 1 << 20);
    const run = RUNS[0];
    const t = trace.start(run.runId, run.promptId)!;
    const rows = runRows(run);
    for (const row of rows.slice(0, -1)) t.add(row.sweep, row.agent, row.tag as Tag, row.embeddings);
    trace.seal(run.runId, rows.length);
    expect(trace.sealed(run.runId)).toBeUndefined();

    const other = traced(RUNS);
    const fromShards = await measureSweep(dir, RUNS, [ENCODERS[0]], 'zca', false);
    expect(plain(await measureSweep(dir, RUNS, [ENCODERS[0]], 'zca', false, other))).toEqual(plain(fromShards));
  });

  it('gives itself up past its memory budget, and the measurement reads every shard back', async () => {
    const dropped: number[] = [];
    const trace = traced(RUNS, 4096, (bytes) => dropped.push(bytes));
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toBeGreaterThan(4096);
    for (const run of RUNS) expect(trace.sealed(run.runId)).toBeUndefined();
    expect(trace.start('later', 'q1')).toBeUndefined();
    expect(plain(await measureSweep(dir, RUNS, ENCODERS, 'zca', false, trace))).toEqual(
      plain(await measureSweep(dir, RUNS, ENCODERS, 'zca', false)),
    );
  });
});
