import { afterAll, describe, expect, it } from 'vitest';
import { runEvents } from '@panta/core';
import { createBackend } from '@panta/llm';
import { createJudge } from '@panta/judge';
import { RHEON6, tempDir, writeSpec } from '../../../test/helpers.js';
import {
  Executor,
  executeBoundary,
  executeEvent,
  loadSweep,
  openEncoders,
  plannerFor,
  type BoundaryOutcome,
  type BoundaryTask,
  type EventOutcome,
  type EventTask,
  type LoadedSweep,
  type Task,
  type Transport,
  type TransportMessage,
  type WorkerServices,
  workerServices,
} from '../src/index.js';
import { FakeSink } from './fake-transport.js';

/**
 * The Transport contract every transport keeps (the in-process one, BullMQ's), checked through what the
 * executor sees: each dispatched task comes back once, as a message naming that task; an event runs on the
 * texts of the versions it reads as the executor published them; a boundary comes back with its decision;
 * forgotten versions leave the store; close() returns once the transport's own queued work is done.
 */
export interface TransportUnderTest {
  /** A transport whose workers serve `sweep` (not started). */
  transportFor(sweep: LoadedSweep): Promise<Transport>;
  /** Version texts of a run the transport's store holds now. */
  heldVersions(transport: Transport, sweep: LoadedSweep, runId: string): Promise<number>;
  /** Releases what transportFor set up beside the transport (after transport.close()). */
  release(transport: Transport): Promise<void>;
}

/** A small sweep of the kind the contract is checked on: rings of 6 over two sweeps after t = 0. */
export function conformanceSweep(name: string, extra = '', trials = 2): LoadedSweep {
  const dir = tempDir('panta-transport-');
  const spec = `name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [6]
temperatures: [0.7]
trials: ${trials}
sweeps: 2
seed: 11
concurrency: 4
${extra}`;
  return loadSweep(writeSpec(dir, spec), { out: `${dir}/out` });
}

/** Services built from the sweep as a worker builds them (worker-context.ts, sweep.ts). */
export async function servicesFor(sweep: LoadedSweep): Promise<WorkerServices & { close(): Promise<void> }> {
  const backend = createBackend(sweep.spec.backend, sweep.prompts, sweep.specFile);
  const encoders = await openEncoders(sweep.spec.encoders, sweep.specFile);
  const judge = createJudge(sweep.spec.judge, sweep.specFile, sweep.prompts);
  return {
    ...workerServices(sweep, { backend, encoders, judge }),
    close: async () => {
      await backend.close();
      await judge.close();
      for (const e of encoders) await e.close();
    },
  };
}

/** What passed through a transport: every task dispatched and every message, in order. */
class Recording implements Transport {
  readonly dispatched: Task[] = [];
  readonly messages: TransportMessage[] = [];
  /** Versions forgotten, per run. */
  readonly forgotten = new Map<string, Set<number>>();

  constructor(readonly inner: Transport) {}

  start(onMessage: (message: TransportMessage) => void): Promise<void> {
    return this.inner.start((m) => {
      this.messages.push(m);
      onMessage(m);
    });
  }

  dispatch(task: Task): void {
    this.dispatched.push(task);
    this.inner.dispatch(task);
  }

  publish(runId: string, version: number, text: string): void {
    this.inner.publish(runId, version, text);
  }

  forget(runId: string, versions: readonly number[]): void {
    let set = this.forgotten.get(runId);
    if (!set) this.forgotten.set(runId, (set = new Set()));
    for (const v of versions) set.add(v);
    this.inner.forget(runId, versions);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Messages naming each task (by identity). */
  answersTo(task: Task): TransportMessage[] {
    return this.messages.filter((m) => m.type !== 'fatal' && m.task === task);
  }
}

/** Runs a whole sweep through the executor over the transport, with sinks that keep every row. */
async function runThrough(transport: Recording, sweep: LoadedSweep): Promise<Map<string, FakeSink>> {
  const sinks = new Map<string, FakeSink>();
  const executor: Executor<FakeSink> = new Executor<FakeSink>(sweep.runs, {
    transport,
    concurrency: sweep.spec.concurrency,
    maxActiveRuns: 8,
    open: async (run) => {
      const sink = new FakeSink(0, (count) => executor.written(count), { boundaries: true });
      sinks.set(run.runId, sink);
      return { run, planner: plannerFor(sweep, run, 0), sink, inflight: 0, startedAt: 0 };
    },
    close: async (active) => {
      if (active.error) throw active.error;
    },
  });
  await executor.run();
  return sinks;
}

/**
 * The answers a transport must give: each event run in event order on the texts of the events before it, each
 * boundary on the snapshot it names (the sweep's model is deterministic given the seed and the prompt).
 */
async function reference(
  sweep: LoadedSweep,
  tasks: readonly Task[],
): Promise<{ events: Map<string, EventOutcome>; boundaries: Map<string, BoundaryOutcome> }> {
  const services = await servicesFor(sweep);
  try {
    const texts = new Map<string, string>();
    const events = new Map<string, EventOutcome>();
    const boundaries = new Map<string, BoundaryOutcome>();
    const eventTasks = tasks.filter((t): t is EventTask => t.kind !== 'boundary').sort((a, b) => a.plan.event - b.plan.event);
    const read = (runId: string, versions: Float64Array) => Array.from(versions, (v) => texts.get(`${runId}|${v}`)!);
    for (const t of eventTasks) {
      const outcome = await executeEvent(t, read(t.run.runId, t.plan.readVersions), services);
      texts.set(`${t.run.runId}|${t.plan.event}`, outcome.version ?? outcome.response);
      events.set(`${t.run.runId}|${t.plan.event}`, outcome);
    }
    for (const t of tasks) {
      if (t.kind !== 'boundary') continue;
      boundaries.set(`${t.run.runId}|${t.sweep}`, await executeBoundary(t, read(t.run.runId, t.versions), services));
    }
    return { events, boundaries };
  } finally {
    await services.close();
  }
}

/** Reads `value` until it gives `want`, or gives up after a bound (a store written asynchronously). */
async function eventually(value: () => Promise<number>, want: number, tries = 200): Promise<number> {
  let got = await value();
  for (let i = 0; i < tries && got !== want; i++) {
    await new Promise((r) => setTimeout(r, 25));
    got = await value();
  }
  return got;
}

/** What every message may be compared on: the distributed transport hands back usage, not texts. */
const usage = (o: EventOutcome) => ({ calls: o.calls, tokens: o.promptTokens + o.completionTokens });

export function describeTransportConformance(name: string, subject: () => TransportUnderTest): void {
  describe(`the ${name} transport keeps the Transport contract`, () => {
    const opened: Transport[] = [];
    const open = async (sweep: LoadedSweep): Promise<Recording> => {
      const t = await subject().transportFor(sweep);
      opened.push(t);
      return new Recording(t);
    };
    afterAll(async () => {
      for (const t of opened) await subject().release(t);
    });

    it('answers each dispatched event once, naming the task it was given, run on the texts the executor published for the versions it reads', async () => {
      const sweep = conformanceSweep(`conformance-events-${name}`);
      const transport = await open(sweep);
      const sinks = await runThrough(transport, sweep);
      await transport.close();
      for (const run of sweep.runs) expect(sinks.get(run.runId)!.rows.length).toBe(runEvents(run));
      expect(transport.dispatched.length).toBe(sweep.runs.reduce((s, r) => s + runEvents(r), 0));
      for (const task of transport.dispatched) expect(transport.answersTo(task).map((m) => m.type)).toEqual(['outcome']);
      expect(transport.messages.length).toBe(transport.dispatched.length);
      const want = await reference(sweep, transport.dispatched);
      for (const m of transport.messages) {
        if (m.type !== 'outcome') continue;
        expect(usage(m.outcome), `${m.task.run.runId} event ${m.task.plan.event}`).toEqual(
          usage(want.events.get(`${m.task.run.runId}|${m.task.plan.event}`)!),
        );
      }
      // The reads matter: the same events on other texts ask for other prompts (else this proves nothing).
      const reader = transport.dispatched.find((t): t is EventTask => t.kind !== 'boundary' && t.plan.readVersions.length > 0)!;
      const services = await servicesFor(sweep);
      const elsewhere = await executeEvent(
        reader,
        Array.from(reader.plan.readVersions, () => 'Nobody knows.'),
        services,
      );
      await services.close();
      expect(usage(elsewhere)).not.toEqual(usage(want.events.get(`${reader.run.runId}|${reader.plan.event}`)!));
    });

    it('answers each sweep boundary once with the decision taken on the snapshot it names', async () => {
      const sweep = conformanceSweep(`conformance-boundaries-${name}`, 'early_stopping: {window: 1, min_sweeps: 1}\n');
      const transport = await open(sweep);
      const sinks = await runThrough(transport, sweep);
      await transport.close();
      const boundaries = transport.dispatched.filter((t): t is BoundaryTask => t.kind === 'boundary');
      expect(boundaries.length).toBeGreaterThanOrEqual(sweep.runs.length);
      for (const task of transport.dispatched) expect(transport.answersTo(task).length).toBe(1);
      const want = await reference(sweep, transport.dispatched);
      for (const task of boundaries) {
        const [m] = transport.answersTo(task);
        expect(m!.type).toBe('boundary');
        const got = (m as { outcome: BoundaryOutcome }).outcome;
        expect(got.sweep).toBe(task.sweep);
        expect(got.state).toEqual(want.boundaries.get(`${task.run.runId}|${task.sweep}`)!.state);
      }
      for (const run of sweep.runs)
        expect(sinks.get(run.runId)!.journal.map((j) => j.sweep)).toEqual(
          boundaries.filter((b) => b.run.runId === run.runId).map((b) => b.sweep),
        );
    });

    it('reports each call that failed as a failed message for its task, once', async () => {
      // A model nobody serves, tried once: every call fails at once (connection refused).
      const sweep = conformanceSweep(
        `conformance-failed-${name}`,
        'backend: {kind: openai, base_url: "http://127.0.0.1:9/v1", model: none, max_retries: 0, timeout_ms: 2000}\n',
      );
      const transport = await open(sweep);
      const messages: TransportMessage[] = [];
      let arrived = () => {};
      await transport.start((m) => {
        messages.push(m);
        arrived();
      });
      const planner = plannerFor(sweep, sweep.runs[0], 0);
      const tasks: EventTask[] = planner.take(3).map((plan) => ({ run: sweep.runs[0], plan }));
      const all = new Promise<void>((resolve) => (arrived = () => messages.length >= tasks.length && resolve()));
      for (const t of tasks) transport.dispatch(t);
      await all;
      await transport.close();
      expect(messages.map((m) => m.type)).toEqual(['failed', 'failed', 'failed']);
      for (const t of tasks) expect(transport.answersTo(t).length).toBe(1);
      for (const m of messages) expect((m as { error: Error }).error).toBeInstanceOf(Error);
    });

    it('forgets the versions it is told to and keeps the others', async () => {
      // One run: the in-process store counts versions over all runs.
      const sweep = conformanceSweep(`conformance-forget-${name}`, '', 1);
      const transport = await open(sweep);
      await runThrough(transport, sweep);
      const run = sweep.runs[0];
      const forgotten = transport.forgotten.get(run.runId) ?? new Set<number>();
      expect(forgotten.size).toBeGreaterThan(0);
      const kept = runEvents(run) - forgotten.size;
      const held = () => subject().heldVersions(transport.inner, sweep, run.runId);
      // A transport may apply forget() after the call returns (BullMQ's deletes go out on its next flush).
      expect(await eventually(held, kept)).toBe(kept);
      const rest = Array.from({ length: runEvents(run) }, (_, v) => v).filter((v) => !forgotten.has(v));
      transport.forget(run.runId, rest);
      expect(await eventually(held, 0)).toBe(0);
      await transport.close();
    });

    it('close() returns once the work asked of it before is done: a forget just before it is applied', async () => {
      const sweep = conformanceSweep(`conformance-close-${name}`, '', 1);
      const transport = await open(sweep);
      await runThrough(transport, sweep);
      const run = sweep.runs[0];
      const forgotten = transport.forgotten.get(run.runId) ?? new Set<number>();
      const held = () => subject().heldVersions(transport.inner, sweep, run.runId);
      expect(await eventually(held, runEvents(run) - forgotten.size)).toBe(runEvents(run) - forgotten.size);
      transport.forget(
        run.runId,
        Array.from({ length: runEvents(run) }, (_, v) => v).filter((v) => !forgotten.has(v)),
      );
      await transport.close();
      expect(await held()).toBe(0);
    });
  });
}
