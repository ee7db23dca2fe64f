import { BackendClosedError } from './errors.js';

interface Waiter {
  avoid: number;
  /** Higher goes first (the event's depth); equal ones in arrival order. */
  priority: number;
  seq: number;
  /** KV tokens the request may hold (tokens admission); 0 where unknown. */
  tokens: number;
  resolve: (endpoint: number) => void;
  reject: (err: Error) => void;
}

/**
 * Admission to a set of endpoints: at most `capOf(i)` requests open on endpoint i (a fixed `cap`, or a limit
 * that admission moves, never above `cap`), a new request goes to the endpoint with the fewest open (ties
 * rotate), and requests beyond every endpoint's cap wait in one queue, the highest priority (the deepest
 * event: the longest chain of calls still behind it) first and, within a priority, in arrival order.
 * A retry may ask to avoid the endpoint that just failed it; it gets that one only when no other has room.
 * When a limit grows, `kick()` lets waiters in. With `roomOf`, an endpoint also takes a request only while
 * `roomOf(i, tokens open there)` holds: requests say the KV tokens they may hold (tokens admission, see
 * AdmissionLimit.admits in @panta/core).
 */
export class EndpointPool {
  private readonly open: number[];
  private readonly openTokens: number[];
  private readonly peak: number[];
  private readonly served: number[];
  /** A binary heap of waiters (see before()). */
  private readonly heap: Waiter[] = [];
  private seq = 0;
  private cursor = 0;
  private closedWith: Error | undefined;
  private readonly capOf: (endpoint: number) => number;

  constructor(
    readonly size: number,
    readonly cap: number,
    capOf?: (endpoint: number) => number,
    private readonly roomOf?: (endpoint: number, openTokens: number) => boolean,
  ) {
    if (!(size >= 1) || !(cap >= 1)) throw new RangeError(`EndpointPool needs size >= 1 and cap >= 1 (got ${size}, ${cap})`);
    this.open = new Array<number>(size).fill(0);
    this.openTokens = new Array<number>(size).fill(0);
    this.peak = new Array<number>(size).fill(0);
    this.served = new Array<number>(size).fill(0);
    this.capOf = capOf ? (i) => Math.min(cap, Math.max(1, capOf(i))) : () => cap;
  }

  /**
   * Resolves with an endpoint index once a slot is free; call `release(index, tokens)` exactly once after.
   * Among waiting requests, a higher `priority` is let in first. `tokens`: the KV tokens the request may hold.
   */
  acquire(avoid = -1, priority = 0, tokens = 0): Promise<number> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.waiting === 0) {
      const i = this.pick(avoid);
      if (i >= 0) {
        this.take(i, tokens);
        return Promise.resolve(i);
      }
    }
    return new Promise<number>((resolve, reject) => this.push({ avoid, priority, seq: this.seq++, tokens, resolve, reject }));
  }

  release(endpoint: number, tokens = 0): void {
    if (!(this.open[endpoint] > 0)) throw new Error(`EndpointPool: release of endpoint ${endpoint} without a slot`);
    this.open[endpoint]--;
    this.openTokens[endpoint] = this.open[endpoint] === 0 ? 0 : Math.max(0, this.openTokens[endpoint] - tokens);
    this.kick();
  }

  /** Lets waiters in while some endpoint has room (after a release, or a limit that grew). */
  kick(): void {
    while (this.heap.length > 0) {
      const i = this.pick(this.heap[0].avoid);
      if (i < 0) break;
      const w = this.pop();
      this.take(i, w.tokens);
      w.resolve(i);
    }
  }

  /** Rejects every queued request and all later ones. */
  close(err: Error = new BackendClosedError('backend closed')): void {
    this.closedWith = err;
    const waiters = this.heap.splice(0);
    for (const w of waiters) w.reject(err);
  }

  /** Requests open now, per endpoint. */
  inFlight(): number[] {
    return [...this.open];
  }
  /** Requests open now on one endpoint. */
  openOn(endpoint: number): number {
    return this.open[endpoint];
  }
  /** KV tokens of the requests open now on one endpoint (as they said at acquire). */
  tokensOn(endpoint: number): number {
    return this.openTokens[endpoint];
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
    return this.heap.length;
  }

  private take(i: number, tokens: number): void {
    this.open[i]++;
    this.openTokens[i] += tokens;
    this.served[i]++;
    if (this.open[i] > this.peak[i]) this.peak[i] = this.open[i];
  }

  /** Least open below its cap, `avoid` last, ties broken by a rotating start; -1 when all are full. */
  private pick(avoid: number): number {
    let best = -1;
    let bestKey = Infinity;
    const n = this.size;
    for (let j = 0; j < n; j++) {
      const i = (this.cursor + j) % n;
      const open = this.open[i];
      if (open >= this.capOf(i) || (this.roomOf && !this.roomOf(i, this.openTokens[i]))) continue;
      const key = (i === avoid && n > 1 ? this.cap : 0) + open;
      if (key < bestKey) {
        bestKey = key;
        best = i;
      }
    }
    if (best >= 0) this.cursor = (best + 1) % n;
    return best;
  }

  private push(w: Waiter): void {
    const h = this.heap;
    let i = h.push(w) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  private pop(): Waiter {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

/** Higher priority first; within one, the earlier arrival. */
function before(a: Waiter, b: Waiter): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
}
