import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_TEMPLATE,
  GPU_COST_MODELS,
  type GpuCostModel,
  normaliseText,
  parseDataset,
  parseVllmMetrics,
  renderPrompt,
  requestGpuSeconds,
} from '@panta/core';
import { startSurrogateServer, type SurrogateServer } from '../src/server/app.js';
import type { ServerStats } from '../src/server/types.js';
import { RHEON6 } from '../../../test/helpers.js';
import { chat } from './fixtures.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const h100 = GPU_COST_MODELS['h100-qwen3-14b'];

/** An agent's prompt with `neighbours` neighbour lines: its length grows with them. */
function messages(neighbours: number, question = 0, previous = 'I lean to the first option, for now.') {
  const m = renderPrompt(DEFAULT_TEMPLATE, {
    question: (prompts[question] as (typeof prompts)[number]).question,
    sweep: 1,
    temperature: 0.7,
    previous,
    neighbourAgents: Array.from({ length: neighbours }, (_, i) => i + 1),
    neighbourAnswers: Array.from(
      { length: neighbours },
      (_, i) => `Answer of agent ${i + 1}: the option I find most convincing, with a short reason.`,
    ),
  });
  return chat(m);
}

function client(server: SurrogateServer): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', timeout: 30_000, maxRetries: 0 });
}

/** One call with the real OpenAI client; `priority` goes in the body as vLLM reads it. */
async function call(
  server: SurrogateServer,
  neighbours: number,
  seed: number,
  extra: Record<string, unknown> = {},
  previous?: string,
  signal?: AbortSignal,
) {
  const { data, response } = await client(server)
    .chat.completions.create(
      {
        model: server.model,
        messages: messages(neighbours, 0, previous),
        seed,
        max_tokens: 64,
        ...extra,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      signal ? { signal } : undefined,
    )
    .withResponse();
  const h = (k: string) => Number(response.headers.get(`x-panta-sim-${k}`));
  return {
    data,
    latency: h('latency-s'),
    queue: h('queue-s'),
    gpu: h('gpu-s'),
    cached: h('cached-tokens'),
    promptTokens: h('prompt-tokens'),
  };
}

async function metrics(server: SurrogateServer) {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const value = (name: string) => Number(new RegExp(`^${name}\\{model_name="${server.model}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { text, value, load: parseVllmMetrics(text) };
}

async function stats(server: SurrogateServer): Promise<ServerStats> {
  return (await (await fetch(`${server.url}/panta/stats`)).json()) as ServerStats;
}

/** Polls /metrics until `until` holds or the calls settle; returns the last sample that held, if any. */
async function watch(server: SurrogateServer, calls: Promise<unknown>, until: (m: Awaited<ReturnType<typeof metrics>>) => boolean) {
  let settled = false;
  void calls.finally(() => {
    settled = true;
  });
  while (!settled) {
    const m = await metrics(server);
    if (until(m)) return m;
    await sleep(2);
  }
  return undefined;
}

describe('serve-surrogate with a cost model (a simulated vLLM endpoint)', () => {
  let fast: SurrogateServer;
  let plain: SurrogateServer;
  beforeAll(async () => {
    fast = await startSurrogateServer({ prompts, costModel: h100, timeScale: 50 });
    plain = await startSurrogateServer({ prompts });
  });
  afterAll(async () => {
    await Promise.all([fast.close(), plain.close()]);
  });

  it("answers with the surrogate's text after the simulated time, a long prompt costing more than a short one", async () => {
    const short = await call(fast, 2, 1);
    const long = await call(fast, 300, 1);
    const reference = await client(plain).chat.completions.create({ model: plain.model, messages: messages(300), seed: 1, max_tokens: 64 });
    expect(long.data.choices[0]?.message.content).toBe(reference.choices[0]?.message.content);
    // Token counts by the plan's estimate: the simulator's prompt is the usage's.
    expect(long.promptTokens).toBe(long.data.usage?.prompt_tokens);
    expect(long.promptTokens).toBeGreaterThan(20 * short.promptTokens);
    // Alone on the endpoint: GPU time is the cost model's price of the request (prefix-cached tokens excepted).
    const output = long.data.usage?.completion_tokens as number;
    expect(long.gpu).toBeCloseTo(requestGpuSeconds(h100, long.promptTokens - long.cached, output), 9);
    expect(long.latency).toBeGreaterThan(short.latency);
    expect(long.gpu).toBeGreaterThan(10 * short.gpu);
    const s = await stats(fast);
    expect(s.vllm).toMatchObject({ cost_model: 'h100-qwen3-14b', scheduling_policy: 'fcfs', time_scale: 50, completed: 2 });
    expect(s.vllm?.tokenizer).toMatch(/estimate/);
    expect(s.vllm?.busy_gpu_s).toBeCloseTo(short.gpu + long.gpu, 9);
  });

  it("pads a fixed-length reply to the tokens it bills, so prompts quoting it are as long as a real model's", async () => {
    const fixed = { max_tokens: 100, min_tokens: 100 };
    const padded = await call(fast, 20, 3, fixed);
    const reference = await client(plain).chat.completions.create({
      model: plain.model,
      messages: messages(20),
      seed: 3,
      ...fixed,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const text = padded.data.choices[0]?.message.content as string;
    const natural = reference.choices[0]?.message.content as string;
    expect(padded.data.usage?.completion_tokens).toBe(100);
    expect(natural.length).toBeLessThan(400);
    expect(text.length).toBe(400);
    expect(text.startsWith(natural)).toBe(true);
    expect(text).not.toContain('\n');
    // What answer classification reads is the surrogate's answer, unchanged.
    expect(normaliseText(text)).toBe(normaliseText(natural));
  });

  it('counts prefix-cache hits when a prompt repeats, in tokens, on /metrics', async () => {
    const before = await metrics(fast);
    const first = await call(fast, 120, 7);
    const again = await call(fast, 120, 8);
    const after = await metrics(fast);
    expect(again.cached).toBeGreaterThan(0.9 * again.promptTokens);
    expect(again.gpu).toBeLessThan(first.gpu / 2);
    expect(after.value('vllm:prefix_cache_hits_total') - before.value('vllm:prefix_cache_hits_total')).toBe(first.cached + again.cached);
    expect(after.value('vllm:prefix_cache_queries_total') - before.value('vllm:prefix_cache_queries_total')).toBe(
      first.promptTokens + again.promptTokens,
    );
    expect(after.text).toMatch(/^# TYPE vllm:prefix_cache_hits counter$/m);
    expect(after.value('vllm:gpu_cache_usage_perc')).toBe(after.value('vllm:kv_cache_usage_perc'));
  });

  it("refuses a nonzero priority without priority scheduling, in vLLM's words", async () => {
    const err = await call(fast, 2, 1, { priority: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/Got priority 3 but Priority scheduling is not enabled/);
    await expect(call(fast, 2, 1, { priority: 0 })).resolves.toBeDefined();
  });

  it('refuses a request larger than the KV cache with 400', async () => {
    const tiny = await startSurrogateServer({ prompts, costModel: { ...h100, kvCapacityTokens: 256 } });
    try {
      const err = await call(tiny, 40, 1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toMatch(/maximum context length is 256 tokens/);
    } finally {
      await tiny.close();
    }
  });
});

describe('a KV-limited simulated endpoint', () => {
  // Room for two of these prompts (~2,300 tokens each plus 64 reserved for output) in 5,000 tokens of KV. Each
  // call's own previous answer comes early in the prompt, so they share only the first few blocks.
  const small: GpuCostModel = { ...h100, name: 'small', kvCapacityTokens: 5000 };

  it('keeps requests waiting while the KV cache is full: vllm:num_requests_waiting > 0 on /metrics', async () => {
    const server = await startSurrogateServer({ prompts, costModel: small, timeScale: 1 });
    try {
      const calls = Promise.all(Array.from({ length: 6 }, (_, i) => call(server, 100 + i, i, {}, `Call ${i}: my previous answer.`)));
      // A request can wait a moment for the next engine step anyway; here two run, the KV cache is full and more wait.
      const seen = await watch(server, calls, (m) => (m.load?.waiting ?? 0) > 0 && m.load?.running === 2);
      const done = await calls;
      expect(seen?.load?.waiting).toBeGreaterThan(0);
      expect(seen?.load?.kvUsage).toBeGreaterThan(0.9);
      expect(Math.max(...done.map((d) => d.queue))).toBeGreaterThan(0);
      const s = (await stats(server)).vllm;
      expect(s?.max_waiting).toBeGreaterThanOrEqual(1);
      expect(s?.kv_busy_s).toBeGreaterThan(0);
      expect(s?.completed).toBe(6);
    } finally {
      await server.close();
    }
  });

  it('drops a request whose client went away, as vLLM aborts it: its KV blocks are freed', async () => {
    const server = await startSurrogateServer({ prompts, costModel: small, timeScale: 1 });
    try {
      const impatient = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', timeout: 50, maxRetries: 0 });
      // ~2,300 prompt tokens and 200 output tokens: about 2 simulated seconds, far past the client's 50 ms.
      const err = await impatient.chat.completions
        .create({
          model: server.model,
          messages: messages(100),
          seed: 1,
          max_tokens: 200,
          min_tokens: 200,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
      let s = (await stats(server)).vllm;
      for (let i = 0; i < 100 && s?.aborted !== 1; i++) {
        await sleep(5);
        s = (await stats(server)).vllm;
      }
      expect(s).toMatchObject({ aborted: 1, completed: 0, running: 0, waiting: 0, kv_usage: 0 });
    } finally {
      await server.close();
    }
  });

  it('serves waiting requests by priority (lower first) under --scheduling-policy priority', async () => {
    const one: GpuCostModel = { ...h100, name: 'one', kvCapacityTokens: 3000 }; // one prompt at a time
    const server = await startSurrogateServer({ prompts, costModel: one, timeScale: 1, schedulingPolicy: 'priority' });
    try {
      const order: string[] = [];
      const tagged = (name: string, seed: number, priority: number) =>
        call(server, 100, seed, { priority, max_tokens: 40, min_tokens: 40 }, `Call ${name}: my previous answer.`).then((r) => {
          order.push(name);
          return r;
        });
      // The blocker (a shorter prompt, 1,000 output tokens: ~9 simulated s) runs until the test lets it go: its
      // client leaves once both others wait, so they queue behind it however slowly this host runs.
      const release = new AbortController();
      const blocker = call(server, 40, 1, { priority: 0, max_tokens: 1000, min_tokens: 1000 }, 'Call blocker.', release.signal);
      await watch(
        server,
        blocker.catch(() => undefined),
        (m) => (m.load?.running ?? 0) === 1,
      );
      const low = tagged('low', 2, 5);
      await watch(server, low, (m) => (m.load?.waiting ?? 0) === 1);
      const high = tagged('high', 3, 1);
      const waitingBoth = await watch(server, high, (m) => (m.load?.waiting ?? 0) === 2);
      expect(waitingBoth).toBeDefined(); // both queued behind the blocker before it ended
      release.abort();
      await expect(blocker).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
      await Promise.all([low, high]);
      expect(order).toEqual(['high', 'low']);
    } finally {
      await server.close();
    }
  });
});
