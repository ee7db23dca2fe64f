import { CHARS_PER_TOKEN, type GpuCostModel, type SchedulingPolicy, type VllmCompletion, VllmEngine } from '@panta/core';

/**
 * How the simulated endpoint turns text into token ids. No npm package in this project ships Qwen's tokenizer,
 * so it uses the plan's estimate (campaign-cost's CHARS_PER_TOKEN): system and user message each cut into
 * pieces of CHARS_PER_TOKEN characters, a piece's id a hash of its characters. Two prompts that agree on
 * their first k characters share their first floor(k / CHARS_PER_TOKEN) tokens, which is what the prefix cache
 * needs; the counts are the ones the surrogate's usage reports and the plan prices.
 */
export const TOKENIZER = `estimate: ${CHARS_PER_TOKEN} characters a token (no Qwen tokenizer package installed)`;

export function estimateTokenIds(system: string, user: string): number[] {
  const out: number[] = [];
  for (const text of [system, user]) {
    for (let i = 0; i < text.length; i += CHARS_PER_TOKEN) {
      let h = 0x811c9dc5;
      for (let j = i; j < i + CHARS_PER_TOKEN && j < text.length; j++) h = Math.imul(h ^ text.charCodeAt(j), 0x01000193);
      out.push(h >>> 0);
    }
  }
  return out;
}

/**
 * `text` lengthened to `tokens` tokens of the estimate ({@link CHARS_PER_TOKEN} characters each) with ` ·`,
 * which answer classification reads as space (core's normaliseText keeps letters and digits only) and which
 * holds no line break (prompt parsers read answers line by line). Text already that long is returned as is.
 */
export function padToTokens(text: string, tokens: number): string {
  if (tokens <= Math.ceil(text.length / CHARS_PER_TOKEN)) return text;
  const missing = tokens * CHARS_PER_TOKEN - text.length;
  return text + ' ·'.repeat(Math.ceil(missing / 2)).slice(0, missing);
}

export interface VllmStats {
  cost_model: string;
  gpu: string;
  model: string;
  tokenizer: string;
  time_scale: number;
  scheduling_policy: SchedulingPolicy;
  /** Simulated seconds since the endpoint started. */
  now_s: number;
  /** The cost model's GPU time of the work done (what `panta plan --gpu` prices). */
  busy_gpu_s: number;
  /** Simulated time with an engine step in flight. */
  active_s: number;
  /**
   * Simulated time the endpoint was saturated: its KV cache could not hold one more request the mean size of those
   * running, KV usage >= 90%, a request left waiting, or every sequence slot taken.
   */
  kv_busy_s: number;
  /** The same without the first condition: KV usage >= 90%, a request left waiting, or every sequence slot taken. */
  kv_high_s: number;
  prefix_hits: number;
  prefix_queries: number;
  /** Running requests preempted (their KV blocks freed, recomputed when readmitted). */
  preemptions: number;
  requests: number;
  completed: number;
  aborted: number;
  running: number;
  waiting: number;
  max_waiting: number;
  kv_usage: number;
}

interface Pending {
  resolve: (c: VllmCompletion | null) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/**
 * A simulated vLLM endpoint on the wall clock: a {@link VllmEngine} whose virtual time is the time since the
 * endpoint started times `timeScale` (so hours of GPU time pass in minutes), a request's reply held until the
 * engine finishes it. One timer, armed for the engine's next event but never sooner than 1 ms of wall time: on
 * firing the engine runs every step up to now, so many steps can pass per timer at a high time scale with the
 * same virtual schedule (requests arrive only at the time they are sent, when the engine is first brought up
 * to date).
 */
export class VllmModel {
  readonly engine: VllmEngine;
  private readonly start = performance.now();
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private ids = 0;

  constructor(
    readonly costModel: GpuCostModel,
    readonly policy: SchedulingPolicy,
    readonly timeScale: number,
  ) {
    this.engine = new VllmEngine(costModel, policy);
  }

  /** Simulated seconds now. */
  now(): number {
    return ((performance.now() - this.start) / 1000) * this.timeScale;
  }

  /** Tokens a request of this size can never have: more than the KV cache holds (undefined when it fits). */
  tooLong(promptTokens: number, maxTokens: number): number | undefined {
    return this.engine.fits(promptTokens, maxTokens) ? undefined : this.engine.totalBlocks * this.costModel.blockTokens;
  }

  /** Runs one request through the engine; resolves with its completion, or null when the client went away first. */
  run(
    promptTokens: number[],
    maxTokens: number,
    outputTokens: number,
    priority: number,
    signal: AbortSignal,
  ): Promise<VllmCompletion | null> {
    if (signal.aborted) return Promise.resolve(null);
    const id = `r${(++this.ids).toString(36)}`;
    const now = this.now();
    this.engine.advance(now);
    this.engine.submit({ id, promptTokens, maxTokens, outputTokens, priority, arrival: now });
    return new Promise((resolve) => {
      const onAbort = () => {
        if (!this.pending.delete(id)) return;
        this.engine.advance(this.now());
        this.engine.abort(id);
        resolve(null);
        this.settle();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { resolve, signal, onAbort });
      this.settle();
    });
  }

  /** Brings the engine up to now, answers what finished, and arms the timer for the next event. */
  private settle(): void {
    this.engine.advance(this.now());
    for (const c of this.engine.takeCompletions()) {
      const p = this.pending.get(c.id);
      if (!p) continue;
      this.pending.delete(c.id);
      p.signal.removeEventListener('abort', p.onAbort);
      p.resolve(c);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const next = this.engine.nextEventTime();
    if (!Number.isFinite(next)) return;
    const ms = Math.max(1, Math.ceil(((next - this.now()) / this.timeScale) * 1000));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.settle();
    }, ms);
  }

  stats(): VllmStats {
    this.engine.advance(this.now());
    const s = this.engine.stats();
    return {
      cost_model: this.costModel.name,
      gpu: this.costModel.gpu,
      model: this.costModel.model,
      tokenizer: TOKENIZER,
      time_scale: this.timeScale,
      scheduling_policy: this.policy,
      now_s: s.now,
      busy_gpu_s: s.busyGpuSeconds,
      active_s: s.activeSeconds,
      kv_busy_s: s.kvBusySeconds,
      kv_high_s: s.kvHighSeconds,
      prefix_hits: s.prefixHits,
      prefix_queries: s.prefixQueries,
      preemptions: s.preemptions,
      requests: s.requests,
      completed: s.completed,
      aborted: s.aborted,
      running: s.running,
      waiting: s.waiting,
      max_waiting: s.maxWaiting,
      kv_usage: s.kvUsage,
    };
  }

  /** vLLM's `/metrics` (Prometheus text) for the gauges and counters this model keeps, labelled by `model_name`. */
  metrics(modelName: string): string {
    const s = this.stats();
    const label = `{model_name=${JSON.stringify(modelName)}}`;
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number) => {
      const base = type === 'counter' ? name.replace(/_total$/, '') : name;
      lines.push(
        `# HELP ${base} ${help}`,
        `# TYPE ${base} ${type}`,
        `${name}${label} ${Number.isInteger(value) ? value.toFixed(1) : value}`,
      );
    };
    metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', s.running);
    metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', s.waiting);
    metric('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', s.kv_usage);
    metric(
      'vllm:gpu_cache_usage_perc',
      'gauge',
      'GPU KV-cache usage. 1 means 100 percent usage. (older name of kv_cache_usage_perc)',
      s.kv_usage,
    );
    metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', s.prefix_queries);
    metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', s.prefix_hits);
    metric('vllm:request_success_total', 'counter', 'Count of successfully processed requests.', s.completed);
    metric('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', s.preemptions);
    // vLLM's info gauge of its cache config (value 1, the config in labels): the KV cache's size in blocks,
    // which clients read for tokens admission (num_gpu_blocks x block_size tokens).
    lines.push(
      '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
      '# TYPE vllm:cache_config_info gauge',
      `vllm:cache_config_info{block_size="${this.costModel.blockTokens}",enable_prefix_caching="True",num_gpu_blocks="${this.engine.totalBlocks}"} 1.0`,
    );
    return `${lines.join('\n')}\n`;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const [id, p] of this.pending) {
      p.signal.removeEventListener('abort', p.onAbort);
      this.engine.abort(id);
      p.resolve(null);
    }
    this.pending.clear();
  }
}
