import { BackendClosedError } from './errors.js';

interface Waiter {
  avoid: number;
  resolve: (endpoint: number) => void;
  reject: (err: Error) => void;
}

/**
 * Admission to a set of endpoints: at most `cap` requests open per endpoint, a new request goes to the
 * endpoint with the fewest open (ties rotate), and requests beyond every endpoint's cap wait in one FIFO queue.
 * A retry may ask to avoid the endpoint that just failed it; it gets that one only when no other has room.
 */
export class EndpointPool {
  private readonly open: number[];
  private readonly peak: number[];
  private readonly served: number[];
  private readonly queue: Waiter[] = [];
  private head = 0;
  private cursor = 0;
  private closedWith: Error | undefined;

  constructor(
    readonly size: number,
    readonly cap: number,
  ) {
    if (!(size >= 1) || !(cap >= 1)) throw new RangeError(`EndpointPool needs size >= 1 and cap >= 1 (got ${size}, ${cap})`);
    this.open = new Array<number>(size).fill(0);
    this.peak = new Array<number>(size).fill(0);
    this.served = new Array<number>(size).fill(0);
  }

  /** Resolves with an endpoint index once a slot is free; call `release(index)` exactly once after. */
  acquire(avoid = -1): Promise<number> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.waiting === 0) {
      const i = this.pick(avoid);
      if (i >= 0) {
        this.take(i);
        return Promise.resolve(i);
      }
    }
    return new Promise<number>((resolve, reject) => this.queue.push({ avoid, resolve, reject }));
  }

  release(endpoint: number): void {
    if (!(this.open[endpoint] > 0)) throw new Error(`EndpointPool: release of endpoint ${endpoint} without a slot`);
    this.open[endpoint]--;
    while (this.waiting > 0) {
      const i = this.pick(this.queue[this.head].avoid);
      if (i < 0) break;
      const w = this.queue[this.head];
      this.queue[this.head++] = undefined as unknown as Waiter;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue.splice(0, this.head);
        this.head = 0;
      }
      this.take(i);
      w.resolve(i);
    }
  }

  /** Rejects every queued request and all later ones. */
  close(err: Error = new BackendClosedError('backend closed')): void {
    this.closedWith = err;
    const waiters = this.queue.splice(this.head);
    this.queue.length = 0;
    this.head = 0;
    for (const w of waiters) w.reject(err);
  }

  /** Requests open now, per endpoint. */
  inFlight(): number[] {
    return [...this.open];
  }
  /** Most requests ever open at once, per endpoint. */
  peakInFlight(): number[] {
    return [...this.peak];
  }
  /** Slots granted so far, per endpoint. */
  granted(): number[] {
    return [...this.served];
  }
  get waiting(): number {
    return this.queue.length - this.head;
  }

  private take(i: number): void {
    this.open[i]++;
    this.served[i]++;
    if (this.open[i] > this.peak[i]) this.peak[i] = this.open[i];
  }

  /** Least open below the cap, `avoid` last, ties broken by a rotating start; -1 when all are full. */
  private pick(avoid: number): number {
    let best = -1;
    let bestKey = Infinity;
    const n = this.size;
    for (let j = 0; j < n; j++) {
      const i = (this.cursor + j) % n;
      const open = this.open[i];
      if (open >= this.cap) continue;
      const key = (i === avoid && n > 1 ? this.cap : 0) + open;
      if (key < bestKey) {
        bestKey = key;
        best = i;
      }
    }
    if (best >= 0) this.cursor = (best + 1) % n;
    return best;
  }
}
