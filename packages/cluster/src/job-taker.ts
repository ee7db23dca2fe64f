import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, Worker } from 'bullmq';
import { toError } from '@panta/core';
import type { Redis } from 'ioredis';
import type { Logger } from '@panta/engine';
import { EVENT_QUEUE } from './keys.js';
import { bullmq } from './cjs-deps.js';
import type { BatchJob } from './result-codec.js';

export interface JobTakerOptions {
  /** The worker's own connection, shared with BullMQ (which opens one more, to block on for jobs). */
  connection: Redis;
  /** Events this worker runs at once: a job is taken only while fewer are held. */
  capacity: number;
  /** BullMQ lock: a killed worker's jobs go back to the queue after about this long. */
  lockMs: number;
  log: Logger;
  /**
   * Runs a job's events, calling `finished` once per event as it ends (its slot is free again) and
   * resolving once all have; a rejection fails the job, which BullMQ retries.
   */
  process(job: Job<BatchJob>, finished: () => void): Promise<void>;
}

/** Events a job holds a slot for: a boundary is one. */
const sizeOf = (job: Job<BatchJob>): number => (job.data.boundary ? 1 : job.data.events.length);

/**
 * Takes event jobs from the queue whenever this worker has a free slot, whatever the jobs' sizes. BullMQ's
 * own loop counts jobs, not events: with jobs of many events one worker took a whole flush while another
 * idled, and with jobs of one event each Redis paid BullMQ's steps per event. Jobs are fetched by hand
 * (BullMQ's manual processing: a token per job, locks renewed here, stalled jobs moved back by BullMQ's
 * checker), so a job may wait behind at most its own events beyond the free slots.
 */
export class JobTaker {
  private readonly worker: Worker<BatchJob>;
  /** The jobs held; `finishing` once their move to completed or failed is on its way (that move deletes the lock). */
  private readonly held = new Map<string, { job: Job<BatchJob>; token: string; done: Promise<void>; finishing: boolean }>();
  /** Events of the jobs held that have not finished. */
  private backlog = 0;
  private room?: () => void;
  private closing = false;
  private seq = 0;
  private loop: Promise<void> = Promise.resolve();
  private renewal?: NodeJS.Timeout;
  /** When the last renewal began: a lock lost after a long gap names the stall that let it lapse. */
  private renewedAt = performance.now();

  constructor(private readonly options: JobTakerOptions) {
    this.worker = new (bullmq().Worker)<BatchJob>(EVENT_QUEUE, null, {
      connection: options.connection,
      lockDuration: options.lockMs,
      stalledInterval: options.lockMs,
      // A killed worker stalls its jobs; they must come back however often that happens (the commit is idempotent).
      maxStalledCount: 1_000_000,
      // How long one fetch blocks on an empty queue (seconds): also how long stopping may wait for it.
      drainDelay: 1,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 1000 },
    });
    this.worker.on('error', (err) => options.log.warn({ err: err.message }, 'queue error'));
  }

  async start(): Promise<void> {
    await this.worker.startStalledCheckTimer();
    this.renewal = setInterval(() => void this.renew(), Math.max(100, this.options.lockMs / 2));
    this.loop = this.take();
  }

  /** Stops taking jobs, finishes the ones held, and closes the queue connection. */
  async close(): Promise<void> {
    this.closing = true;
    this.room?.();
    await this.loop;
    await Promise.all([...this.held.values()].map((h) => h.done));
    if (this.renewal) clearInterval(this.renewal);
    await this.worker.close();
  }

  private async take(): Promise<void> {
    while (!this.closing) {
      if (this.backlog >= this.options.capacity) {
        await new Promise<void>((resolve) => (this.room = resolve));
        this.room = undefined;
        continue;
      }
      const token = `${this.worker.id}:${this.seq++}`;
      let job: Job<BatchJob> | undefined;
      try {
        job = await this.worker.getNextJob(token, { block: true });
      } catch (error) {
        if (this.closing) break;
        this.options.log.warn({ err: toError(error).message }, 'could not take a job (retrying)');
        await sleep(1000);
        continue;
      }
      // A job taken while closing is run all the same: it is locked to this worker now.
      if (job) this.run(job, token);
    }
  }

  private run(job: Job<BatchJob>, token: string): void {
    const size = sizeOf(job);
    let left = size;
    this.backlog += size;
    const finished = () => {
      if (left === 0) return;
      left--;
      this.free(1);
    };
    const entry = { job, token, done: Promise.resolve(), finishing: false };
    const done = this.options
      .process(job, finished)
      .then(
        () => {
          entry.finishing = true;
          return job.moveToCompleted(null, token, false);
        },
        (error: unknown) => {
          const err = toError(error);
          this.options.log.warn({ job: job.id, err: err.message }, 'job failed (BullMQ retries it)');
          entry.finishing = true;
          return job.moveToFailed(err, token, false);
        },
      )
      .catch((error: unknown) => this.options.log.warn({ job: job.id, err: toError(error).message }, 'could not finish a job'))
      .finally(() => {
        this.held.delete(job.id!);
        this.free(left);
        left = 0;
      });
    entry.done = done.then(() => undefined);
    this.held.set(job.id!, entry);
  }

  private free(events: number): void {
    if (events === 0) return;
    this.backlog -= events;
    this.room?.();
  }

  /** Extends the locks of the jobs held (BullMQ's own loop would; jobs fetched by hand are renewed here). */
  private async renew(): Promise<void> {
    const now = performance.now();
    const sinceLastMs = Math.round(now - this.renewedAt);
    this.renewedAt = now;
    if (this.held.size === 0) return;
    const held = [...this.held.values()];
    try {
      const lost = await this.worker.extendJobLocks(
        held.map((h) => h.job.id!),
        held.map((h) => h.token),
        this.options.lockMs,
      );
      // A job finished while its lock was being renewed is no loss: its move to completed (or failed) deletes the
      // lock, and may reach Redis before the renewal does, while the job is still held here until that move's
      // reply is read. Counting those (2-6 a run in bench/gpu-sim, each 15 s after the renewal before it) named
      // lost locks that had sent nothing twice.
      const still = lost.filter((id) => this.held.get(id)?.finishing === false);
      if (still.length > 0)
        this.options.log.warn(
          // The time since the renewal before: past the lock's duration, this process stalled (its event loop held
          // or its CPU not given) rather than Redis losing the lock.
          { jobs: still, sinceLastRenewalMs: sinceLastMs, lockMs: this.options.lockMs },
          'lost the lock of jobs (their events may run twice; commits stay exactly once)',
        );
    } catch (error) {
      this.options.log.warn({ err: toError(error).message }, 'could not renew job locks');
    }
  }
}
