import { describe, expect, it } from 'vitest';
import { AdmissionLimit, parseVllmMetrics, QueueClock } from '../src/admission.js';

describe('parseVllmMetrics', () => {
  it("reads vLLM's waiting, running and KV usage, summing engines and taking the fullest cache", () => {
    const text = [
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
      '# TYPE vllm:num_requests_waiting gauge',
      'vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-14B"} 3.0',
      'vllm:num_requests_waiting{engine="1",model_name="Qwen/Qwen3-14B"} 2.0',
      'vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-14B"} 8.0',
      'vllm:kv_cache_usage_perc{engine="0",model_name="Qwen/Qwen3-14B"} 0.5',
      'vllm:kv_cache_usage_perc{engine="1",model_name="Qwen/Qwen3-14B"} 0.97',
      'vllm:prefix_cache_hits_total{engine="0"} 1234',
      'process_resident_memory_bytes 1e9',
    ].join('\n');
    expect(parseVllmMetrics(text)).toEqual({ waiting: 5, running: 8, kvUsage: 0.97 });
  });

  it('reads the older gpu_cache_usage_perc and unlabelled series; undefined without vLLM names', () => {
    expect(parseVllmMetrics('vllm:num_requests_running 2\nvllm:gpu_cache_usage_perc 0.25\n')).toEqual({
      waiting: 0,
      running: 2,
      kvUsage: 0.25,
    });
    expect(parseVllmMetrics('process_cpu_seconds_total 12\n')).toBeUndefined();
    expect(parseVllmMetrics('<html>not found</html>')).toBeUndefined();
  });
});

describe('AdmissionLimit with the server load', () => {
  it('grows by half while none wait and the limit is reached, holds with the KV cache full, never above max', () => {
    const l = new AdmissionLimit(64, { initial: 4 });
    l.observeLoad({ waiting: 0, running: 4, kvUsage: 0.2 }, 4);
    expect(l.limit).toBe(6);
    l.observeLoad({ waiting: 0, running: 2, kvUsage: 0.2 }, 2); // not reached: no growth
    expect(l.limit).toBe(6);
    l.observeLoad({ waiting: 0, running: 6, kvUsage: 0.95 }, 6); // full, none waiting: hold
    expect(l.limit).toBe(6);
    // Calls so short that the sample sees none running, but the limit was reached since the last one: grow.
    l.observeLoad({ waiting: 0, running: 0, kvUsage: 0 }, 1, true);
    expect(l.limit).toBe(9);
    l.observeLoad({ waiting: 0, running: 0, kvUsage: 0 }, 1, false);
    expect(l.limit).toBe(9);
    l.reset(6);
    for (let i = 0; i < 20; i++) l.observeLoad({ waiting: 0, running: l.limit, kvUsage: 0.1 }, l.limit);
    expect(l.limit).toBe(64);
  });

  it("drops to this client's share of what the server runs while requests wait, never below 1", () => {
    const l = new AdmissionLimit(64);
    l.observeLoad({ waiting: 24, running: 8 }, 32);
    expect(l.limit).toBe(8);
    // Two clients with 16 each on a server running 8: each keeps 4, together what the server holds.
    const a = new AdmissionLimit(64);
    a.observeLoad({ waiting: 24, running: 8 }, 16);
    expect(a.limit).toBe(4);
    // Once the server has queued, growth is one a sample, not half.
    a.observeLoad({ waiting: 0, running: 3, kvUsage: 0.3 }, 4);
    expect(a.limit).toBe(5);
    a.observeLoad({ waiting: 50, running: 1 }, 5);
    expect(a.limit).toBe(1);
    a.observeLoad({ waiting: 50, running: 0 }, 1);
    expect(a.limit).toBe(1);
  });

  it('is not cut by a queue while the KV cache has room (requests taken at the next engine steps)', () => {
    const l = new AdmissionLimit(64, { initial: 4 });
    // Arrived since the last step, or waiting for the step's token budget: the cache still holds more.
    l.observeLoad({ waiting: 1, running: 1, kvUsage: 0.05 }, 4);
    expect(l.limit).toBe(6);
    l.observeLoad({ waiting: 4, running: 3, kvUsage: 0.33 }, 6);
    expect(l.limit).toBe(9);
    // Eight long prompts fill 89% of the cache: a ninth would not fit, so the queue is the cache's.
    l.observeLoad({ waiting: 4, running: 8, kvUsage: 0.89 }, 9);
    expect(l.limit).toBe(6);
    // Nearly full is the limit too, whatever runs.
    const f = new AdmissionLimit(64, { initial: 12 });
    f.observeLoad({ waiting: 4, running: 40, kvUsage: 0.95 }, 12);
    expect(f.limit).toBe(10);
  });
});

// An H100 serving Qwen3-14B under vLLM: 15,000 blocks of 16 tokens (240,000 tokens); a mean-field-256 update
// holds ~26,600 prompt tokens + 100 output, a ring update ~380 + 100.
const H100_METRICS = [
  'vllm:num_requests_running{model_name="Qwen/Qwen3-14B"} 0.0',
  'vllm:num_requests_waiting{model_name="Qwen/Qwen3-14B"} 0.0',
  'vllm:kv_cache_usage_perc{model_name="Qwen/Qwen3-14B"} 0.0',
  '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
  '# TYPE vllm:cache_config_info gauge',
  'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",gpu_memory_utilization="0.9",num_cpu_blocks="0",num_gpu_blocks="15000"} 1.0',
].join('\n');
const MEAN_FIELD_256 = 26_700;
const RING = 480;

/** Requests of `sizes` (tokens each, in order) let in one by one until admission holds one back: their count. */
function admitted(l: AdmissionLimit, sizes: (i: number) => number, startOpen = 0, startTokens = 0): number {
  let open = startOpen;
  let tokens = startTokens;
  while (open < 10_000 && l.admits(open, tokens)) tokens += sizes(open++);
  return open - startOpen;
}

describe('AdmissionLimit by tokens (the KV cache size known)', () => {
  it("reads the KV cache's size from vllm:cache_config_info (blocks x block size, summed over engines)", () => {
    expect(parseVllmMetrics(H100_METRICS)).toEqual({ waiting: 0, running: 0, kvUsage: 0, capacityTokens: 240_000 });
    const twoEngines = `${H100_METRICS}\nvllm:cache_config_info{num_gpu_blocks="1000",block_size="32",engine="1"} 1.0\n`;
    expect(parseVllmMetrics(twoEngines)?.capacityTokens).toBe(272_000);
  });

  it('keeps ~0.95 of the cache admitted whatever the sizes: 9 long prompts, 256 short ones (the request cap), or a mix', () => {
    const l = new AdmissionLimit(256, { initial: 4 });
    l.observeLoad(parseVllmMetrics(H100_METRICS)!, 0);
    expect(l.capacityTokens).toBe(240_000);
    expect(l.tokenBudget).toBe(228_000);
    expect(l.limit).toBe(256);
    // 8 x 26,700 = 213,600 < 228,000: a 9th goes (past the budget: it waits at the server, first for the next blocks).
    expect(admitted(l, () => MEAN_FIELD_256)).toBe(9);
    // Short prompts: the request cap binds first (256 x 480 = 122,880 tokens).
    expect(admitted(l, () => RING)).toBe(256);
    // 8 long ones open: 14,400 tokens left for short ones, which 30 fill exactly.
    expect(admitted(l, () => RING, 8, 8 * MEAN_FIELD_256)).toBe(30);
  });

  it("cuts the budget to this client's share when others fill the cache (more than one waiting), grows back by the room", () => {
    const l = new AdmissionLimit(256);
    l.setCapacity(240_000);
    // This client's own overflow request waiting with the cache full: no cut.
    l.observeLoad({ waiting: 1, running: 9, kvUsage: 0.99 }, 9, true, 9 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBe(228_000);
    // Six waiting, nine running, 4 of them this client's (106,800 tokens): its share is 106,800 x 9 / 15.
    l.observeLoad({ waiting: 6, running: 9, kvUsage: 0.97 }, 4, true, 4 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(64_080, 6);
    expect(admitted(l, () => MEAN_FIELD_256)).toBe(3);
    // None waiting and 40% of the cache free: + (0.9 - 0.5) x 240,000.
    l.observeLoad({ waiting: 0, running: 3, kvUsage: 0.5 }, 3, true, 3 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(160_080, 6);
    // Some waiting (the step's prefill, not the cache): the growth stops at 0.95 of the cache.
    l.observeLoad({ waiting: 2, running: 3, kvUsage: 0.1 }, 3, true, 3 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBe(228_000);
  });

  it('grows the budget past 0.95 of the cache while the server holds less than the client counts and none wait, up to 2x', () => {
    const l = new AdmissionLimit(256);
    l.setCapacity(240_000);
    expect(admitted(l, () => MEAN_FIELD_256)).toBe(9);
    // Nine open by the client's count (240,300 tokens), the server 50% full with none waiting: some are still in
    // prefill, their max_tokens not decoded, their prefix shared. The budget grows by the room, 0.4 x 240,000.
    l.observeLoad({ waiting: 0, running: 9, kvUsage: 0.5 }, 9, true, 9 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(324_000, 6);
    expect(admitted(l, () => MEAN_FIELD_256, 9, 9 * MEAN_FIELD_256)).toBe(4);
    // Not while the budget did not bind since the last sample, nor with the cache's room for one more of the
    // running size gone (0.85 + 0.85 / 13 >= 0.9), nor past 0.95 of it while requests wait.
    l.observeLoad({ waiting: 0, running: 13, kvUsage: 0.5 }, 13, false, 13 * MEAN_FIELD_256);
    l.observeLoad({ waiting: 0, running: 13, kvUsage: 0.85 }, 13, true, 13 * MEAN_FIELD_256);
    l.observeLoad({ waiting: 1, running: 13, kvUsage: 0.4 }, 13, true, 13 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(324_000, 6);
    // Never past 2 x the cache, however much room it reports.
    for (let i = 0; i < 5; i++) l.observeLoad({ waiting: 0, running: 13, kvUsage: 0.05 }, 13, true, 13 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBe(480_000);
    // The cache full and three waiting: too much let in. Cut to the share of what runs: 17 open x 14 / 17.
    l.observeLoad({ waiting: 3, running: 14, kvUsage: 0.96 }, 17, true, 17 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(14 * MEAN_FIELD_256, 6);
    // One waiting with the cache full is the one this client keeps queued: held, not cut.
    l.observeLoad({ waiting: 1, running: 14, kvUsage: 0.97 }, 15, true, 15 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(14 * MEAN_FIELD_256, 6);
    expect(admitted(l, () => MEAN_FIELD_256, 13, 13 * MEAN_FIELD_256)).toBe(1);
  });

  it('keeps the overcommit configurable: 1 stops the growth at the cache, whatever the room', () => {
    const l = new AdmissionLimit(256, { overcommit: 1 });
    l.setCapacity(240_000);
    for (let i = 0; i < 3; i++) l.observeLoad({ waiting: 0, running: 9, kvUsage: 0.3 }, 9, true, 9 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBe(240_000);
  });

  it('grows a cut budget back while the cache has room even with requests waiting (a server busy with prefill)', () => {
    const l = new AdmissionLimit(256);
    l.setCapacity(240_000);
    // Others filled the cache: cut to this client's share (2 of its 26,700-token requests x 9 / 15).
    l.observeLoad({ waiting: 6, running: 9, kvUsage: 0.97 }, 2, true, 2 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo(32_040, 6);
    // Then the cache half empty, a few prompts waiting for the engine's step (prefill), the budget reached:
    // 0.45 + 0.45 / 6 < 0.9, so the cache is not the reason they wait and the budget grows by the room.
    for (let i = 0; i < 3; i++) l.observeLoad({ waiting: 3, running: 6, kvUsage: 0.45 }, 2, true, 2 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBe(228_000);
    // Nearly full (0.85 + 0.85 / 9 >= 0.9: one more of the running size would not fit) with others waiting: cut.
    l.observeLoad({ waiting: 4, running: 9, kvUsage: 0.85 }, 3, true, 3 * MEAN_FIELD_256);
    expect(l.tokenBudget).toBeCloseTo((3 * MEAN_FIELD_256 * 9) / 13, 6);
  });

  it('counts requests as before where the server does not give its cache size', () => {
    const l = new AdmissionLimit(64, { initial: 4 });
    l.observeLoad({ waiting: 0, running: 4, kvUsage: 0.2 }, 4);
    expect(l.tokenBudget).toBe(Number.POSITIVE_INFINITY);
    expect(admitted(l, () => MEAN_FIELD_256)).toBe(l.limit);
    expect(l.limit).toBe(6);
  });
});

describe('AdmissionLimit by latency (AIMD)', () => {
  it('grows by one per window while latency stays near the least seen, up to max', () => {
    const l = new AdmissionLimit(16, { initial: 4 });
    for (let i = 0; i < 5; i++) l.observeLatency(1, 4);
    expect(l.limit).toBe(5);
    for (let i = 0; i < 500; i++) l.observeLatency(1, l.limit);
    expect(l.limit).toBe(16);
  });

  it('cuts by a tenth when latency passes twice the least seen, once per window of replies', () => {
    const l = new AdmissionLimit(64);
    l.observeLatency(1, 64);
    const before = l.limit;
    for (let i = 0; i < 10; i++) l.observeLatency(5, 64); // one burst of slow replies: one cut
    expect(l.limit).toBe(Math.floor(before * 0.9));
    for (let i = 0; i < 400; i++) l.observeLatency(5, 64); // queueing goes on: cut after cut
    expect(l.limit).toBeLessThan(20);
    expect(l.limit).toBeGreaterThanOrEqual(1);
  });

  it('cuts on overload (timeouts, 429, 503) and stays at least 1', () => {
    const l = new AdmissionLimit(8);
    for (let i = 0; i < 1000; i++) l.observeOverload();
    expect(l.limit).toBe(1);
  });
});

describe('QueueClock', () => {
  it('adds up the time the server said requests were waiting, an open interval counting to now', () => {
    const c = new QueueClock();
    c.mark(0, false);
    c.mark(100, true);
    c.mark(150, true);
    expect(c.total(175)).toBe(75);
    c.mark(300, false);
    expect(c.total(1000)).toBe(200);
    c.mark(1200, true);
    expect(c.queueing).toBe(true);
    expect(c.total(1250)).toBe(250);
  });
});
