import type { Redis } from 'ioredis';
import { redact } from '@panta/core';
import type { EventTask, RunEnd, RunSink } from '@panta/engine';
import type { Control, RoundPlanned, RunClosed, RunOpened, RowsWritten } from './redis/inbox.js';
import { sendToCollector } from './redis/inboxes.js';
import type { SweepStore } from './redis/sweep-store.js';
import { collectorKeys, type SweepKeys } from './keys.js';

export type { Control } from './redis/inbox.js';

/**
 * The scheduler's handle on a run whose rows the collector process writes: `accept` resolves once the
 * collector reports the row appended, so the executor's window and retirement work as embedded.
 */
export class RemoteSink implements RunSink {
  private readonly waiting = new Map<number, () => void>();

  constructor(
    public written: number,
    private readonly onWritten: (count: number) => void,
    readonly control?: Control,
    /** Asks the collector for this run's rows now (the executor waits on nothing else). */
    readonly rowsWanted?: () => void,
  ) {}

  /** The collector journalled the boundary before the scheduler heard of it: nothing left to wait for. */
  async acceptBoundary(): Promise<void> {}

  accept(task: EventTask): Promise<void> {
    if (task.plan.event < this.written) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(task.plan.event, resolve));
  }

  get backlog(): number {
    return this.waiting.size;
  }

  /** Counts only grow: a restarted collector rewrites rows it had appended but not made durable. */
  advance(count: number): void {
    if (count <= this.written) return;
    for (let e = this.written; e < count; e++) {
      const resolve = this.waiting.get(e);
      if (resolve) {
        this.waiting.delete(e);
        resolve();
      }
    }
    this.onWritten(count - this.written);
    this.written = count;
  }
}

export interface Opened {
  next: number;
  finalized: boolean;
  control?: Control;
}

/**
 * Requests to the collector process (open a run where its durable rows end, close it) over the collector's
 * inbox, with replies through the scheduler's. Requests are idempotent, so a restarted collector simply
 * answers the ones still pending in its consumer group.
 */
export class CollectorSink {
  private readonly opening = new Map<string, (o: Opened) => void>();
  private readonly closing = new Map<string, () => void>();
  private readonly sinks = new Map<string, RemoteSink>();
  private readonly planning = new Map<number, (m: RoundPlanned) => void>();

  constructor(
    private readonly redis: Redis,
    private readonly store: SweepStore,
    /** The collector shard that writes each run (collectorShards), and how many there are. */
    private readonly shards: { of: ReadonlyMap<string, number>; count: number } = { of: new Map(), count: 1 },
  ) {}

  /** The keys of the collector shard that writes `runId`. */
  private keysOf(runId: string): SweepKeys {
    return collectorKeys(this.store.keys, this.shards.of.get(runId) ?? 0);
  }

  open(runId: string): Promise<Opened> {
    const reply = new Promise<Opened>((resolve) => this.opening.set(runId, resolve));
    return sendToCollector(this.redis, this.keysOf(runId), { op: 'open', run: runId }).then(() => reply);
  }

  sink(runId: string, next: number, onWritten: (count: number) => void, control?: Control): RemoteSink {
    // A failed request only costs the paced wait it was meant to cut (the rows come at the collector's pace).
    const sink = new RemoteSink(next, onWritten, control, () => {
      sendToCollector(this.redis, this.keysOf(runId), { op: 'rows', run: runId }).catch(() => undefined);
    });
    this.sinks.set(runId, sink);
    return sink;
  }

  close(runId: string, end: RunEnd): Promise<void> {
    const reply = new Promise<void>((resolve) => this.closing.set(runId, resolve));
    return sendToCollector(this.redis, this.keysOf(runId), {
      op: 'close',
      run: runId,
      status: end.status,
      wallMs: end.wallMs,
      ...(end.error ? { error: redact(end.error) } : {}),
    })
      .then(() => reply)
      .then(() => {
        this.sinks.delete(runId);
      });
  }

  /**
   * Adaptive temperatures: asks the collector (shard 0, which finishes the corpus and reads every shard) for
   * round `round`'s grids, computed from the runs under `grids` (the round before's), all closed.
   */
  planRound(round: number, grids: [string, number[]][]): Promise<RoundPlanned> {
    const reply = new Promise<RoundPlanned>((resolve) => this.planning.set(round, resolve));
    return sendToCollector(this.redis, this.store.keys, { op: 'round', round, grids }).then(() => reply);
  }

  /**
   * Asks the collector to write runs.parquet, whitening, order parameters and the manifest, then exit; with
   * shards, every shard makes its rows durable and exits, and shard 0 finishes the corpus once all have.
   */
  async finish(): Promise<void> {
    await this.store.setPhase('finishing');
    for (let shard = 0; shard < this.shards.count; shard++)
      await sendToCollector(this.redis, collectorKeys(this.store.keys, shard), { op: 'finish' });
  }

  /** Tells every collector shard to stop with `error` (a worker's backend cannot produce answers). */
  async stop(error: string): Promise<void> {
    for (let shard = 0; shard < this.shards.count; shard++)
      await sendToCollector(this.redis, collectorKeys(this.store.keys, shard), { op: 'stop', error });
  }

  /** Whether a request is waiting for the collector (the scheduler says so while it waits). */
  get waitingForCollector(): boolean {
    return this.opening.size > 0 || this.closing.size > 0 || this.planning.size > 0;
  }

  deliver(m: RunOpened | RunClosed | RowsWritten | RoundPlanned): void {
    if (m.op === 'round') {
      const resolve = this.planning.get(m.round);
      this.planning.delete(m.round);
      resolve?.(m);
    } else if (m.op === 'opened') {
      const resolve = this.opening.get(m.run);
      this.opening.delete(m.run);
      resolve?.({ next: m.next, finalized: m.finalized, ...(m.control ? { control: m.control } : {}) });
    } else if (m.op === 'closed') {
      const resolve = this.closing.get(m.run);
      this.closing.delete(m.run);
      resolve?.();
    } else {
      for (const [runId, count] of Object.entries(m.counts)) this.sinks.get(runId)?.advance(count);
    }
  }
}
