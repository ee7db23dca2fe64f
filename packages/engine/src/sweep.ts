import { existsSync } from 'node:fs';
import {
  InputError,
  ownNeighbourBytes,
  poolsBudget,
  runEvents,
  SHARD_POLICY,
  shardLabel,
  type ShardPolicy,
  sweepEvents,
  type EncoderColumn,
  type RunPlan,
  type Shard,
  type SweepSpec,
} from '@panta/core';
import { acquireOutLock, runsOnDisk, shardPath, shardProgress, type OutLock, type OutLockHolder } from '@panta/corpus';
import { openEncoder, type Encoder } from '@panta/embed';
import { createJudge } from '@panta/judge';
import { createBackend, type EndpointUnhealthyError, unhealthyCause } from '@panta/llm';
import type { RunRecorder } from './run-recorder.js';
import { Executor, type ActiveRun, type ExecutorProgress } from './executor.js';
import { finishSweep, type SweepSummary } from './finish.js';
import { startManifest, sweepMeta } from './manifest-start.js';
import { checkWhiteningSource } from './whitening-source.js';
import { checkHeatBathStates } from './heat-bath-check.js';
import { InProcessTransport } from './in-process-transport.js';
import { LiveStatusWriter } from './live-status.js';
import { checkOutIsCorpus, makeOutFolder } from './out-folder.js';
import { corpusToResume, workerServices } from './sweep-setup.js';
import { adaptiveOf, nextRound, recordRounds } from './adaptive-rounds.js';
import { chainsFirst, parallelism, plannerWindow } from './run-order.js';
import { loadSweep, plannerFor, type LoadedSweep, type SweepOverrides } from './load.js';
import { sweepLogger, type Logger } from './log.js';
import { SweepCorpus, readVersionTexts, runEnd } from './sweep-corpus.js';
import type { Transport } from './task.js';

/**
 * Memory for rows waiting to become durable parts and for planned events, over all open runs, at the least:
 * runs are opened while they fit (see sweepSizing). A trade of memory for overlap between runs: small runs keep few calls
 * busy, so several must be open, and a mean field is one chain of events, so its run alone keeps one call
 * busy. Runs open longest chain first (run-order.ts), so the chains run beside the rest instead of alone at
 * the end.
 */
export const BUFFER_BUDGET_BYTES = 64 * 1024 * 1024;
/**
 * And per slot of concurrency: chains keep the slots busy only with one open run per slot, so the budget
 * grows with the concurrency, and a chain's parts are sized so that its rows and window fit one slot's share.
 */
export const SLOT_BUFFER_BYTES = 2 * 1024 * 1024;
/** Bytes of one part's rows: at 384 floats per row, 8,192 rows (a run of 729 agents is one part). */
const PART_BYTES = 16 * 1024 * 1024;
/**
 * Fewest rows in a chain's part: fewer would mean a file per few events and long merges. 48 lets a slot's
 * share hold a mean field of 729, whose rows carry their own shuffled neighbour lists (7.6 KB a row).
 */
const CHAIN_PART_ROWS = 48;
/** A planned event: its plan (~100 B) and 8 B per read; at most 2^20 reads planned (core's dataflow.ts). */
const PLAN_BYTES = 100;
const PLANNED_READS = 1 << 20;
/**
 * What an open run holds besides rows and plans: its shard writer's two DuckDB connections, its version
 * store, its calls' prompts. Measured: peak RSS grew by 0.68 MB per open run from 256 to 504 open mean fields
 * of 64 (bench/chains.mjs), 0.30 MB of it rows and plans.
 */
const OPEN_RUN_BYTES = 384 * 1024;

export interface SweepProgress extends ExecutorProgress {
  eventsTotal: number;
  runsTotal: number;
  /** Of `eventsWritten`, those found on disk when their run opened (a resume): not this session's pace. */
  eventsOnDisk: number;
  /** A real backend's requests open now, and how long the oldest has been open (s): progress while calls hang. */
  callsOpen?: number;
  oldestCallS?: number;
}

/** What a sweep tells its caller beyond progress (the CLI prints each as a line). */
export type SweepNotice =
  | { kind: 'resume'; runsComplete: number; runsPartial: number; runsTotal: number }
  | { kind: 'stale-lock'; holder: OutLockHolder }
  | { kind: 'repaired'; run: string; discarded: string[] };

export interface RunSweepOptions extends SweepOverrides {
  onProgress?(progress: SweepProgress): void;
  /** A resume, a dead process's lock taken over, damaged files of a run discarded. */
  onNotice?(notice: SweepNotice): void;
  /** Called once the plan is validated and before anything runs (the CLI prints where the corpus goes). */
  onPlan?(sweep: LoadedSweep): void;
  /** Rows per durable part of a run's shard (smaller: less lost on a crash, more files). */
  partRows?: number;
  /** Level of the JSON log written to <out>/log.jsonl (default info; 'silent' for none). */
  logLevel?: string;
  /** Aborting it stops the sweep gracefully: calls in flight finish, written events are made durable. */
  signal?: AbortSignal;
  /** Memory for the answers kept for the final measurement (default 256 MiB; past it the shards are read back). */
  traceBudgetBytes?: number;
  /** Replaces the in-process transport (tests, the cluster). */
  transport?: (services: ConstructorParameters<typeof InProcessTransport>[0]) => Transport;
}

/**
 * Runs a sweep embedded, or resumes it: runs whose shard is complete are skipped, a run with durable parts
 * continues after its last written event, and the result is the corpus a single uninterrupted run gives.
 */
export async function runSweep(specPath: string, options: RunSweepOptions = {}): Promise<SweepSummary> {
  const held: { lock?: OutLock } = {};
  try {
    return await sweepLocked(specPath, options, held);
  } finally {
    held.lock?.release();
  }
}

async function sweepLocked(specPath: string, options: RunSweepOptions, held: { lock?: OutLock }): Promise<SweepSummary> {
  const sweep = loadSweep(specPath, options);
  const { spec, out } = sweep;
  const previous = corpusToResume(sweep, { file: specPath, fix: 'choose another --out, or delete that folder to start over' });
  if (!previous) checkOutIsCorpus(out, options.force);
  if (previous) checkSameShard(specPath, out, previous.shard, sweep.shard, previous.code.panta);
  // Retries go to the sweep's log (debug: under a fault storm they are many); the log opens once input is valid.
  const logged: { log?: Logger } = {};
  const opened = await openSweepServices(sweep, specPath, held, logged);
  options.onPlan?.(sweep);
  const log = sweepLogger(out, options.logLevel ?? 'info');
  logged.log = log;
  sayStarted(sweep, previous !== null, opened.lock, log, options);
  const started = startManifest(sweep, previous, sweepMeta(spec, opened.encoders));
  const columns: EncoderColumn[] = opened.encoders.map((e) => ({ name: e.name, dim: e.dim }));
  const services = workerServices(sweep, { backend: opened.backend, encoders: opened.encoders, judge: opened.judge });
  const transport = options.transport ? options.transport(services) : new InProcessTransport(services);
  const embedded: EmbeddedSweep = { ...opened, sweep, options, log, columns, transport };
  const { executor, corpus } = await runEmbedded(embedded);
  const { judge } = opened;
  if (opened.health.unhealthy) {
    await judge.close();
    throw opened.health.unhealthy;
  }
  if (executor.stopped) {
    await judge.close();
    log.info({}, 'sweep stopped');
    return { out, status: 'stopped', runsComplete: 0, runsPlanned: sweep.runs.length, failed: [], eventsWritten: 0, final: [] };
  }
  // Adaptive rounds planned more runs than the start: the manifest counts them and records each group's grid.
  recordRounds(started, sweep);
  // The judge stays open through finish: an LLM judge scores a study table's rubrics there.
  let summary: SweepSummary;
  try {
    summary = await finishSweep(sweep, started, columns, judge, corpus.trace);
  } finally {
    await judge.close();
  }
  log.info(
    { status: summary.status, runsComplete: summary.runsComplete, events: summary.eventsWritten, failed: summary.failed },
    'sweep finished',
  );
  return summary;
}

type Backend = ReturnType<typeof createBackend>;
type Judge = ReturnType<typeof createJudge>;

/** What an embedded sweep calls: its backend (and whether its health breaker tripped), encoders and judge. */
interface SweepServices {
  backend: Backend;
  encoders: Encoder[];
  judge: Judge;
  health: { unhealthy?: EndpointUnhealthyError };
}

/** An embedded sweep once its input is checked, its folder locked and its log open. */
interface EmbeddedSweep extends SweepServices {
  sweep: LoadedSweep;
  options: RunSweepOptions;
  log: Logger;
  columns: EncoderColumn[];
  transport: Transport;
}

/**
 * Opens the backend, encoders and judge, checks what needs them opened, and takes the out folder's lock (in
 * `held`, for the caller to release); on a failure here everything opened closes again.
 */
async function openSweepServices(
  sweep: LoadedSweep,
  specPath: string,
  held: { lock?: OutLock },
  logged: { log?: Logger },
): Promise<SweepServices & { lock: OutLock }> {
  const { spec, out } = sweep;
  // A backend that cannot produce answers (its health breaker tripped) stops the sweep as a crash would (the
  // transport reports the first event it fails as fatal): rows not yet durable, the unusable replies recorded
  // since the endpoint went bad among them, are dropped, and the same command resumes after the durable ones.
  // The sweep ends with the breaker's one line instead of a corpus of "" answers.
  const health: { unhealthy?: EndpointUnhealthyError } = {};
  const backend = createBackend(spec.backend, sweep.prompts, specPath, {
    onRetry: (event) => logged.log?.debug(event, 'retry'),
    onUnhealthy: (error) => {
      health.unhealthy ??= error;
      logged.log?.error({ err: error.message, endpoint: error.endpoint }, 'backend unhealthy: stopping the sweep');
    },
  });
  // Opening an onnx encoder validates its model folder (one-line error, exit 2) before anything is written.
  const encoders = await openEncoders(spec.encoders, specPath);
  const judge = createJudge(spec.judge, specPath, sweep.prompts, out);
  try {
    // A whitening from another corpus must match the encoders as opened (an onnx encoder's dim) before anything is written.
    checkWhiteningSource(spec, sweep.specFile, specPath, sweep.prompts, encoders);
    await checkHeatBathStates(spec, sweep.prompts, encoders, specPath);
    makeOutFolder(out);
    held.lock = acquireOutLock(out);
  } catch (error) {
    await Promise.all([backend.close(), judge.close(), ...encoders.map((e) => e.close())]);
    throw error;
  }
  return { backend, encoders, judge, health, lock: held.lock };
}

/** Logs the sweep's start, and tells the caller of a lock taken over and of a resume. */
function sayStarted(sweep: LoadedSweep, resumed: boolean, lock: OutLock, log: Logger, options: RunSweepOptions): void {
  const { spec, out, runs } = sweep;
  const stale = lock.tookOver;
  if (stale) {
    log.warn({ holder: stale }, 'took over the lock of a process that is gone');
    options.onNotice?.({ kind: 'stale-lock', holder: stale });
  }
  const onDisk = resumed ? runsOnDisk(out) : undefined;
  log.info(
    {
      sweep: spec.name,
      runs: runs.length,
      fingerprint: sweep.fingerprint,
      ...(sweep.shard ? { shard: sweep.shard } : {}),
      resumed,
      ...onDisk,
      concurrency: spec.concurrency,
    },
    'sweep started',
  );
  if (onDisk) options.onNotice?.({ kind: 'resume', ...onDisk, runsTotal: runs.length });
}

/**
 * Runs every run through the executor into the corpus, with progress every event and every second; closes
 * the transport, backend and encoders after it (the judge stays open for finishing, unless the run failed).
 * Adaptive temperatures: round after round (adaptive-rounds.ts), each with an executor of its new runs.
 */
async function runEmbedded(s: EmbeddedSweep): Promise<{ executor: Executor<RunRecorder>; corpus: SweepCorpus }> {
  const { sweep, options, log, backend, judge, columns, transport } = s;
  const { spec, out } = sweep;
  const holder: { executor?: Executor<RunRecorder> } = {};
  const sizing = sweepSizing(spec.concurrency, columns, sweep.runs.length, spec.lookahead, callsAreSlow(spec));
  const corpus = new SweepCorpus({
    out,
    columns,
    judge,
    meta: { backend: backend.kind, model: backend.model },
    partRows: options.partRows ?? sizing.partRowsFor,
    log,
    onWritten: (count) => holder.executor?.written(count),
    traceBudgetBytes: options.traceBudgetBytes,
  });
  try {
    let executor = await runRound(s, sweep.runs, corpus, holder);
    const adaptive = adaptiveOf(spec);
    for (let round = 1; adaptive && round <= adaptive.rounds && !executor.stopped; round++) {
      // A round decides from every run before it: with one failed, the sweep ends failed here, and its resume
      // (the failed run run again) decides the rest.
      if (sweep.runs.some((r) => !existsSync(shardPath(out, r.runId)))) break;
      const added = await nextRound(sweep);
      log.info({ round, runs: added.length }, 'adaptive temperatures: round planned');
      if (added.length === 0) break;
      executor = await runRound(s, added, corpus, holder);
    }
    return { executor, corpus };
  } catch (error) {
    log.error({ err: error }, 'sweep failed');
    await judge.close();
    throw unhealthyCause(error) ?? s.health.unhealthy ?? error;
  } finally {
    await transport.close();
    await backend.close();
    for (const e of s.encoders) await e.close();
  }
}

/** One executor over `runs` (the sweep's, or an adaptive round's new ones), to its end or a stop. */
async function runRound(
  s: EmbeddedSweep,
  runs: RunPlan[],
  corpus: SweepCorpus,
  holder: { executor?: Executor<RunRecorder> },
): Promise<Executor<RunRecorder>> {
  const { sweep, options, backend, columns } = s;
  const { spec, out } = sweep;
  const eventsTotal = sweepEvents(runs);
  const onDisk = { events: 0 };
  // Chains hold slots only where a call takes time: a served model, or the surrogate with a latency.
  const sizing = sweepSizing(spec.concurrency, columns, runs.length, spec.lookahead, callsAreSlow(spec));
  const { maxActiveRuns, runBytes, openBytesBudget } = sizing;
  // Progress comes with events; while calls hang none come, so a timer reports every second too, with the
  // open requests and the oldest one's age ("12 calls in flight, oldest 95 s").
  const report = (p: ExecutorProgress): void => {
    const open = backend.openAttempts?.();
    options.onProgress?.({
      ...p,
      eventsTotal: eventsTotal - p.eventsSkipped,
      runsTotal: runs.length,
      eventsOnDisk: onDisk.events,
      ...(open ? { callsOpen: open.count, oldestCallS: Math.floor(open.oldestMs / 1000) } : {}),
    });
  };
  const ticker = setInterval(() => report(executor.progress()), 1000);
  ticker.unref();
  const executor: Executor<RunRecorder> = new Executor<RunRecorder>(chainsFirst(runs), {
    transport: s.transport,
    concurrency: spec.concurrency,
    maxActiveRuns,
    runBytes,
    openBytesBudget,
    open: (run) => openRunFromDisk(s, run, corpus, executor, onDisk),
    close: (active: ActiveRun<RunRecorder>): Promise<void> => corpus.closeRun(active.run, active.sink, runEnd(active)),
    onProgress: (p) => {
      live.update(p);
      report(p);
    },
    eventsTotal,
  });
  holder.executor = executor;
  const live = new LiveStatusWriter(out, executor, { eventsTotal, runsTotal: runs.length });
  live.start();
  const stop = () => executor.stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) executor.stop();
  try {
    await executor.run();
  } finally {
    clearInterval(ticker);
    live.stop(executor.stopped ? 'stopped' : 'finished');
    options.signal?.removeEventListener('abort', stop);
  }
  return executor;
}

/**
 * Opens a run where its shard stands on disk: damaged files discarded (and said), a finalized run complete
 * on disk (null), else a recorder after its last written event, with each agent's latest answer back in the
 * version store.
 */
async function openRunFromDisk(
  s: EmbeddedSweep,
  run: RunPlan,
  corpus: SweepCorpus,
  executor: Executor<RunRecorder>,
  onDisk: { events: number },
): Promise<ActiveRun<RunRecorder> | null> {
  const { log, options } = s;
  const progress = await shardProgress(s.sweep.out, run.runId);
  if (progress.discarded.length > 0) {
    log.warn({ run: run.runId, discarded: progress.discarded }, 'discarded damaged files of a run: it resumes after its last good part');
    options.onNotice?.({ kind: 'repaired', run: run.runId, discarded: progress.discarded });
  }
  onDisk.events += progress.nextEvent;
  if (progress.finalized) {
    executor.completeOnDisk(run, progress.nextEvent);
    return null;
  }
  const collector = await corpus.openRecorder(run, progress.nextEvent);
  const planner = plannerFor(s.sweep, run, progress.nextEvent, collector.control);
  if (progress.nextEvent > 0) {
    log.info({ run: run.runId, nextEvent: progress.nextEvent, parts: progress.parts.length }, 'run resumed');
    executor.written(progress.nextEvent);
    // A resumed run needs each agent's latest answer back in the version store.
    for (const [version, text] of await readVersionTexts(progress.parts, planner.liveVersions(), run.protocol, poolsBudget(run)))
      s.transport.publish(run.runId, version, text);
  }
  return { run, planner, sink: collector, inflight: 0, startedAt: performance.now() };
}

/** A folder holds one part of a job array, or a whole corpus: a resume must write the same. */
function checkSameShard(
  specPath: string,
  out: string,
  held: (Shard & { policy?: ShardPolicy }) | undefined,
  given: Shard | undefined,
  version: string,
): void {
  // A part dealt under another policy holds other runs than this version's part of the same number.
  const dealt = held?.policy ?? 'events';
  if (held && given && held.index === given.index && held.count === given.count && dealt !== SHARD_POLICY)
    throw new InputError(
      '--shard',
      '',
      `${out} holds ${shardLabel(held)} of a job array whose runs were dealt by ${dealt}; this Panta deals them by ${SHARD_POLICY}, so its part ${held.index} holds other runs`,
      `finish every part of that array with the Panta version that started it (${version}), or run the whole array again into new folders`,
    );
  if (held?.index === given?.index && held?.count === given?.count) return;
  const what = (s: Shard | undefined) => (s ? shardLabel(s) : 'the whole sweep');
  const fix = held
    ? `resume it with --shard ${held.index}/${held.count}, or choose another --out`
    : 'resume it without --shard, or choose another --out';
  throw new InputError(
    given ? '--shard' : specPath,
    given ? '' : 'out',
    `${out} holds ${what(held)} of this sweep, not ${what(given)}`,
    fix,
  );
}

/**
 * Runs open at once, rows per durable part, and what an open run weighs: its rows, its planner's window and
 * OPEN_RUN_BYTES. Parts are sized in bytes (PART_BYTES): a row holds its embeddings, its read versions (4
 * bytes each) and, where the graph does not share them, its neighbours (ownNeighbourBytes); a mean field of
 * 729 weighs 7.6 KB a row. A run that fits one part is encoded once (its part becomes its shard).
 * A run holds at most three parts of rows (one filling, two being written), fewer when it is shorter; runs
 * are opened while the open runs fit openBytesBudget, so memory does not grow with the runs open.
 * Up to `concurrency` runs may open (the executor opens one only while the open runs cannot fill the slots):
 * a chain (a full mean field, one event in flight) fills one slot, so a sweep of chains needs a run per slot.
 * A chain's window is short (plannerWindow) and its parts hold a third of what the rest leaves of
 * SLOT_BUFFER_BYTES (it writes one row per call: at 1 s a call a part of 8,192 rows would hold over two hours
 * of rows), so that `concurrency` chains fit the budget (mean fields up to N = 729 or so).
 * All this where calls are slow (`slowCalls`: a served model, seconds a call). Against the in-process
 * surrogate a chain runs as fast as the CPU writes it: small parts only cost encodings and a merge (the
 * quickstart's CPU 1.5x), so its chains write full parts within the 64 MiB of BUFFER_BUDGET_BYTES.
 * `runs`: runs in the sweep (no more are open than it has); `lookahead`: the spec's.
 */
export function sweepSizing(
  concurrency: number,
  columns: readonly EncoderColumn[],
  runs = Number.POSITIVE_INFINITY,
  lookahead = 16_384,
  slowCalls = true,
): {
  maxActiveRuns: number;
  partRows: number;
  partRowsFor(run: RunPlan): number;
  runBytes(run: RunPlan): number;
  openBytesBudget: number;
} {
  const maxActiveRuns = Math.max(1, Math.min(Math.max(2, concurrency), runs));
  const base = 256 + 4 * columns.reduce((s, c) => s + c.dim, 0);
  const rowBytes = (run: RunPlan) => base + 4 * (run.k + 1) + ownNeighbourBytes(run.geometry, run.n, run.k);
  const rowsFor = (bytes: number) => Math.min(8192, Math.max(256, Math.floor(PART_BYTES / bytes)));
  const partRows = rowsFor(base);
  const windowBytes = (run: RunPlan) => {
    const planned = Math.min(plannerWindow(run, lookahead), runEvents(run));
    return planned * PLAN_BYTES + 8 * Math.min(planned * (run.k + 1), PLANNED_READS);
  };
  const partRowsFor = (run: RunPlan) =>
    parallelism(run) > 1 || !slowCalls
      ? partRows
      : Math.min(
          partRows,
          Math.max(CHAIN_PART_ROWS, Math.floor((SLOT_BUFFER_BYTES - windowBytes(run) - OPEN_RUN_BYTES) / (3 * rowBytes(run)))),
        );
  return {
    maxActiveRuns,
    partRows,
    partRowsFor,
    runBytes: (run) => Math.min(runEvents(run), 3 * partRowsFor(run)) * rowBytes(run) + windowBytes(run) + OPEN_RUN_BYTES,
    openBytesBudget: slowCalls ? Math.max(BUFFER_BUDGET_BYTES, concurrency * SLOT_BUFFER_BYTES) : BUFFER_BUDGET_BYTES,
  };
}

/** Whether an agent's call takes time (a served model, or the surrogate with a latency): see sweepSizing. */
export function callsAreSlow(spec: SweepSpec): boolean {
  return spec.backend.kind !== 'surrogate' || spec.backend.latency_ms > 0;
}

/** Opens every encoder of the spec; if one fails, the ones already open are closed. */
export async function openEncoders(specs: SweepSpec['encoders'], file: string): Promise<Encoder[]> {
  const opened: Encoder[] = [];
  try {
    for (let i = 0; i < specs.length; i++) opened.push(await openEncoder(specs[i], file, i));
    return opened;
  } catch (error) {
    for (const e of opened) await e.close();
    throw error;
  }
}
