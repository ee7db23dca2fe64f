import { runEvents, type ControlState, type RunPlan } from '@panta/core';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import {
  Executor,
  loadSweep,
  plannerFor,
  type ActiveRun,
  type ExecutorOptions,
  type ExecutorProgress,
  type LoadedSweep,
} from '../src/index.js';
import { FakeSink, FakeTransport } from './fake-transport.js';

/** Rings of 8 agents, 2 sweeps after t = 0: 24 events a run, 8 of them ready at the start. */
export function smallSweep(options: { trials?: number; earlyStopping?: boolean; lookahead?: number } = {}): LoadedSweep {
  const dir = tempDir('panta-executor-');
  const spec = `name: executor-unit
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [8]
temperatures: [0.5]
trials: ${options.trials ?? 1}
sweeps: 2
seed: 4
${options.earlyStopping ? 'early_stopping: {window: 1, min_sweeps: 1}\n' : ''}${options.lookahead ? `lookahead: ${options.lookahead}\n` : ''}`;
  return loadSweep(writeSpec(dir, spec), { out: `${dir}/out` });
}

export interface SinkOptions {
  batch?: number;
  holdBoundaries?: boolean;
  /** Writes no row until the executor calls rowsWanted (a collector whose reads are paced). */
  holdRows?: boolean;
  /** Every write of the sink fails with this. */
  writeError?: Error;
  /** A sink that records no sweep boundaries. */
  noBoundaries?: boolean;
  /** A resumed run: rows below startEvent are written, and the last boundary decided. */
  startEvent?: number;
  control?: { sweep: number; state?: ControlState };
}

/**
 * An executor over a FakeTransport with FakeSinks, opened and closed as sweep.ts does (a resumed run's rows
 * count as written), recording every open and close and every progress report.
 */
export function harness(
  sweep: LoadedSweep,
  options: Partial<Omit<ExecutorOptions<FakeSink>, 'transport' | 'open' | 'close'>> & {
    runs?: RunPlan[];
    sink?: (run: RunPlan) => SinkOptions;
    /** Runs found complete on disk: events they hold. */
    onDisk?: Map<string, number>;
    open?: (run: RunPlan) => Promise<void>;
    close?: (active: ActiveRun<FakeSink>) => Promise<void>;
  } = {},
) {
  const transport = new FakeTransport();
  const sinks = new Map<string, FakeSink>();
  const opened: string[] = [];
  const closed: ActiveRun<FakeSink>[] = [];
  const reports: ExecutorProgress[] = [];
  const runs = options.runs ?? sweep.runs;
  /** Runs open now as the caller sees them: opened, and not yet handed to close(). */
  let openNow = 0;
  let peakOpen = 0;
  const executorOptions: ExecutorOptions<FakeSink> = {
    transport,
    concurrency: options.concurrency ?? 64,
    maxActiveRuns: options.maxActiveRuns ?? 64,
    ...(options.runBytes ? { runBytes: options.runBytes } : {}),
    ...(options.openBytesBudget !== undefined ? { openBytesBudget: options.openBytesBudget } : {}),
    eventsTotal: options.eventsTotal ?? runs.reduce((s, r) => s + runEvents(r), 0),
    open: async (run) => {
      await options.open?.(run);
      opened.push(run.runId);
      const onDisk = options.onDisk?.get(run.runId);
      if (onDisk !== undefined) {
        executor.completeOnDisk(run, onDisk);
        return null;
      }
      openNow++;
      peakOpen = Math.max(peakOpen, openNow);
      const so = options.sink?.(run) ?? {};
      const start = so.startEvent ?? 0;
      const sink = new FakeSink(start, (count) => executor.written(count), {
        ...(so.batch ? { batch: so.batch } : {}),
        ...(so.holdBoundaries ? { holdBoundaries: true } : {}),
        ...(so.holdRows ? { holdRows: true } : {}),
        ...(so.control ? { control: so.control } : {}),
        boundaries: !so.noBoundaries,
      });
      sinks.set(run.runId, sink);
      const planner = plannerFor(sweep, run, start, so.control);
      if (start > 0) {
        executor.written(start);
        // As sweep.ts does: a resumed run's latest versions go back into the store before its events run.
        for (const v of planner.liveVersions()) if (v >= 0) transport.publish(run.runId, v);
      }
      if (so.writeError) sink.writeError = so.writeError;
      return { run, planner, sink, inflight: 0, startedAt: 0 };
    },
    close: async (active) => {
      openNow--;
      closed.push(active);
      await options.close?.(active);
    },
    onProgress: (p) => reports.push({ ...p }),
  };
  const executor = new Executor<FakeSink>(runs, executorOptions);
  return {
    executor,
    /** The options the executor holds: it reads them at every dispatch (the scheduler raises concurrency). */
    options: executorOptions,
    transport,
    sinks,
    opened,
    closed,
    reports,
    get peakOpen() {
      return peakOpen;
    },
  };
}

/** Whether a promise has settled, and how, without waiting for it. */
export function watch(promise: Promise<unknown>): { settled: boolean; error?: Error } {
  const state: { settled: boolean; error?: Error } = { settled: false };
  promise.then(
    () => (state.settled = true),
    (e: Error) => {
      state.settled = true;
      state.error = e;
    },
  );
  return state;
}
