import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunPlan } from '@panta/core';
import type { EventTask } from '../src/index.js';
import { harness, smallSweep, watch } from './executor-harness.js';
import { quiesce, stateOf, until } from './fake-transport.js';

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
/** Every run here: a ring of 8 agents over sweeps 0..2. */
const N = 8;
const EVENTS = 3 * N;

/** Answers whatever events are pending until run() settles (a manual transport driven to the end). */
async function drain(h: ReturnType<typeof harness>, done: { settled: boolean }): Promise<void> {
  for (let i = 0; i < 10_000 && !done.settled; i++) {
    h.transport.answerPending();
    await quiesce(1);
  }
  expect(done.settled).toBe(true);
}

describe('the executor over a fake transport', () => {
  it('runs every event of every run once, each only after the versions it reads are published, and closes every run complete', async () => {
    const sweep = smallSweep({ trials: 3 });
    const h = harness(sweep, { concurrency: 5 });
    // Every third event needed a retry: the counters tell calls from events.
    h.transport.auto = { usage: (t) => ({ calls: t.plan.event % 3 === 0 ? 2 : 1 }) };
    await h.executor.run();
    for (const run of sweep.runs) {
      expect(sorted(h.transport.events(run.runId).map((t) => t.plan.event))).toEqual(range(EVENTS));
      expect(h.sinks.get(run.runId)!.rows).toEqual(range(EVENTS));
    }
    expect(h.transport.unpublishedReads).toEqual([]);
    expect(h.transport.peakPending).toBe(5);
    // In any order: runs open while the open ones could not fill the slots, and finish as their events do.
    const closed = h.closed.map((a) => [a.run.runId, a.error, a.stopped]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(closed).toEqual(sweep.runs.map((r) => [r.runId, undefined, undefined]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
    expect(h.executor.stopped).toBe(false);
    // The transport belongs to the caller (sweep.ts, the scheduler), which closes it.
    expect(h.transport.closed).toBe(false);
    const retried = 3 * (EVENTS / 3);
    expect(h.reports.at(-1)).toEqual({
      eventsWritten: 3 * EVENTS,
      eventsExecuted: 3 * EVENTS,
      inflight: 0,
      calls: 3 * EVENTS + retried,
      tokens: 3 * EVENTS * 15,
      completionTokens: 3 * EVENTS * 5,
      retries: retried,
      runsActive: 0,
      runsFinished: 3,
      runsFailed: 0,
      eventsSkipped: 0,
    });
  });

  it('keeps at most `concurrency` events in flight: each answer lets exactly one more go', async () => {
    const h = harness(smallSweep(), { concurrency: 3 });
    const done = watch(h.executor.run());
    await until(() => h.transport.pending.length === 3, 'three events in flight');
    await quiesce();
    expect(h.transport.dispatched.length).toBe(3);
    h.transport.answer(h.transport.pending[0] as EventTask);
    await quiesce();
    expect(h.transport.dispatched.length).toBe(4);
    expect(h.transport.pending.length).toBe(3);
    await drain(h, done);
    expect(done.error).toBeUndefined();
    expect(h.transport.peakPending).toBe(3);
    expect(h.transport.dispatched.length).toBe(EVENTS);
  });

  it('reads its concurrency at every dispatch: raised while running (the scheduler follows the workers), more events go out at the next answer', async () => {
    const h = harness(smallSweep(), { concurrency: 2 });
    const done = watch(h.executor.run());
    await until(() => h.transport.pending.length === 2, 'two events in flight');
    h.options.concurrency = 5;
    h.transport.answer(h.transport.pending[0] as EventTask);
    await quiesce();
    expect(h.transport.pending.length).toBe(5);
    await drain(h, done);
    expect(done.error).toBeUndefined();
  });

  it('tells a sink once when its run waits on nothing but its rows, and retires the run once they are written', async () => {
    const sweep = smallSweep({ trials: 2 });
    const h = harness(sweep, { concurrency: 4, sink: () => ({ holdRows: true }) });
    h.transport.auto = {};
    const running = h.executor.run();
    await until(() => h.sinks.size === 2 && [...h.sinks.values()].every((s) => s.rowsAsked === 1), 'both runs asked for rows');
    await running;
    for (const run of sweep.runs) {
      const sink = h.sinks.get(run.runId)!;
      expect(sink.rowsAsked).toBe(1);
      expect(sink.rows).toEqual(range(EVENTS));
    }
    expect(h.closed.map((a) => a.error)).toEqual([undefined, undefined]);
  });

  it('with no runs, run() resolves at once with a final report', async () => {
    const h = harness(smallSweep(), { runs: [] });
    await h.executor.run();
    expect(h.transport.dispatched).toEqual([]);
    expect(h.reports.at(-1)).toMatchObject({ eventsWritten: 0, runsFinished: 0, runsActive: 0 });
  });

  describe('stop()', () => {
    it('dispatches nothing new and opens no run; calls in flight are answered and handed to the sinks; run() then resolves with the open runs closed as stopped', async () => {
      const sweep = smallSweep({ trials: 3 });
      const h = harness(sweep, { concurrency: 4, maxActiveRuns: 1 });
      const done = watch(h.executor.run());
      await until(() => h.transport.pending.length === 4, 'four events in flight');
      const inFlight = h.transport.pending as EventTask[];
      h.executor.stop();
      h.transport.answer(inFlight[0]);
      await quiesce();
      expect(h.transport.dispatched.length).toBe(4);
      expect(done.settled).toBe(false);
      expect(h.closed).toEqual([]);
      for (const t of inFlight.slice(1)) h.transport.answer(t);
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBeUndefined();
      expect(h.executor.stopped).toBe(true);
      expect(h.transport.dispatched.length).toBe(4);
      const first = sweep.runs[0].runId;
      expect(h.opened).toEqual([first]);
      expect(h.closed.map((a) => [a.run.runId, a.stopped, a.error])).toEqual([[first, true, undefined]]);
      const sink = h.sinks.get(first)!;
      expect(sink.rows.length + sink.backlog).toBe(4);
      // A stopped run is neither finished nor failed: the next sweep resumes it.
      expect(h.reports.at(-1)).toMatchObject({ eventsExecuted: 4, inflight: 0, runsActive: 0, runsFinished: 0, runsFailed: 0 });
    });

    it('before any answer: runs with nothing in flight close at once, and repeated calls change nothing', async () => {
      const sweep = smallSweep({ trials: 2 });
      const h = harness(sweep, { concurrency: 64 });
      const done = watch(h.executor.run());
      await until(() => h.opened.length === 2 && h.transport.pending.length === 2 * N, 'both runs open with their first sweep out');
      h.executor.stop();
      h.executor.stop();
      await quiesce();
      expect(done.settled).toBe(false);
      h.transport.answerPending();
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBeUndefined();
      expect(h.transport.dispatched.length).toBe(2 * N);
      expect(h.closed.map((a) => a.stopped)).toEqual([true, true]);
    });

    // sweep.ts listens for the abort signal before run(), so SIGINT may come while the transport starts
    // (stop() used to throw a TypeError there: run() made its settling promise only after start()).
    it('while the transport is still starting: run() resolves with no run opened', async () => {
      const h = harness(smallSweep());
      let started!: () => void;
      h.transport.startGate = new Promise<void>((resolve) => (started = resolve));
      const done = watch(h.executor.run());
      h.executor.stop();
      started();
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBeUndefined();
      expect(h.executor.stopped).toBe(true);
      expect(h.opened).toEqual([]);
      expect(h.transport.dispatched).toEqual([]);
    });
  });

  it('a failed event fails its run alone: nothing more of it is dispatched, it closes with the error once its calls in flight are answered, and run() resolves', async () => {
    const sweep = smallSweep({ trials: 2 });
    const [a, b] = sweep.runs as [RunPlan, RunPlan];
    const h = harness(sweep, { concurrency: 4 });
    const boom = new Error('the model refused');
    let dispatchedBeforeFailure = -1;
    h.transport.auto = {
      failing: (t) => {
        if (t.run.runId !== a.runId || t.plan.event !== 9) return undefined;
        dispatchedBeforeFailure = h.transport.dispatched.length;
        return boom;
      },
    };
    await h.executor.run();
    expect(dispatchedBeforeFailure).toBeGreaterThan(0);
    expect(h.transport.dispatched.slice(dispatchedBeforeFailure).filter((t) => t.run.runId === a.runId)).toEqual([]);
    const closedA = h.closed.find((x) => x.run.runId === a.runId)!;
    expect(closedA.error).toBe(boom);
    expect(closedA.inflight).toBe(0);
    expect(closedA.stopped).toBeUndefined();
    expect(h.closed.find((x) => x.run.runId === b.runId)!.error).toBeUndefined();
    expect(h.sinks.get(b.runId)!.rows).toEqual(range(EVENTS));
    expect(h.sinks.get(a.runId)!.rows.length).toBeLessThan(EVENTS);
    expect(h.reports.at(-1)).toMatchObject({ runsFinished: 2, runsFailed: 1, inflight: 0, runsActive: 0 });
  });

  describe('fatal errors reject run()', () => {
    it('the transport reports itself broken: run() rejects with its error and nothing more is dispatched', async () => {
      const h = harness(smallSweep(), { concurrency: 4 });
      const done = watch(h.executor.run());
      await until(() => h.transport.pending.length === 4, 'four events in flight');
      const gone = new Error('Redis is gone for good');
      h.transport.fatal(gone);
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBe(gone);
      h.transport.answerPending();
      await quiesce();
      expect(h.transport.dispatched.length).toBe(4);
    });

    it('the transport fails to start: nothing is opened', async () => {
      const h = harness(smallSweep());
      h.transport.startError = new Error('no queue');
      await expect(h.executor.run()).rejects.toBe(h.transport.startError);
      expect(h.opened).toEqual([]);
    });

    it('dispatch throws', async () => {
      const h = harness(smallSweep());
      h.transport.dispatchError = new Error('queue refused the job');
      await expect(h.executor.run()).rejects.toBe(h.transport.dispatchError);
    });

    it('open() fails for a run', async () => {
      const sweep = smallSweep({ trials: 2 });
      const unreadable = new Error('shard unreadable');
      const h = harness(sweep, {
        concurrency: 64,
        open: async (run) => {
          if (run.runId === sweep.runs[1].runId) throw unreadable;
        },
      });
      h.transport.auto = {};
      await expect(h.executor.run()).rejects.toBe(unreadable);
    });

    it('close() fails for a run', async () => {
      const full = new Error('disk full');
      const h = harness(smallSweep(), {
        close: async () => {
          throw full;
        },
      });
      h.transport.auto = {};
      await expect(h.executor.run()).rejects.toBe(full);
      expect(h.closed.length).toBe(1);
    });

    it("a sink's write fails", async () => {
      const refused = new Error('the writer refused the rows');
      const h = harness(smallSweep(), { sink: () => ({ writeError: refused }) });
      h.transport.auto = {};
      await expect(h.executor.run()).rejects.toBe(refused);
    });

    it('an outcome for a run the executor does not hold', async () => {
      const sweep = smallSweep({ trials: 2 });
      const h = harness(sweep, { runs: [sweep.runs[0]], concurrency: 1 });
      const done = watch(h.executor.run());
      await until(() => h.transport.pending.length === 1, 'one event in flight');
      const task = h.transport.pending[0] as EventTask;
      h.transport.stray({ ...task, run: sweep.runs[1] });
      await until(() => done.settled, 'run() settles');
      expect(done.error?.message).toBe(`outcome for unknown run ${sweep.runs[1].runId}`);
    });
  });

  describe('sweep boundaries (early stopping, drift-policy)', () => {
    it("hold each sweep's events until the boundary before it is decided and journalled; the boundary reads the snapshot and carries the last state, and a moderator reaches the next sweep's events", async () => {
      const sweep = smallSweep({ earlyStopping: true });
      const run = sweep.runs[0];
      const h = harness(sweep, { concurrency: 4, sink: () => ({ holdBoundaries: true }) });
      h.transport.auto = {};
      const done = watch(h.executor.run());
      const sink = () => h.sinks.get(run.runId)!;

      await until(() => h.transport.boundaries().length === 1, 'the first boundary');
      await quiesce();
      const [b0] = h.transport.boundaries();
      // It goes out once every event of sweep 0 is answered, and none of sweep 1 has gone.
      expect(h.transport.pending).toEqual([b0]);
      expect(sorted(h.transport.events().map((t) => t.plan.event))).toEqual(range(N));
      expect(b0!.sweep).toBe(0);
      expect(b0!.state).toBeUndefined();
      const latest = new Array<number>(N).fill(-1);
      for (const t of h.transport.events()) latest[t.plan.agent] = Math.max(latest[t.plan.agent], t.plan.event);
      expect(Array.from(b0!.versions)).toEqual(latest);

      // Decided but not yet journalled: the next sweep still waits.
      const moderated = stateOf(0, { moderator: 'Check the source before you answer.' });
      h.transport.decide(b0!, moderated);
      await quiesce();
      expect(h.transport.events().length).toBe(N);
      expect(sink().boundariesHeld).toBe(1);
      sink().releaseBoundary();
      await until(() => h.transport.boundaries().length === 2, 'the second boundary');
      const sweep1 = h.transport.events().filter((t) => t.plan.sweep === 1);
      expect(sweep1.length).toBe(N);
      expect(sweep1.every((t) => t.moderator === moderated.moderator)).toBe(true);
      expect(
        h.transport
          .events()
          .filter((t) => t.plan.sweep === 0)
          .every((t) => t.moderator === undefined),
      ).toBe(true);
      const b1 = h.transport.boundaries()[1];
      expect(b1.sweep).toBe(1);
      expect(b1.state).toEqual(moderated);

      h.transport.decide(b1, stateOf(1));
      sink().releaseBoundary();
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBeUndefined();
      // The last sweep has no boundary after it.
      expect(h.transport.boundaries().length).toBe(2);
      expect(
        h.transport
          .events()
          .filter((t) => t.plan.sweep === 2)
          .every((t) => t.moderator === undefined),
      ).toBe(true);
      expect(sink().rows).toEqual(range(EVENTS));
      expect(sink().journal.map((j) => j.sweep)).toEqual([0, 1]);
      expect(h.closed[0].error).toBeUndefined();
    });

    it('a boundary that stops the run ends it there: no later event runs, it closes complete and the skipped events are counted', async () => {
      const sweep = smallSweep({ earlyStopping: true });
      const h = harness(sweep, { concurrency: 4 });
      h.transport.auto = { decide: (b) => stateOf(b.sweep, { stop: b.sweep === 0 }) };
      await h.executor.run();
      expect(sorted(h.transport.events().map((t) => t.plan.event))).toEqual(range(N));
      expect(h.transport.boundaries().map((b) => b.sweep)).toEqual([0]);
      const [closed] = h.closed;
      expect(closed!.error).toBeUndefined();
      expect(closed!.stopped).toBeUndefined();
      expect(closed!.planner.total).toBe(N);
      expect(closed!.planner.done).toBe(true);
      expect(h.reports.at(-1)).toMatchObject({
        eventsWritten: N,
        eventsExecuted: N,
        eventsSkipped: EVENTS - N,
        runsFinished: 1,
        runsFailed: 0,
      });
    });

    it('a resumed run starts after the last boundary its sink journalled, with that state', async () => {
      const sweep = smallSweep({ earlyStopping: true });
      const state = stateOf(0, { moderator: 'Stay on topic.' });
      const h = harness(sweep, { concurrency: 4, sink: () => ({ startEvent: N, control: { sweep: 0, state } }) });
      h.transport.auto = { decide: (b) => stateOf(b.sweep) };
      await h.executor.run();
      expect(h.transport.unpublishedReads).toEqual([]);
      expect(sorted(h.transport.events().map((t) => t.plan.event))).toEqual(range(2 * N, N));
      expect(
        h.transport
          .events()
          .filter((t) => t.plan.sweep === 1)
          .every((t) => t.moderator === state.moderator),
      ).toBe(true);
      expect(h.transport.boundaries().map((b) => [b.sweep, b.state])).toEqual([[1, state]]);
      expect(h.reports.at(-1)).toMatchObject({ eventsWritten: EVENTS, eventsExecuted: EVENTS, calls: 2 * N, runsFinished: 1 });
    });

    it('stop() while a boundary is out: its decision is still journalled, and no event of the next sweep goes', async () => {
      const sweep = smallSweep({ earlyStopping: true });
      const h = harness(sweep, { concurrency: 4 });
      h.transport.auto = {};
      const done = watch(h.executor.run());
      await until(() => h.transport.boundaries().length === 1, 'the first boundary');
      h.executor.stop();
      await quiesce();
      expect(done.settled).toBe(false);
      h.transport.decide(h.transport.boundaries()[0], stateOf(0));
      await until(() => done.settled, 'run() settles');
      expect(done.error).toBeUndefined();
      expect(h.transport.events().length).toBe(N);
      expect(h.sinks.get(sweep.runs[0].runId)!.journal.map((j) => j.sweep)).toEqual([0]);
      expect(h.closed[0].stopped).toBe(true);
    });

    it('a boundary that failed fails its run: no event of the next sweep goes, and it closes with the error', async () => {
      const sweep = smallSweep({ earlyStopping: true, trials: 2 });
      const [a, b] = sweep.runs as [RunPlan, RunPlan];
      const h = harness(sweep, { concurrency: 4 });
      const judged = new Error('the judge timed out');
      h.transport.auto = {};
      const done = watch(h.executor.run());
      for (let i = 0; i < 10_000 && !done.settled; i++) {
        for (const t of h.transport.pending) {
          if (t.kind !== 'boundary') continue;
          if (t.run.runId === a.runId) h.transport.fail(t, judged);
          else h.transport.decide(t, stateOf(t.sweep));
        }
        await quiesce(1);
      }
      expect(done.settled).toBe(true);
      expect(done.error).toBeUndefined();
      expect(h.transport.events(a.runId).length).toBe(N);
      expect(h.closed.find((x) => x.run.runId === a.runId)!.error).toBe(judged);
      expect(h.sinks.get(b.runId)!.rows).toEqual(range(EVENTS));
      expect(h.reports.at(-1)).toMatchObject({ runsFinished: 2, runsFailed: 1 });
    });

    it('a run that needs boundaries and a sink that cannot journal them: run() rejects naming the run', async () => {
      const sweep = smallSweep({ earlyStopping: true });
      const h = harness(sweep, { sink: () => ({ noBoundaries: true }) });
      await expect(h.executor.run()).rejects.toThrow(`${sweep.runs[0].runId}: its protocol needs sweep boundaries`);
    });
  });

  describe('opening runs', () => {
    it('weighed against the byte budget: a heavy run waits while lighter ones behind it open, and opens alone once none is open even when heavier than the budget', async () => {
      const sweep = smallSweep({ trials: 4 });
      const [l1, heavy, l2, l3] = sweep.runs as [RunPlan, RunPlan, RunPlan, RunPlan];
      const weight = new Map([
        [l1.runId, 3],
        [heavy.runId, 12],
        [l2.runId, 3],
        [l3.runId, 3],
      ]);
      const bytes = (run: RunPlan) => weight.get(run.runId)!;
      let held = 0;
      const openedWith: number[] = [];
      const h = harness(sweep, {
        concurrency: 64,
        runBytes: bytes,
        openBytesBudget: 10,
        open: async (run) => {
          openedWith.push(held);
          held += bytes(run);
        },
        close: async (active) => {
          held -= bytes(active.run);
        },
      });
      h.transport.auto = {};
      await h.executor.run();
      expect(h.opened).toEqual([l1.runId, l2.runId, l3.runId, heavy.runId]);
      // What was open when each opened: the lights fit together (9 of 10); the heavy one opened alone.
      expect(openedWith).toEqual([0, 3, 6, 0]);
      expect(h.closed.map((a) => a.error)).toEqual([undefined, undefined, undefined, undefined]);
      expect(h.reports.at(-1)).toMatchObject({ runsFinished: 4, eventsWritten: 4 * EVENTS });
    });

    it('never more than maxActiveRuns at once, and every run is opened in the end', async () => {
      const sweep = smallSweep({ trials: 5 });
      const h = harness(sweep, { concurrency: 64, maxActiveRuns: 2 });
      h.transport.auto = {};
      await h.executor.run();
      expect(h.peakOpen).toBe(2);
      expect(Math.max(...h.reports.map((r) => r.runsActive))).toBeLessThanOrEqual(2);
      expect(h.opened).toEqual(sweep.runs.map((r) => r.runId));
      expect(h.closed.length).toBe(5);
    });

    it('a run found complete on disk is counted executed, written and finished, and one that stopped early counts its skipped events', async () => {
      const sweep = smallSweep({ trials: 3 });
      const [done, early, fresh] = sweep.runs as [RunPlan, RunPlan, RunPlan];
      const h = harness(sweep, {
        onDisk: new Map([
          [done.runId, EVENTS],
          [early.runId, 2 * N],
        ]),
      });
      h.transport.auto = {};
      await h.executor.run();
      expect(new Set(h.transport.dispatched.map((t) => t.run.runId))).toEqual(new Set([fresh.runId]));
      expect(h.closed.map((a) => a.run.runId)).toEqual([fresh.runId]);
      expect(h.reports.at(-1)).toMatchObject({
        eventsExecuted: 3 * EVENTS - N,
        eventsWritten: 3 * EVENTS - N,
        eventsSkipped: N,
        runsFinished: 3,
        calls: EVENTS,
      });
    });
  });

  describe('progress', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('counts events executed ahead of events written while rows wait to be appended, never behind, and both reach the total', async () => {
      // Reports are paced by performance.now(): a fake clock that always reads 100 ms later lets every
      // report the executor may make happen, whatever the machine's speed.
      vi.useFakeTimers({ toFake: ['performance'] });
      const sweep = smallSweep({ trials: 2 });
      const h = harness(sweep, { concurrency: 6, sink: () => ({ batch: 5 }) });
      h.transport.auto = {
        usage: () => {
          vi.advanceTimersByTime(100);
          return {};
        },
      };
      await h.executor.run();
      expect(h.reports.length).toBeGreaterThan(2);
      for (const p of h.reports) expect(p.eventsExecuted).toBeGreaterThanOrEqual(p.eventsWritten);
      for (let i = 1; i < h.reports.length; i++) {
        expect(h.reports[i].eventsExecuted).toBeGreaterThanOrEqual(h.reports[i - 1].eventsExecuted);
        expect(h.reports[i].eventsWritten).toBeGreaterThanOrEqual(h.reports[i - 1].eventsWritten);
      }
      expect(h.reports.some((p) => p.eventsExecuted > p.eventsWritten)).toBe(true);
      expect(h.reports.at(-1)).toMatchObject({ eventsExecuted: 2 * EVENTS, eventsWritten: 2 * EVENTS });
    });

    it("a resumed run's rows count as executed and written, but its calls only from this session", async () => {
      const h = harness(smallSweep(), { sink: () => ({ startEvent: N }) });
      h.transport.auto = {};
      await h.executor.run();
      expect(h.transport.unpublishedReads).toEqual([]);
      expect(h.transport.events().length).toBe(EVENTS - N);
      expect(h.reports.at(-1)).toMatchObject({ eventsExecuted: EVENTS, eventsWritten: EVENTS, calls: EVENTS - N, runsFinished: 1 });
    });

    it('reports the moment the last row is written, without waiting for the clock', async () => {
      vi.useFakeTimers({ toFake: ['performance'] });
      const h = harness(smallSweep());
      h.transport.auto = {};
      await h.executor.run();
      // The clock never moved: only the reports execution's end forces were made.
      expect(h.reports.length).toBeGreaterThan(0);
      expect(h.reports.every((p) => p.eventsWritten === EVENTS)).toBe(true);
      expect(h.reports.at(-1)).toMatchObject({ eventsWritten: EVENTS, runsFinished: 1, runsActive: 0 });
    });
  });
});
