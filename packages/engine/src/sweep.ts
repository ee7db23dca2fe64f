import { mkdirSync } from 'node:fs';
import { DataflowPlanner, InputError, Schedule, graphFor, type EncoderColumn, type RunPlan, type SweepSpec } from '@panta/core';
import { appendRunRecord, readEvents, readManifest, shardProgress } from '@panta/corpus';
import { openEncoder, type Encoder } from '@panta/embed';
import { createJudge } from '@panta/judge';
import { createBackend } from '@panta/llm';
import { RunCollector } from './collector.js';
import { Executor, type ActiveRun, type ExecutorProgress } from './executor.js';
import { finishSweep, startManifest, type SweepSummary } from './finish.js';
import { InProcessTransport } from './in-process-transport.js';
import { loadSweep, type LoadedSweep, type SweepOverrides } from './load.js';
import { sweepLogger, type Logger } from './log.js';
import type { Transport } from './task.js';

/** Memory for rows waiting to become a durable part, over all open runs. */
const BUFFER_BUDGET_BYTES = 512 * 1024 * 1024;

export interface SweepProgress extends ExecutorProgress {
  eventsTotal: number;
  runsTotal: number;
}

export interface RunSweepOptions extends SweepOverrides {
  onProgress?(progress: SweepProgress): void;
  /** Called once the plan is validated and before anything runs (the CLI prints where the corpus goes). */
  onPlan?(sweep: LoadedSweep): void;
  /** Rows per durable part of a run's shard (smaller: less lost on a crash, more files). */
  partRows?: number;
  /** Level of the JSON log written to <out>/log.jsonl (default info; 'silent' for none). */
  logLevel?: string;
  /** Aborting it stops the sweep gracefully: calls in flight finish, written events are made durable. */
  signal?: AbortSignal;
  /** Replaces the in-process transport (tests, the cluster). */
  transport?: (services: ConstructorParameters<typeof InProcessTransport>[0]) => Transport;
}

/**
 * Runs a sweep embedded, or resumes it: runs whose shard is complete are skipped, a run with durable parts
 * continues after its last written event, and the result is the corpus a single uninterrupted run gives.
 */
export async function runSweep(specPath: string, options: RunSweepOptions = {}): Promise<SweepSummary> {
  const sweep = loadSweep(specPath, options);
  const { spec, out, runs } = sweep;
  const previous = readManifest(out);
  if (previous && previous.fingerprint !== sweep.fingerprint) {
    throw new InputError(specPath, 'out', `${out} holds a corpus of a different sweep`, 'choose another --out, or delete that folder to start over');
  }
  // Retries go to the sweep's log (debug: under a fault storm they are many); the log opens once input is valid.
  let log: Logger | undefined;
  const backend = createBackend(spec.backend, sweep.prompts, specPath, { onRetry: (event) => log?.debug(event, 'retry') });
  // Opening an onnx encoder validates its model folder (one-line error, exit 2) before anything is written.
  const encoders = await openEncoders(spec.encoders, specPath);
  const judge = createJudge(spec.judge, specPath, sweep.prompts, out);
  options.onPlan?.(sweep);
  mkdirSync(out, { recursive: true });
  log = sweepLogger(out, options.logLevel ?? 'info');
  log.info({ sweep: spec.name, runs: runs.length, fingerprint: sweep.fingerprint, resumed: previous !== null, concurrency: spec.concurrency }, 'sweep started');
  const started = startManifest(sweep, previous, backend, judge, encoders);
  const columns: EncoderColumn[] = encoders.map((e) => ({ name: e.name, dim: e.dim }));
  const services = { backend, encoders, template: sweep.template, maxTokens: spec.max_tokens, fixedLength: spec.fixed_length };
  const transport = options.transport ? options.transport(services) : new InProcessTransport(services);
  const eventsTotal = runs.reduce((s, r) => s + (r.sweeps + 1) * r.n, 0);
  // Each open run buffers up to one part of rows: share a fixed budget between the runs open at once. A
  // run that fits one part is encoded once (its part becomes its shard), so parts are as large as allowed.
  const maxActiveRuns = Math.min(64, Math.max(2, Math.ceil(spec.concurrency / 2)));
  const rowBytes = 256 + 4 * columns.reduce((s, c) => s + c.dim, 0);
  const partRows = options.partRows ?? Math.min(8192, Math.max(512, Math.floor(BUFFER_BUDGET_BYTES / (rowBytes * maxActiveRuns))));
  const executor: Executor = new Executor(runs, {
    transport,
    concurrency: spec.concurrency,
    maxActiveRuns,
    open: async (run: RunPlan): Promise<ActiveRun | null> => {
      const progress = await shardProgress(out, run.runId);
      if (progress.finalized) {
        executor.written((run.sweeps + 1) * run.n);
        return null;
      }
      const planner = new DataflowPlanner(new Schedule(run, graphFor(run.geometry, run.n, run.seed, sweep.edgeLists)), spec.lookahead, progress.nextEvent);
      if (progress.nextEvent > 0) {
        log.info({ run: run.runId, nextEvent: progress.nextEvent, parts: progress.parts.length }, 'run resumed');
        executor.written(progress.nextEvent);
        await republish(transport, run, progress.parts, planner.liveVersions());
      }
      const collector = await RunCollector.open({
        out,
        run,
        encoders: columns,
        judge,
        meta: { backend: backend.kind, model: backend.model },
        startEvent: progress.nextEvent,
        partRows,
        onWritten: (count) => executor.written(count),
      });
      return { run, planner, collector, inflight: 0, startedAt: performance.now() };
    },
    close: async (active: ActiveRun): Promise<void> => {
      const wall = performance.now() - active.startedAt;
      const { calls, retries } = active.collector.tally;
      if (active.stopped) {
        await active.collector.flush();
        log?.info({ run: active.run.runId, written: active.collector.written }, 'run stopped');
        return;
      }
      if (active.error) {
        await active.collector.flush();
        await appendRunRecord(out, { run_id: active.run.runId, status: 'failed', wall_ms: wall, calls, retries, error: active.error.message, at: new Date().toISOString() });
        log.error({ run: active.run.runId, err: active.error, written: active.collector.written }, 'run failed');
        return;
      }
      await active.collector.finalize();
      await appendRunRecord(out, { run_id: active.run.runId, status: 'complete', wall_ms: wall, calls, retries, at: new Date().toISOString() });
      log.info({ run: active.run.runId, events: active.planner.total, wall_ms: Math.round(wall), calls, retries }, 'run finished');
    },
    onProgress: (p) => options.onProgress?.({ ...p, eventsTotal, runsTotal: runs.length }),
    eventsTotal,
  });
  const stop = () => executor.stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    await executor.run();
  } catch (error) {
    log.error({ err: error }, 'sweep failed');
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await transport.close();
    await backend.close();
    await judge.close();
    for (const e of encoders) await e.close();
  }
  if (executor.stopped) {
    log.info({}, 'sweep stopped');
    return { out, status: 'stopped', runsComplete: 0, runsPlanned: runs.length, failed: [], eventsWritten: 0, final: [] };
  }
  const summary = await finishSweep(sweep, started, columns, judge);
  log.info({ status: summary.status, runsComplete: summary.runsComplete, events: summary.eventsWritten, failed: summary.failed }, 'sweep finished');
  return summary;
}

/** Opens every encoder of the spec; if one fails, the ones already open are closed. */
async function openEncoders(specs: SweepSpec['encoders'], file: string): Promise<Encoder[]> {
  const opened: Encoder[] = [];
  try {
    for (let i = 0; i < specs.length; i++) opened.push(await openEncoder(specs[i]!, file, i));
    return opened;
  } catch (error) {
    for (const e of opened) await e.close();
    throw error;
  }
}

/** A resumed run needs each agent's latest answer back in the version store. */
async function republish(transport: Transport, run: RunPlan, parts: readonly string[], live: Float64Array): Promise<void> {
  const wanted = [...new Set(Array.from(live))].filter((v) => v >= 0);
  if (wanted.length === 0) return;
  for await (const batch of readEvents(parts, { columns: ['event', 'response'], where: `event IN (${wanted.join(',')})` })) {
    const events = batch.columns.event as number[];
    const responses = batch.columns.response as string[];
    for (let r = 0; r < batch.rows; r++) transport.publish(run.runId, events[r]!, responses[r]!);
  }
}
