/**
 * Admission: how many requests a client keeps open on one LLM endpoint. The pure half (no clock, no I/O):
 * the limit's rules, the parser of vLLM's Prometheus `/metrics`, and the account of time the server spent
 * queueing. packages/llm/src/admission polls the servers and feeds these.
 *
 * Where the server says how many tokens its KV cache holds (vLLM's `vllm:cache_config_info`: num_gpu_blocks x
 * block_size), admission counts tokens (tokens mode): the client knows each request's KV tokens at most (its
 * prompt by the plan's estimate, CHARS_PER_TOKEN characters a token, plus max_tokens) and keeps those it has open
 * on the endpoint below a token budget, whatever the mix of sizes (see admits and observeTokens); the request
 * limit is then `max_in_flight`. The budget starts at `occupancy` (0.95) of the cache and follows what the server
 * reports holding: the client's count overstates it (a request waiting behind prefill holds no blocks yet, one in
 * prefill only its chunks so far, max_tokens are not decoded yet, prefix-cached blocks are shared, a reply on its
 * way back holds none), so while the server reports its cache below `kvHigh` with room for one more request the
 * size of those running and none waiting, a budget that bound grows by that room, past `occupancy` x the
 * capacity, up to `overcommit` (2) x the capacity; requests waiting with the cache the reason cut it (see
 * observeTokens). Elsewhere it counts requests, and two signals drive the limit, never above the configured
 * `max_in_flight` and never below 1:
 *
 * - The server's own load, where it serves vLLM's `/metrics` (`vllm:num_requests_waiting`,
 *   `vllm:num_requests_running`, `vllm:kv_cache_usage_perc`, or the older `vllm:gpu_cache_usage_perc`).
 *   vLLM admits a request only while its KV cache holds it; the rest wait in its queue. While requests wait
 *   and the cache is the reason (nearly full, or too full for one more request the size of those running, or
 *   its use not reported; a queue with room in the cache waits only for the next engine steps), the limit drops to this client's share of what the server runs (in flight x running / (running +
 *   waiting)): clients sharing an endpoint each keep their share, and together about what it holds. While
 *   none wait and the KV cache has room, a limit that is reached grows by half (slow start) until the
 *   server first queues, by one from then on, and with the cache nearly full it holds.
 * - Measured latency, where the server has no such metrics: AIMD as in TCP congestion control and Netflix's
 *   concurrency-limits library (AIMDLimit). Each reply's latency per unit of work (prompt and output tokens)
 *   is compared to the least seen (slowly forgotten); past `tolerance` times it, or on an overload (a
 *   timeout, 429, 503), the limit is cut by `backoff`, at most once per window of replies; otherwise a
 *   limit that is used grows by one per window.
 */

/** What vLLM's `/metrics` says about its load (sums over engines and models; KV usage the fullest's). */
export interface ServerLoad {
  waiting: number;
  running: number;
  /** Share of the KV cache in use, 0..1 (absent where the server does not say). */
  kvUsage?: number;
  /**
   * The KV cache's size in tokens: `vllm:cache_config_info`'s `num_gpu_blocks` x `block_size` (summed over
   * engines; absent where the server does not say).
   */
  capacityTokens?: number;
}

export interface AdmissionTuning {
  /** Limit while the server says nothing yet: the first window. Default: the max in latency mode, 4 with metrics. */
  initial: number;
  /** KV usage at or above which the limit stops growing (default 0.9). */
  kvHigh: number;
  /** Growth per metrics sample while none wait and the limit is reached (default 1.5). */
  growth: number;
  /** Latency per unit of work past this many times the least seen counts as queueing (default 2). */
  tolerance: number;
  /** Cut on queueing or overload, latency mode (default 0.9). */
  backoff: number;
  /** Tokens mode: the share of the KV cache this client keeps admitted by its own count (default 0.95). */
  occupancy: number;
  /**
   * Tokens mode: the most the token budget grows to, in multiples of the KV cache, while the server reports room
   * and none waiting (default 2: a request holding at least half the tokens the client counts for it).
   */
  overcommit: number;
}

const DEFAULT_TUNING = { kvHigh: 0.9, growth: 1.5, tolerance: 2, backoff: 0.9, occupancy: 0.95, overcommit: 2 };

/** Requests open at once on one endpoint: see the module comment for the rules. */
export class AdmissionLimit {
  private value: number;
  private readonly tuning: Omit<AdmissionTuning, 'initial'>;
  /** The least latency per unit of work seen (latency mode), forgotten by 0.1% a sample. */
  private baseline = Number.POSITIVE_INFINITY;
  /** The server has queued this client's requests once (metrics): growth is one a sample from then on. */
  private queued = false;
  /** Replies since the last cut: a cut waits for a window of replies sent after it. */
  private sinceCut = Number.POSITIVE_INFINITY;
  /** The endpoint's KV cache in tokens, once its metrics said (tokens mode); undefined: requests mode. */
  private capacity: number | undefined;
  /** Tokens mode: the KV tokens this client keeps admitted (Infinity in requests mode). */
  private budget = Number.POSITIVE_INFINITY;

  constructor(
    readonly max: number,
    tuning: Partial<AdmissionTuning> = {},
  ) {
    if (!(max >= 1)) throw new RangeError(`AdmissionLimit needs max >= 1 (got ${max})`);
    this.tuning = { ...DEFAULT_TUNING, ...tuning };
    this.value = clamp(tuning.initial ?? max, max);
  }

  /** The limit now: an integer in [1, max]. */
  get limit(): number {
    return Math.floor(this.value);
  }

  /** Starts over at `initial` (once an endpoint turns out to serve metrics). */
  reset(initial: number): void {
    this.value = clamp(this.capacity === undefined ? initial : this.max, this.max);
    this.queued = false;
    this.sinceCut = Number.POSITIVE_INFINITY;
  }

  /** The endpoint's KV cache in tokens, where known (tokens mode). */
  get capacityTokens(): number | undefined {
    return this.capacity;
  }

  /**
   * The KV tokens (by the client's count) this client keeps admitted: from `occupancy` x the capacity, up to
   * `overcommit` x it while the server has room, down to this client's share while others fill it; Infinity
   * where the capacity is unknown.
   */
  get tokenBudget(): number {
    return this.budget;
  }

  /**
   * The endpoint's KV cache holds `tokens` tokens (its metrics said): tokens mode. The request limit goes to
   * `max` (the server's own max_num_seqs bounds what runs) and the token budget to `occupancy` x `tokens`.
   */
  setCapacity(tokens: number): void {
    if (!(tokens > 0) || tokens === this.capacity) return;
    this.capacity = tokens;
    this.budget = this.tuning.occupancy * tokens;
    this.value = this.max;
  }

  /**
   * Whether one more request may go to the endpoint, with `open` requests and `openTokens` KV tokens (prompt
   * estimate + max_tokens each) of this client's open there: below the request limit, and in tokens mode
   * while the tokens open are below the budget. The request let in may take them past it: the server then
   * holds one request of this client in its queue, ready for the next blocks freed, and the KV cache stays
   * full; whatever its size, the deepest request waiting goes first and none is passed over for a smaller one.
   */
  admits(open: number, openTokens: number): boolean {
    return open < this.limit && openTokens < this.budget;
  }

  /**
   * A metrics sample, with this client's requests open on the endpoint when it was taken, and whether they
   * reached the limit since the previous sample (default: whether they reach it now). A sample taken while
   * calls are short can count none of them running: that a call waited for the limit is the sign it binds.
   */
  observeLoad(load: ServerLoad, inFlight: number, reached = inFlight >= this.limit, openTokens = 0): void {
    if (load.capacityTokens !== undefined) this.setCapacity(load.capacityTokens);
    if (this.capacity !== undefined) {
      this.observeTokens(load, inFlight, reached, openTokens, this.capacity);
      return;
    }
    // Requests wait in vLLM's queue because the KV cache cannot hold them (the limit to respect), or only
    // until an engine step takes them: they arrived since the last step, or its token budget went to other
    // prompts' prefill chunks (the GPU is busy; the cache still has room). The cache is the limit when it is
    // nearly full, or when one more request the size of those running (their mean share) would fill it.
    const kvBound = this.kvBound(load);
    if (load.waiting > 0 && kvBound) {
      const share = load.running + load.waiting > 0 ? (inFlight * load.running) / (load.running + load.waiting) : 1;
      this.value = clamp(Math.min(this.value, Math.floor(share)), this.max);
      this.queued = true;
    } else if (load.kvUsage !== undefined && load.kvUsage >= this.tuning.kvHigh) {
      // Full but not queueing: what runs now is what the server holds.
    } else if (reached) {
      // Slow start until the server first queues, then one more a sample (as TCP after its first loss): a
      // sample taken between one reply and the next call can show room the server does not have.
      this.value = clamp(this.queued ? this.value + 1 : Math.max(this.value + 1, this.value * this.tuning.growth), this.max);
    }
  }

  /**
   * Whether the KV cache is what keeps requests waiting: its use is not reported, it is nearly full (`kvHigh`),
   * or one more request the size of those running (their mean share) would take it there.
   */
  private kvBound(load: ServerLoad): boolean {
    const kv = load.kvUsage;
    return kv === undefined || kv >= this.tuning.kvHigh || (load.running > 0 && kv + kv / load.running >= this.tuning.kvHigh);
  }

  /**
   * Tokens mode. The budget is cut only where the cache is the reason requests wait (see kvBound): this client
   * keeps about one request in the server's queue (the one that took its tokens past the budget), so more than
   * one waiting there means too much was admitted (the budget grew past what the cache holds, or other clients
   * share the endpoint): the budget drops to this client's share of what the server runs (its tokens open x
   * running / (running + waiting)), and requests are let in again as the ones running finish. With room in the
   * cache for one more request of the running size, a budget that bound (`reached`) grows by that room (in the
   * server's tokens): up to `occupancy` x the capacity whether requests wait or not (a server busy with other
   * prompts' prefill shows some waiting while its cache has room), and past it, up to `overcommit` x the
   * capacity, only while none wait: the server holds less than the client counts, and every request it has is
   * running. Bound: the budget never exceeds `overcommit` x the capacity, nor the request limit `max_in_flight`.
   */
  private observeTokens(load: ServerLoad, inFlight: number, reached: boolean, openTokens: number, capacity: number): void {
    const kv = load.kvUsage;
    if (this.kvBound(load)) {
      if (load.waiting > 1 && inFlight > 0) {
        const share = (openTokens * load.running) / (load.running + load.waiting);
        this.budget = Math.max(1, Math.min(this.budget, share));
      }
    } else if (kv !== undefined && reached) {
      const ceiling = (load.waiting > 0 ? this.tuning.occupancy : this.tuning.overcommit) * capacity;
      const grown = this.budget + Math.max(0, this.tuning.kvHigh - kv) * capacity;
      this.budget = Math.max(this.budget, Math.min(ceiling, grown));
    }
  }

  /** A reply's latency per unit of work, with this client's requests open when it was sent (latency mode). */
  observeLatency(msPerWork: number, inFlightAtSend: number): void {
    if (!(msPerWork > 0 && Number.isFinite(msPerWork))) return;
    this.sinceCut++;
    this.baseline = Math.min(msPerWork, this.baseline * 1.001);
    if (msPerWork > this.tuning.tolerance * this.baseline) this.cut();
    else if (inFlightAtSend * 2 >= this.limit) this.value = clamp(this.value + 1 / this.value, this.max);
  }

  /** A timeout, 429 or 503: the server is past what it holds (latency mode). */
  observeOverload(): void {
    this.sinceCut++;
    this.cut();
  }

  private cut(): void {
    if (this.sinceCut < this.limit) return;
    this.sinceCut = 0;
    this.value = clamp(this.value * this.tuning.backoff, this.max);
  }
}

function clamp(v: number, max: number): number {
  return Math.min(max, Math.max(1, v));
}

/**
 * Reads vLLM's load from a Prometheus text exposition, or undefined where it has neither waiting nor running
 * requests by vLLM's names. Series with several label sets (engines, models) are summed; KV usage is the
 * highest, from `vllm:kv_cache_usage_perc` or, in older vLLM, `vllm:gpu_cache_usage_perc` (both 0..1).
 */
export function parseVllmMetrics(text: string): ServerLoad | undefined {
  let waiting: number | undefined;
  let running: number | undefined;
  let kv: number | undefined;
  let capacity: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('vllm:')) continue;
    const name = line.slice(0, nameEnd(line));
    const value = Number(
      line
        .slice(line.lastIndexOf('}') + 1 || name.length)
        .trim()
        .split(/\s+/)[0],
    );
    if (!Number.isFinite(value)) continue;
    if (name === 'vllm:num_requests_waiting') waiting = (waiting ?? 0) + value;
    else if (name === 'vllm:num_requests_running') running = (running ?? 0) + value;
    else if (name === 'vllm:kv_cache_usage_perc' || name === 'vllm:gpu_cache_usage_perc') kv = Math.max(kv ?? 0, value);
    else if (name === 'vllm:cache_config_info') {
      const blocks = Number(labelOf(line, 'num_gpu_blocks'));
      const blockSize = Number(labelOf(line, 'block_size'));
      if (blocks > 0 && blockSize > 0 && Number.isFinite(blocks * blockSize)) capacity = (capacity ?? 0) + blocks * blockSize;
    }
  }
  if (waiting === undefined && running === undefined) return undefined;
  const load: ServerLoad = { waiting: waiting ?? 0, running: running ?? 0 };
  if (kv !== undefined) load.kvUsage = kv;
  if (capacity !== undefined) load.capacityTokens = capacity;
  return load;
}

/** A label's value in one Prometheus sample line (`name{a="1",b="2"} v`), undefined where absent. */
function labelOf(line: string, label: string): string | undefined {
  const open = line.indexOf('{');
  const close = line.lastIndexOf('}');
  if (open < 0 || close < open) return undefined;
  const m = new RegExp(`(?:^|,)\\s*${label}="([^"]*)"`).exec(line.slice(open + 1, close));
  return m?.[1];
}

function nameEnd(line: string): number {
  for (let i = 0; i < line.length; i++) if (line[i] === '{' || line[i] === ' ' || line[i] === '\t') return i;
  return line.length;
}

/**
 * Time an endpoint spent queueing requests (it said some were waiting), so that a request's timeout can leave
 * it out. `mark(now, queueing)` records what the latest sample said; `total(now)` is the queueing time up to
 * `now` (an interval still open counts up to `now`). A request charges its elapsed time less the growth of
 * `total` since it was sent.
 */
export class QueueClock {
  private closed = 0;
  private since: number | undefined;

  mark(now: number, queueing: boolean): void {
    if (queueing && this.since === undefined) this.since = now;
    else if (!queueing && this.since !== undefined) {
      this.closed += Math.max(0, now - this.since);
      this.since = undefined;
    }
  }

  total(now: number): number {
    return this.closed + (this.since === undefined ? 0 : Math.max(0, now - this.since));
  }

  get queueing(): boolean {
    return this.since !== undefined;
  }
}
