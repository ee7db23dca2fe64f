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
