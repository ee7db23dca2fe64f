import type { GpuCostModel } from './cost-model.js';

/**
 * vLLM V1's scheduler on a virtual clock: what one simulated GPU endpoint does with the requests it is sent,
 * under a {@link GpuCostModel}. Pure and deterministic: time is whatever the caller says (`advance`), in
 * seconds of simulated GPU time; the server (packages/llm/src/server/vllm-model.ts) maps it to wall time.
 *
 * What it models, after vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py) and KV-cache manager:
 * - continuous batching: engine steps back to back while there is work; a step schedules up to
 *   `maxBatchedTokens` tokens: first the running requests in admission order (one token for a decoding one, the
 *   rest of its prompt, as far as the budget goes, for one still in prefill: chunked prefill), then waiting
 *   requests while a sequence slot (`maxNumSeqs`), the budget and the KV cache allow. A waiting request that
 *   does not fit stops admission (no request behind it is taken first), as in vLLM.
 * - waiting order: arrival (`fcfs`) or `priority` (lower value first, ties by arrival), as vLLM's
 *   `--scheduling-policy fcfs|priority`.
 * - KV blocks as vLLM V1 allocates them (vllm/v1/core/sched/scheduler.py, kv_cache_manager.allocate_slots): a
 *   step gives each request it schedules the blocks for the tokens it computes in that step, no more (a waiting
 *   request is admitted when its cached prefix and its first chunk fit; a decoding one takes a new block every
 *   `blockTokens` tokens). Cached blocks nobody references count as free: they are evicted, least recently used
 *   first. When a running request cannot grow, the scheduler preempts: under `priority` the running request of
 *   the highest priority value (latest arrival on a tie), under `fcfs` the last admitted; the preempted one
 *   frees its blocks (its computed prompt blocks stay cached until evicted) and waits again, to recompute its
 *   prompt and the output so far (prefix-cache hits included) when it is readmitted. A step that preempted
 *   admits no waiting request.
 * - automatic prefix caching: full blocks of `blockTokens` prompt tokens are hashed by content chain (block i's
 *   hash covers blocks 0..i); a new request reuses the longest run of cached blocks its prompt starts with (never
 *   its last token); a block is cached once prefill has computed it, and a finished request's blocks become
 *   evictable, its last block first.
 * - step time: max(decodeStepFloorMs, prefill tokens x prefillUsPerToken + sampled tokens x decodeUsPerToken).
 *   The step that finishes a prompt samples its first output token, as in vLLM.
 *
 * Counters: `busyGpuSeconds` is the cost model's GPU time of the work done (prefill and decode at their per-token
 * prices, what `requestGpuSeconds` prices and `panta plan --gpu` adds up); `activeSeconds` the virtual time
 * with a step in flight; `kvBusySeconds` the virtual time during which the endpoint was saturated: at the
 * last scheduling point its KV cache could not hold one more request the mean size of those running (their
 * prompt + max_tokens; a cache that holds 8.99 prompts of a mean field of 256 is full with 8, at 89%), or its
 * KV usage was >= {@link KV_BUSY_USAGE}, or a request was left waiting, or every sequence slot was taken;
 * `kvHighSeconds` the same without the first condition (KV usage >= 90%, a request waiting, every slot
 * taken). `prefixQueries` / `prefixHits` count prompt tokens looked up and found in the prefix
 * cache when requests are admitted, as vLLM's `vllm:prefix_cache_queries` / `vllm:prefix_cache_hits` do;
 * `preemptions` the running requests preempted (`vllm:num_preemptions`).
 */

/** KV usage at or above which the endpoint counts as saturated (`kvBusySeconds`). */
export const KV_BUSY_USAGE = 0.9;

export type SchedulingPolicy = 'fcfs' | 'priority';

export interface VllmRequest {
  id: string;
  /** The prompt's token ids (their content decides prefix-cache hits; their count the prefill). */
  promptTokens: ArrayLike<number>;
  /** The request's `max_tokens`: what the KV cache reserves for output. */
  maxTokens: number;
  /** Tokens the model will generate (1..maxTokens; default maxTokens). */
  outputTokens?: number;
  /** vLLM's request `priority` (lower first) under the `priority` policy; default 0. */
  priority?: number;
  /** Virtual time it arrives (seconds, >= the engine's clock; default the clock). */
  arrival?: number;
}

export interface VllmCompletion {
  id: string;
  priority: number;
  arrival: number;
  /** When it was admitted (left the waiting queue). */
  admitted: number;
  /** When its first output token was sampled. */
  firstToken: number;
  finish: number;
  promptTokens: number;
  /** Prompt tokens served by the prefix cache. */
  cachedTokens: number;
  outputTokens: number;
  /** The cost model's GPU time of this request's work (= requestGpuSeconds(prompt - cached, output) unless preempted). */
  gpuSeconds: number;
  /** Times it was preempted (its prompt and output so far computed again each time). */
  preemptions: number;
}

interface Block {
  hash: number;
  refs: number;
}

interface Seq {
  id: string;
  order: number;
  priority: number;
  arrival: number;
  prompt: number;
  maxTokens: number;
  output: number;
  /** Chained hashes of the prompt's full blocks. */
  hashes: number[];
  /** The allocation epoch of its last failed admission (nothing freed or cached since: it still does not fit). */
  failedEpoch: number;
  /** The blocks that admission needed then. */
  failedNeed: number;
  aborted: boolean;
  /** Cached blocks this request references (its hits, then those it computed), in prompt order. */
  held: Block[];
  /** Blocks allocated to it that are not in `held`. */
  own: number;
  cached: number;
  /** Tokens to compute before the next token is sampled: the prompt, or after a preemption prompt + output so far. */
  target: number;
  /** Of `target`, computed so far. */
  computed: number;
  /** Tokens fed back in decode steps since `target` was computed (each one's KV written). */
  fed: number;
  generated: number;
  /** Times it was preempted. */
  preemptions: number;
  admitted: number;
  firstToken: number;
  gpuUs: number;
}

export interface VllmEngineStats {
  now: number;
  running: number;
  waiting: number;
  kvUsage: number;
  requests: number;
  completed: number;
  aborted: number;
  maxWaiting: number;
  busyGpuSeconds: number;
  activeSeconds: number;
  kvBusySeconds: number;
  kvHighSeconds: number;
  prefixQueries: number;
  prefixHits: number;
  steps: number;
  /** Running requests preempted (vLLM's `vllm:num_preemptions`). */
  preemptions: number;
}

export class VllmEngine {
  readonly model: GpuCostModel;
  readonly policy: SchedulingPolicy;
  readonly totalBlocks: number;
  private clock = 0;
  private order = 0;
  private readonly pending: Seq[] = []; // by arrival
  private readonly waiting: Seq[] = []; // by policy
  private running: Seq[] = [];
  private readonly ids = new Map<string, Seq>();
  private readonly cache = new Map<number, Block>();
  /** Cached blocks nobody references, least recently used first (Map keeps insertion order). */
  private readonly evictable = new Map<number, Block>();
  private ownBlocks = 0;
  /** Bumped whenever blocks are freed or cached: a request that did not fit may fit now. */
  private epoch = 0;
  private referencedBlocks = 0;
  private stepEnd: number | null = null;
  private stepBatch: [Seq, number][] = [];
  private scheduleAt: number | null = null;
  private saturated = false;
  /** Saturated by the 90% threshold, a request waiting or every slot taken alone (kvHighSeconds). */
  private high = false;
  private accruedTo = 0;
  private done: VllmCompletion[] = [];
  private readonly counters = {
    requests: 0,
    completed: 0,
    aborted: 0,
    maxWaiting: 0,
    busyGpuSeconds: 0,
    activeSeconds: 0,
    kvBusySeconds: 0,
    kvHighSeconds: 0,
    prefixQueries: 0,
    prefixHits: 0,
    steps: 0,
    preemptions: 0,
  };

  constructor(model: GpuCostModel, policy: SchedulingPolicy = 'fcfs') {
    this.model = model;
    this.policy = policy;
    this.totalBlocks = Math.floor(model.kvCapacityTokens / model.blockTokens);
  }

  /** The virtual clock (seconds): the last time `advance` reached. */
  get now(): number {
    return this.clock;
  }

  /** Blocks a request of this size reserves; more than `totalBlocks` can never be admitted. */
  blocksFor(promptTokens: number, maxTokens: number): number {
    return Math.ceil((promptTokens + maxTokens) / this.model.blockTokens);
  }

  /** Whether a request of this size can ever fit in the KV cache. */
  fits(promptTokens: number, maxTokens: number): boolean {
    return this.blocksFor(promptTokens, maxTokens) <= this.totalBlocks;
  }

  /** Hands the engine a request; it takes effect at its arrival, on the next `advance`. Throws a RangeError for one that can never fit or is malformed. */
  submit(req: VllmRequest): void {
    const prompt = req.promptTokens.length;
    const output = req.outputTokens ?? req.maxTokens;
    if (prompt < 1) throw new RangeError(`request ${req.id}: empty prompt`);
    if (!Number.isInteger(req.maxTokens) || req.maxTokens < 1)
      throw new RangeError(`request ${req.id}: maxTokens must be a positive integer`);
    if (!Number.isInteger(output) || output < 1 || output > req.maxTokens)
      throw new RangeError(`request ${req.id}: outputTokens must be an integer in 1..maxTokens`);
    if (!this.fits(prompt, req.maxTokens))
      throw new RangeError(
        `request ${req.id}: ${prompt} prompt + ${req.maxTokens} output tokens exceed the KV cache's ${this.totalBlocks * this.model.blockTokens} tokens`,
      );
    if (this.ids.has(req.id)) throw new RangeError(`request ${req.id}: id already in flight`);
    const arrival = req.arrival ?? this.clock;
    if (arrival < this.clock) throw new RangeError(`request ${req.id}: arrival ${arrival} before the engine's clock ${this.clock}`);
    const seq: Seq = {
      id: req.id,
      order: this.order++,
      priority: this.policy === 'priority' ? (req.priority ?? 0) : 0,
      arrival,
      prompt,
      maxTokens: req.maxTokens,
      output,
      hashes: blockHashes(req.promptTokens, this.model.blockTokens),
      held: [],
      own: 0,
      cached: 0,
      target: prompt,
      computed: 0,
      fed: 0,
      generated: 0,
      preemptions: 0,
      failedEpoch: -1,
      failedNeed: 0,
      aborted: false,
      admitted: Number.NaN,
      firstToken: Number.NaN,
      gpuUs: 0,
    };
    this.ids.set(seq.id, seq);
    this.counters.requests++;
    insertSorted(this.pending, seq, (a, b) => a.arrival - b.arrival || a.order - b.order);
  }

  /** Drops a request (the client went away, as vLLM aborts it): frees what it holds. False when it is not in flight. */
  abort(id: string): boolean {
    const seq = this.ids.get(id);
    if (!seq) return false;
    this.ids.delete(id);
    seq.aborted = true;
    this.counters.aborted++;
    for (const list of [this.pending, this.waiting]) {
      const i = list.indexOf(seq);
      if (i >= 0) {
        list.splice(i, 1);
        return true;
      }
    }
    this.release(seq);
    this.running = this.running.filter((s) => s !== seq);
    // A batch in flight still counts its time; its tokens for this request are dropped at the step's end.
    return true;
  }

  /** The next virtual time something happens (an arrival, a step's end, a step's start); Infinity when idle. */
  nextEventTime(): number {
    return Math.min(this.pending[0]?.arrival ?? Infinity, this.stepEnd ?? Infinity, this.scheduleAt ?? Infinity);
  }

  /** Runs the engine up to virtual time `t` (every event at or before it). */
  advance(t: number): void {
    if (t < this.clock) return;
    for (;;) {
      const arrival = this.pending[0]?.arrival ?? Infinity;
      const end = this.stepEnd ?? Infinity;
      const start = this.scheduleAt ?? Infinity;
      const next = Math.min(arrival, end, start);
      if (next > t) break;
      if (arrival === next) {
        const seq = this.pending.shift() as Seq;
        this.accrue(next);
        insertSorted(this.waiting, seq, this.policy === 'priority' ? byPriority : byArrival);
        if (this.stepEnd === null && this.scheduleAt === null) this.scheduleAt = next;
      } else if (end === next) {
        this.finishStep(next);
      } else {
        this.scheduleAt = null;
        this.startStep(next);
      }
    }
    this.accrue(t);
    this.clock = t;
  }

  /** Completions since the last call, in finishing order. */
  takeCompletions(): VllmCompletion[] {
    const out = this.done;
    this.done = [];
    return out;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get runningCount(): number {
    return this.running.length;
  }

  /** Share of KV blocks held by running requests (vLLM's kv_cache_usage_perc: 1 is full). */
  get kvUsage(): number {
    return (this.ownBlocks + this.referencedBlocks) / this.totalBlocks;
  }

  stats(): VllmEngineStats {
    return { now: this.clock, running: this.running.length, waiting: this.waiting.length, kvUsage: this.kvUsage, ...this.counters };
  }

  private accrue(t: number): void {
    if (t <= this.accruedTo) return;
    if (this.saturated) this.counters.kvBusySeconds += t - this.accruedTo;
    if (this.high) this.counters.kvHighSeconds += t - this.accruedTo;
    this.accruedTo = t;
  }

  /** Whether the KV cache could not hold one more request the mean size (prompt + max_tokens) of those running. */
  private full(): boolean {
    const n = this.running.length;
    if (n === 0) return false;
    let blocks = 0;
    for (const seq of this.running) blocks += this.blocksFor(seq.prompt, seq.maxTokens);
    return this.freeBlocks() < blocks / n;
  }

  private freeBlocks(): number {
    return this.totalBlocks - this.ownBlocks - this.referencedBlocks;
  }

  /**
   * Admits a waiting request if its cached prefix and its first chunk (`budget` tokens at most) fit: references
   * the cached blocks, allocates the chunk's, and returns the chunk's tokens; 0 when they do not fit.
   */
  private admit(seq: Seq, budget: number): number {
    const B = this.model.blockTokens;
    const maxHit = Math.min(Math.floor((seq.target - 1) / B), seq.hashes.length); // vLLM always computes the last token
    const hits: Block[] = [];
    for (let i = 0; i < maxHit; i++) {
      const b = this.cache.get(seq.hashes[i] as number);
      if (!b) break;
      hits.push(b);
    }
    const cached = hits.length * B;
    const n = Math.min(seq.target - cached, budget);
    const fresh = Math.ceil((cached + n) / B) - hits.length;
    let revived = 0;
    for (const b of hits) if (b.refs === 0) revived++;
    const need = fresh + revived;
    if (seq.failedEpoch === this.epoch && need >= seq.failedNeed) return 0;
    if (need > this.freeBlocks()) {
      seq.failedEpoch = this.epoch;
      seq.failedNeed = need;
      return 0;
    }
    for (const b of hits) {
      if (b.refs++ === 0) {
        this.evictable.delete(b.hash);
        this.referencedBlocks++;
      }
    }
    seq.held = hits;
    seq.own = 0;
    this.take(seq, fresh);
    seq.cached = cached;
    seq.computed = cached;
    return n;
  }

  /** Gives a running request `blocks` more fresh blocks; false (nothing taken) when the free ones are too few. */
  private grow(seq: Seq, blocks: number): boolean {
    if (blocks <= 0) return true;
    if (blocks > this.freeBlocks()) return false;
    this.take(seq, blocks);
    return true;
  }

  /** Fresh blocks come from the never-cached free pool first, then by evicting the least recently used. */
  private take(seq: Seq, blocks: number): void {
    let short = blocks - (this.freeBlocks() - this.evictable.size);
    for (const [hash] of this.evictable) {
      if (short <= 0) break;
      this.evictable.delete(hash);
      this.cache.delete(hash);
      short--;
    }
    seq.own += blocks;
    this.ownBlocks += blocks;
  }

  /** Preempts a running request (vLLM's recompute): frees its blocks; it waits to compute prompt + output again. */
  private preempt(seq: Seq): void {
    this.release(seq);
    this.counters.preemptions++;
    seq.preemptions++;
    seq.target = seq.prompt + seq.generated;
    seq.computed = 0;
    seq.fed = 0;
    seq.failedEpoch = -1;
    if (this.policy === 'priority') insertSorted(this.waiting, seq, byPriority);
    else this.waiting.unshift(seq); // vLLM prepends a preempted request under fcfs
  }

  private release(seq: Seq): void {
    this.epoch++;
    this.ownBlocks -= seq.own;
    seq.own = 0;
    for (let i = seq.held.length - 1; i >= 0; i--) {
      const b = seq.held[i] as Block;
      if (--b.refs === 0) {
        this.referencedBlocks--;
        this.evictable.set(b.hash, b);
      }
    }
    seq.held = [];
  }

  private startStep(t: number): void {
    const m = this.model;
    const B = m.blockTokens;
    let budget = m.maxBatchedTokens;
    const batch: [Seq, number][] = [];
    let preempted = false;
    // The running requests first, in admission order, each growing by the blocks its tokens of this step need;
    // one that cannot grow preempts the least important running request, itself last (vLLM V1's schedule()).
    for (let i = 0; i < this.running.length && budget > 0; ) {
      const seq = this.running[i] as Seq;
      const prefill = seq.computed < seq.target;
      const n = prefill ? Math.min(seq.target - seq.computed, budget) : 1;
      const need = Math.ceil((seq.computed + seq.fed + n) / B) - seq.held.length - seq.own;
      let ok = this.grow(seq, need);
      while (!ok) {
        const victim = this.policy === 'priority' ? leastImportant(this.running) : (this.running.at(-1) as Seq);
        const at = this.running.indexOf(victim);
        this.running.splice(at, 1);
        const scheduled = batch.findIndex(([s]) => s === victim);
        if (scheduled >= 0) {
          budget += (batch[scheduled] as [Seq, number])[1];
          batch.splice(scheduled, 1);
        }
        if (at < i) i--;
        this.preempt(victim);
        preempted = true;
        if (victim === seq) break;
        ok = this.grow(seq, need);
      }
      if (!ok) break;
      budget -= n;
      batch.push([seq, n]);
      i++;
    }
    this.accrue(t);
    while (!preempted && this.waiting.length > 0 && this.running.length < m.maxNumSeqs && budget > 0) {
      const seq = this.waiting[0] as Seq;
      const n = this.admit(seq, budget);
      if (n === 0) break;
      this.waiting.shift();
      if (Number.isNaN(seq.admitted)) seq.admitted = t;
      this.running.push(seq);
      this.counters.prefixQueries += seq.target;
      this.counters.prefixHits += seq.cached;
      budget -= n;
      batch.push([seq, n]);
    }
    this.counters.maxWaiting = Math.max(this.counters.maxWaiting, this.waiting.length);
    this.high = this.waiting.length > 0 || this.running.length >= m.maxNumSeqs || this.kvUsage >= KV_BUSY_USAGE;
    this.saturated = this.high || this.full();
    if (batch.length === 0) {
      this.saturated = this.high = this.waiting.length > 0;
      // A step that preempted every request it could run admits the waiting ones at the next scheduling point.
      if (preempted && this.waiting.length > 0) this.scheduleAt = t;
      return;
    }
    let us = 0;
    for (const [seq, n] of batch) {
      const prefill = seq.computed < seq.target;
      const cost = prefill ? n * m.prefillUsPerToken + (seq.computed + n === seq.target ? m.decodeUsPerToken : 0) : m.decodeUsPerToken;
      seq.gpuUs += cost;
      us += cost;
    }
    this.counters.busyGpuSeconds += us / 1e6;
    const seconds = Math.max(m.decodeStepFloorMs * 1000, us) / 1e6;
    this.counters.activeSeconds += seconds;
    this.counters.steps++;
    this.stepBatch = batch;
    this.stepEnd = t + seconds;
  }

  private finishStep(t: number): void {
    const B = this.model.blockTokens;
    this.accrue(t);
    const finished = new Set<Seq>();
    for (const [seq, n] of this.stepBatch) {
      if (seq.aborted) continue; // aborted mid-step
      if (seq.computed < seq.target) {
        seq.computed += n;
        // Cache the prompt blocks prefill has now computed; one another request cached meanwhile is shared instead.
        const full = Math.min(Math.floor(seq.computed / B), seq.hashes.length);
        for (let i = seq.held.length; i < full && seq.own > 0; i++) {
          const hash = seq.hashes[i] as number;
          let b = this.cache.get(hash);
          if (!b) {
            b = { hash, refs: 0 };
            this.cache.set(hash, b);
          } else if (b.refs === 0) this.evictable.delete(hash);
          if (b.refs++ === 0) this.referencedBlocks++;
          seq.held.push(b);
          this.epoch++;
          seq.own--;
          this.ownBlocks--;
        }
        if (seq.computed === seq.target) {
          seq.generated++;
          if (Number.isNaN(seq.firstToken)) seq.firstToken = t;
        }
      } else {
        seq.generated++;
        seq.fed++;
      }
      if (seq.generated >= seq.output) finished.add(seq);
    }
    this.stepBatch = [];
    this.stepEnd = null;
    if (finished.size > 0) {
      this.running = this.running.filter((s) => !finished.has(s));
      for (const seq of finished) {
        this.release(seq);
        this.ids.delete(seq.id);
        this.counters.completed++;
        this.done.push({
          id: seq.id,
          priority: seq.priority,
          arrival: seq.arrival,
          admitted: seq.admitted,
          firstToken: seq.firstToken,
          finish: t,
          promptTokens: seq.prompt,
          cachedTokens: seq.cached,
          outputTokens: seq.generated,
          gpuSeconds: seq.gpuUs / 1e6,
          preemptions: seq.preemptions,
        });
      }
    }
    if (this.running.length > 0 || this.waiting.length > 0) this.startStep(t);
    else this.saturated = false;
  }
}

/** The running request vLLM preempts under the priority policy: the highest priority value, the latest arrival on a tie. */
function leastImportant(running: Seq[]): Seq {
  let worst = running[0] as Seq;
  for (const s of running) if (s.priority > worst.priority || (s.priority === worst.priority && s.arrival >= worst.arrival)) worst = s;
  return worst;
}

function byArrival(a: Seq, b: Seq): number {
  return a.arrival - b.arrival || a.order - b.order;
}

function byPriority(a: Seq, b: Seq): number {
  return a.priority - b.priority || a.arrival - b.arrival || a.order - b.order;
}

function insertSorted(list: Seq[], seq: Seq, cmp: (a: Seq, b: Seq) => number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(list[mid] as Seq, seq) <= 0) lo = mid + 1;
    else hi = mid;
  }
  list.splice(lo, 0, seq);
}

/**
 * Chained content hashes of a prompt's full blocks: block i's covers tokens 0..(i+1)*blockTokens, so two prompts
 * share block i's hash only when they agree on everything up to its end (vLLM's block hash chain). Two 32-bit
 * FNV-1a-style lanes with different primes, kept as one 53-bit number (a Map key without a string).
 */
export function blockHashes(tokens: ArrayLike<number>, blockTokens: number): number[] {
  const full = Math.floor(tokens.length / blockTokens);
  const out = new Array<number>(full);
  let h1 = 0x811c9dc5;
  let h2 = 0x2545f491;
  let i = 0;
  for (let b = 0; b < full; b++) {
    for (const end = i + blockTokens; i < end; i++) {
      const t = tokens[i] as number;
      h1 = Math.imul(h1 ^ t, 0x01000193);
      h2 = Math.imul(h2 ^ t, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    out[b] = (h1 >>> 0) * 0x200000 + (h2 & 0x1fffff);
  }
  return out;
}
