import type { BatchStats } from './types.js';

/** How long a generation takes. `wait` resolves true when done, false when the client went away first. */
export interface LatencyModel {
  wait(tokens: number, signal: AbortSignal): Promise<boolean>;
  stats(): BatchStats | undefined;
  close(): void;
}

/** Sleeps `ms`, or less if aborted. */
export function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A fixed time per call, whatever the load. */
export class FixedLatency implements LatencyModel {
  constructor(private readonly ms: number) {}
  wait(_tokens: number, signal: AbortSignal): Promise<boolean> {
    return delay(this.ms, signal);
  }
  stats(): undefined {
    return undefined;
  }
  close(): void {}
}

interface Sequence {
  /** Tokens still to generate (fractional: the batch advances continuously). */
  remaining: number;
  resolve: (done: boolean) => void;
  state: 'queued' | 'running' | 'done';
}

/** Below this many milliseconds of work left, a sequence counts as finished (timers have 1 ms resolution). */
const EPSILON_MS = 0.25;

/**
 * Continuous batching as vLLM does it: at most `slots` sequences generate at once, each one token per engine
 * step; a step takes tokenMs * (1 + slowdown * (running - 1)), so a fuller batch is slower per sequence and
 * faster in total. Requests beyond the slots wait FIFO and join the batch as soon as a sequence ends.
 *
 * Simulated as a fluid: between two changes of the batch (an arrival, an end, an abort) every running
 * sequence advances at 1 / stepTime tokens per ms; one timer is armed for the next end. A client that goes
 * away frees its slot at once.
 */
export class ContinuousBatching implements LatencyModel {
  private readonly running: Sequence[] = [];
  private queue: Sequence[] = [];
  private queueHead = 0;
  private last = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly s: BatchStats;

  constructor(
    readonly slots: number,
    readonly tokenMs: number,
    readonly slowdown: number,
  ) {
    this.s = { slots, running: 0, queued: 0, maxRunning: 0, maxQueued: 0, busySlotMs: 0, activeMs: 0, finished: 0, aborted: 0 };
  }

  private stepMs(running: number): number {
    return this.tokenMs * (1 + this.slowdown * Math.max(0, running - 1));
  }

  wait(tokens: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const seq: Sequence = { remaining: Math.max(0, tokens), resolve, state: 'queued' };
      const onAbort = () => this.abort(seq);
      signal.addEventListener('abort', onAbort, { once: true });
      seq.resolve = (done) => {
        signal.removeEventListener('abort', onAbort);
        resolve(done);
      };
      this.advance();
      this.queue.push(seq);
      this.s.queued++;
      this.settle();
    });
  }

  /** Moves every running sequence forward to now. */
  private advance(): void {
    const now = performance.now();
    const elapsed = now - this.last;
    this.last = now;
    const r = this.running.length;
    if (r > 0 || this.s.queued > 0) this.s.activeMs += elapsed;
    if (r === 0 || elapsed <= 0) return;
    this.s.busySlotMs += elapsed * r;
    const tokens = elapsed / this.stepMs(r);
    for (const seq of this.running) seq.remaining -= tokens;
  }

  /** Ends what is finished, admits what fits, and arms the timer for the next end. */
  private settle(): void {
    for (;;) {
      const step = this.stepMs(this.running.length);
      for (let i = this.running.length - 1; i >= 0; i--) {
        const seq = this.running[i];
        if (seq.remaining * step <= EPSILON_MS) {
          this.running.splice(i, 1);
          seq.state = 'done';
          this.s.finished++;
          seq.resolve(true);
        }
      }
      let admitted = false;
      while (this.running.length < this.slots && this.queueHead < this.queue.length) {
        const seq = this.queue[this.queueHead++];
        if (seq.state !== 'queued') continue;
        seq.state = 'running';
        this.s.queued--;
        this.running.push(seq);
        admitted = true;
      }
      if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.queueHead);
        this.queueHead = 0;
      }
      if (this.running.length > this.s.maxRunning) this.s.maxRunning = this.running.length;
      // A sequence admitted with nothing to generate ends at once: go round again.
      const next = this.stepMs(this.running.length);
      if (!admitted || !this.running.some((q) => q.remaining * next <= EPSILON_MS)) break;
    }
    this.s.running = this.running.length;
    if (this.s.queued > this.s.maxQueued) this.s.maxQueued = this.s.queued;
    this.arm();
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running.length === 0) return;
    let min = Infinity;
    for (const seq of this.running) if (seq.remaining < min) min = seq.remaining;
    const ms = Math.max(1, Math.ceil(min * this.stepMs(this.running.length) - EPSILON_MS));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.advance();
      this.settle();
    }, ms);
  }

  private abort(seq: Sequence): void {
    if (seq.state === 'done') return;
    this.advance();
    if (seq.state === 'running') this.running.splice(this.running.indexOf(seq), 1);
    else this.s.queued--;
    seq.state = 'done';
    this.s.aborted++;
    seq.resolve(false);
    this.settle();
  }

  stats(): BatchStats {
    this.advance();
    return { ...this.s };
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const seq of [...this.running, ...this.queue.slice(this.queueHead)]) {
      if (seq.state !== 'done') {
        seq.state = 'done';
        seq.resolve(false);
      }
    }
    this.running.length = 0;
    this.queue = [];
    this.queueHead = 0;
    this.s.running = 0;
    this.s.queued = 0;
  }
}
