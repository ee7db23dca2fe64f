import { describe, expect, it } from 'vitest';
import { GPU_COST_MODELS, type GpuCostModel, requestGpuSeconds, type VllmCompletion, VllmEngine } from '../src/index.js';

const h100 = GPU_COST_MODELS['h100-qwen3-14b'];

/** Token ids start, start+1, ...: prompts with different starts share no block. */
function tokens(n: number, start = 0): number[] {
  return Array.from({ length: n }, (_, i) => start + i);
}

/** Runs the engine until it is idle, returning every completion. */
function drain(e: VllmEngine): VllmCompletion[] {
  const out: VllmCompletion[] = [];
  for (let t = e.nextEventTime(); Number.isFinite(t); t = e.nextEventTime()) {
    e.advance(t);
    out.push(...e.takeCompletions());
  }
  return out;
}

describe('VllmEngine', () => {
  it('spends requestGpuSeconds on a lone request, its prompt prefilled in chunks and its output one step a token', () => {
    const e = new VllmEngine(h100);
    e.submit({ id: 'a', promptTokens: tokens(20_000), maxTokens: 50 });
    const [c] = drain(e);
    expect(c?.id).toBe('a');
    expect(c?.gpuSeconds).toBeCloseTo(requestGpuSeconds(h100, 20_000, 50), 9);
    expect(e.stats().busyGpuSeconds).toBeCloseTo(requestGpuSeconds(h100, 20_000, 50), 9);
    // Chunks of 8192, 8192 and 3616 prompt tokens (the last samples the first token), then 49 decode steps at the floor.
    const prefill = (8192 * 88 + 8192 * 88 + 3616 * 88 + 220) / 1e6;
    expect(c?.firstToken).toBeCloseTo(prefill, 9);
    expect(c?.finish).toBeCloseTo(prefill + (49 * h100.decodeStepFloorMs) / 1000, 9);
    expect(e.stats().steps).toBe(3 + 49);
    expect(c?.cachedTokens).toBe(0);
  });

  it("interleaves a short request with a long prompt's prefill chunks", () => {
    const e = new VllmEngine(h100);
    e.submit({ id: 'short', promptTokens: tokens(100, 1e6), maxTokens: 2 });
    e.submit({ id: 'long', promptTokens: tokens(20_000), maxTokens: 1 });
    const done = drain(e);
    // Step 1: short's 100 prompt tokens and long's first 8092; step 2: short's second token and 8191 more of
    // long's; step 3: the rest of long's prompt. Without chunks, short would wait behind 20,000 tokens.
    const long = done.find((c) => c.id === 'long') as VllmCompletion;
    const short = done.find((c) => c.id === 'short') as VllmCompletion;
    expect(long.admitted).toBe(0);
    expect(short.admitted).toBe(0);
    expect(short.finish).toBeLessThan(long.firstToken);
  });

  it('admits a request once its first chunk fits (vLLM V1 allocates blocks as tokens are computed) and preempts the last admitted when a running one cannot grow', () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 1000 }; // 62 blocks of 16
    const e = new VllmEngine(m);
    for (const id of ['a', 'b', 'c']) e.submit({ id, promptTokens: tokens(300, id.charCodeAt(0) * 1e4), maxTokens: 100 });
    e.advance(0);
    // Their prompts take 19 blocks each now; prompt + max_tokens (25 blocks each) would not fit three times.
    expect(e.runningCount).toBe(3);
    expect(e.waitingCount).toBe(0);
    expect(e.kvUsage).toBeCloseTo(57 / 62, 9);
    const done = drain(e);
    const [a, b, c] = ['a', 'b', 'c'].map((id) => done.find((x) => x.id === id) as VllmCompletion);
    // Decoding, the three outgrow 62 blocks: fcfs preempts the last admitted, c, which recomputes when readmitted.
    expect([a.preemptions, b.preemptions]).toEqual([0, 0]);
    expect(c.preemptions).toBeGreaterThan(0);
    expect(e.stats().preemptions).toBe(c.preemptions);
    for (const x of [a, b, c]) expect(x.outputTokens).toBe(100);
    expect(a.gpuSeconds).toBeCloseTo(requestGpuSeconds(m, 300, 100), 9);
    expect(c.gpuSeconds).toBeGreaterThan(requestGpuSeconds(m, 300, 100));
    expect(c.admitted).toBe(0);
    expect(e.stats().kvBusySeconds).toBeGreaterThan(0);
    expect(() => e.submit({ id: 'huge', promptTokens: tokens(900), maxTokens: 200 })).toThrow(RangeError);
  });

  it('keeps a request waiting while its first chunk does not fit, and counts that time as KV-busy', () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 30 * 16 };
    const e = new VllmEngine(m);
    e.submit({ id: 'a', promptTokens: tokens(300), maxTokens: 3 }); // 19 blocks
    e.submit({ id: 'b', promptTokens: tokens(300, 1e5), maxTokens: 3 }); // 19 more do not fit in 30
    e.advance(0);
    expect([e.runningCount, e.waitingCount]).toEqual([1, 1]);
    const done = drain(e);
    const [a, b] = ['a', 'b'].map((id) => done.find((x) => x.id === id) as VllmCompletion);
    expect(b.admitted).toBe(a.finish);
    expect(e.stats().kvHighSeconds).toBeCloseTo(a.finish, 9);
    // Then b alone leaves 11 blocks free, fewer than one more request its size: the cache is still full.
    expect(e.stats().kvBusySeconds).toBeCloseTo(b.finish, 9);
    expect(e.stats().preemptions).toBe(0);
  });

  it('counts a cache that cannot hold one more request the size of those running as KV-busy, under 90%', () => {
    // 95 blocks; four requests of 20 blocks (300 prompt + 16 output tokens) hold 76-80 (80-84%): a fifth would not fit.
    const e = new VllmEngine({ ...h100, kvCapacityTokens: 95 * 16 });
    for (const id of ['a', 'b', 'c', 'd']) e.submit({ id, promptTokens: tokens(300, id.charCodeAt(0) * 1e4), maxTokens: 16 });
    const done = drain(e);
    const last = Math.max(...done.map((x) => x.finish));
    expect(e.stats().kvHighSeconds).toBe(0);
    expect(e.stats().kvBusySeconds).toBeCloseTo(last, 9);
    // Three of them leave room for a fourth: not saturated.
    const roomy = new VllmEngine({ ...h100, kvCapacityTokens: 95 * 16 });
    for (const id of ['a', 'b', 'c']) roomy.submit({ id, promptTokens: tokens(300, id.charCodeAt(0) * 1e4), maxTokens: 16 });
    drain(roomy);
    expect(roomy.stats().kvBusySeconds).toBe(0);
  });

  it('preempts the least important running request under the priority policy, the last admitted under fcfs', () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 40 * 16 };
    const preempted = (policy: 'fcfs' | 'priority') => {
      const e = new VllmEngine(m, policy);
      e.submit({ id: 'low', promptTokens: tokens(300), maxTokens: 100, priority: 5 });
      e.advance(0);
      e.submit({ id: 'high', promptTokens: tokens(300, 1e5), maxTokens: 100, priority: 0, arrival: 0.001 });
      return drain(e)
        .filter((c) => c.preemptions > 0)
        .map((c) => c.id);
    };
    expect(preempted('priority')).toEqual(['low']);
    expect(preempted('fcfs')).toEqual(['high']);
  });

  it('reuses a cached prefix in whole blocks and counts hits and queries in tokens', () => {
    const e = new VllmEngine(h100);
    const shared = tokens(1000, 5e6);
    e.submit({ id: 'a', promptTokens: [...shared, ...tokens(500, 1)], maxTokens: 10 });
    const [a] = drain(e);
    e.submit({ id: 'b', promptTokens: [...shared, ...tokens(500, 2)], maxTokens: 10 });
    const [b] = drain(e);
    expect(a?.cachedTokens).toBe(0);
    expect(b?.cachedTokens).toBe(992); // 62 whole blocks of the 1000 shared tokens
    expect(b?.gpuSeconds).toBeCloseTo(requestGpuSeconds(h100, 1500 - 992, 10), 9);
    expect(e.stats().prefixQueries).toBe(3000);
    expect(e.stats().prefixHits).toBe(992);
    // The same prompt again: everything but the last block (vLLM always computes the last token).
    e.submit({ id: 'b2', promptTokens: [...shared, ...tokens(500, 2)], maxTokens: 10 });
    expect(drain(e)[0]?.cachedTokens).toBe(Math.floor(1499 / 16) * 16);
  });

  it("evicts unreferenced cached blocks least recently used first, a finished prompt's last blocks first", () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 62 * 16 };
    const e = new VllmEngine(m);
    const A = tokens(320, 1e6); // 20 blocks + 1 for output
    const C = tokens(320, 2e6);
    const D = tokens(480, 3e6); // 30 blocks + 1
    const run = (id: string, p: number[]) => {
      e.submit({ id, promptTokens: p, maxTokens: 16 });
      return drain(e)[0] as VllmCompletion;
    };
    run('a', A);
    run('c', C);
    // D needs 31 blocks; 22 were never used, so 9 cached ones go: A's (older than C's), from its end.
    run('d', D);
    expect(run('a2', A).cachedTokens).toBe(11 * 16);
    // A again needed 10 fresh blocks with 1 never used: 9 more go, now C's (older than D's), from its end.
    expect(run('c2', C).cachedTokens).toBe(11 * 16);
  });

  it('admits by priority under the priority policy (lower first, ties by arrival) and by arrival under fcfs', () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 30 * 16 }; // one request of 25 blocks at a time
    const order = (policy: 'fcfs' | 'priority') => {
      const e = new VllmEngine(m, policy);
      e.submit({ id: 'first', promptTokens: tokens(300), maxTokens: 100, outputTokens: 3 });
      e.advance(0);
      e.submit({ id: 'p5', promptTokens: tokens(300, 1e5), maxTokens: 100, outputTokens: 3, priority: 5, arrival: 0.001 });
      e.submit({ id: 'p1', promptTokens: tokens(300, 2e5), maxTokens: 100, outputTokens: 3, priority: 1, arrival: 0.002 });
      e.submit({ id: 'p1-later', promptTokens: tokens(300, 3e5), maxTokens: 100, outputTokens: 3, priority: 1, arrival: 0.003 });
      return drain(e).map((c) => c.id);
    };
    expect(order('priority')).toEqual(['first', 'p1', 'p1-later', 'p5']);
    expect(order('fcfs')).toEqual(['first', 'p5', 'p1', 'p1-later']);
  });

  it("frees an aborted request's blocks for the next waiting one", () => {
    const m: GpuCostModel = { ...h100, kvCapacityTokens: 30 * 16 };
    const e = new VllmEngine(m);
    e.submit({ id: 'a', promptTokens: tokens(300), maxTokens: 100 });
    e.submit({ id: 'b', promptTokens: tokens(300, 1e5), maxTokens: 100 });
    e.advance(0);
    expect(e.waitingCount).toBe(1);
    e.advance(0.05);
    expect(e.abort('a')).toBe(true);
    expect(e.abort('a')).toBe(false);
    const done = drain(e);
    expect(done.map((c) => c.id)).toEqual(['b']);
    expect(done[0]?.admitted).toBeLessThan(0.1);
    expect(e.stats().aborted).toBe(1);
  });

  it('is deterministic: the same requests give the same completions', () => {
    const once = () => {
      const e = new VllmEngine(h100, 'priority');
      for (let i = 0; i < 40; i++)
        e.submit({
          id: `r${i}`,
          promptTokens: tokens(500 + i * 97, (i % 3) * 1e6),
          maxTokens: 64,
          outputTokens: 1 + (i % 50),
          priority: i % 4,
          arrival: i * 0.01,
        });
      return drain(e);
    };
    expect(once()).toEqual(once());
  });
});
