import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Schedule, graphFor, type Tag } from '@panta/core';
import { SweepTrace, closeDuckDB } from '@panta/corpus';
import type { Judge } from '@panta/judge';
import { RunRecorder, loadSweep, type EventOutcome } from '../src/index.js';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';

const SPEC = `
name: collector
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [8]
temperatures: [0.5]
sweeps: 1
seed: 3
`;

/** A judge that answers at once, with whatever `verdict` says for the event's response. */
function judgeNow(verdict: (response: string) => string): Judge {
  return {
    model: 'test',
    judge: async (_p, r) => verdict(r) as Tag,
    judgeNow: (_p, r) => verdict(r) as Tag,
    close: async () => undefined,
  };
}

async function collector(judge: Judge, trace: SweepTrace) {
  const dir = tempDir();
  const out = join(dir, 'out');
  const sweep = loadSweep(writeSpec(dir, SPEC), { out });
  const run = sweep.runs[0];
  const schedule = new Schedule(run, graphFor(run.geometry, run.n, run.seed, new Map()));
  const c = await RunRecorder.open({
    out,
    run,
    encoders: [{ name: 'hashing', dim: 4 }],
    judge,
    meta: { backend: 'surrogate', model: 'm' },
    startEvent: 0,
    partRows: 1000,
    onWritten: () => undefined,
    trace: trace.start(run.runId, run.prompt.id),
  });
  const outcome = (event: number, response: string): EventOutcome => ({
    runId: run.runId,
    event,
    response,
    finishReason: 'stop',
    promptTokens: 1,
    completionTokens: 1,
    latencyMs: 0,
    calls: 1,
    embeddings: { hashing: Float32Array.of(event, 1, 0, 0) },
    createdAt: 0,
  });
  const plans = Array.from({ length: 4 }, () => schedule.next()!);
  return { c, run, plans, outcome };
}

describe('RunRecorder', () => {
  it('appends in-order events at once when its judge answers at once, and holds later ones until their turn', async () => {
    const trace = new SweepTrace([{ name: 'hashing', dim: 4 }], 1 << 20);
    const { c, run, plans, outcome } = await collector(
      judgeNow(() => 'correct'),
      trace,
    );
    expect(c.accept({ run, plan: plans[1] }, outcome(1, 'b'))).toBeUndefined();
    expect(c.written).toBe(0); // event 0 has not arrived
    expect(c.accept({ run, plan: plans[0] }, outcome(0, 'a'))).toBeUndefined();
    expect(c.written).toBe(2);
    expect(trace.sealed(run.runId)).toBeUndefined(); // not finalized yet
    await c.flush();
    await closeDuckDB();
  });

  it('a row the writer refuses fails the run as a rejection and is neither counted written nor traced', async () => {
    const trace = new SweepTrace([{ name: 'hashing', dim: 4 }], 1 << 20);
    const { c, run, plans, outcome } = await collector(
      judgeNow((r) => (r === 'bad' ? 'maybe' : 'correct')),
      trace,
    );
    expect(c.accept({ run, plan: plans[0] }, outcome(0, 'a'))).toBeUndefined();
    await expect(c.accept({ run, plan: plans[1] }, outcome(1, 'bad'))).rejects.toThrow(/tag "maybe" is not one of/);
    expect(c.written).toBe(1);
    trace.seal(run.runId, 1);
    expect(trace.sealed(run.runId)?.length).toBe(1);
    await closeDuckDB();
  });
});
