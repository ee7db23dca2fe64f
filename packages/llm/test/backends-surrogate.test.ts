import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backendSchema,
  DEFAULT_TEMPLATE,
  parseDataset,
  promptLength,
  renderPrompt,
  rngFrom,
  surrogateBackendSchema,
  type PromptContext,
} from '@panta/core';
import type { ChatRequest, ChatResult, LlmBackend } from '../src/backend.js';
import { createBackend } from '../src/create.js';
import { OpenAICompatibleBackend } from '../src/openai/backend.js';
import { startSurrogateServer, type SurrogateServer } from '../src/server/app.js';
import { SurrogateBackend } from '../src/surrogate/backend.js';
import { SurrogateAgent } from '../src/surrogate/agent.js';
import { RHEON6 } from '../../../test/helpers.js';

// The real backends against the project's own serve-surrogate with 20% injected faults of every kind: every
// event's reply equals the in-process surrogate's, and no endpoint ever sees more than max_in_flight at once.

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const inProcess = new SurrogateBackend(surrogateBackendSchema.parse({ kind: 'surrogate' }), prompts);

interface Case {
  request: ChatRequest;
}

function cases(n: number, label: string, maxTemperature: number): Case[] {
  const rng = rngFrom(11, label);
  const spec = surrogateBackendSchema.parse({ kind: 'surrogate' });
  return Array.from({ length: n }, (_, i) => {
    const prompt = prompts[rng.int(prompts.length)];
    const agent = new SurrogateAgent(prompt, spec);
    const temperature = [0.1, 0.7, maxTemperature][rng.int(3)];
    const say = () => agent.reply(rng.u32(), 1.3, undefined, []).text;
    const k = i % 5 === 0 ? 0 : [1, 2, 4][rng.int(3)];
    const ctx: PromptContext =
      i % 5 === 0
        ? { question: prompt.question, sweep: 0, temperature, neighbourAgents: [], neighbourAnswers: [] }
        : {
            question: prompt.question,
            sweep: 1,
            temperature,
            previous: say(),
            neighbourAgents: Array.from({ length: k }, (_, j) => j),
            neighbourAnswers: Array.from({ length: k }, say),
          };
    const fixedLength = label === 'openai' && i % 3 === 0;
    return {
      request: {
        messages: () => renderPrompt(DEFAULT_TEMPLATE, ctx),
        promptLength: () => promptLength(DEFAULT_TEMPLATE, ctx),
        seed: rng.u32() >>> 1,
        temperature,
        maxTokens: fixedLength ? 8 : 100,
        fixedLength,
        context: ctx,
      },
    };
  });
}

function same(got: ChatResult, want: ChatResult): void {
  expect({
    text: got.text,
    finishReason: got.finishReason,
    promptTokens: got.promptTokens,
    completionTokens: got.completionTokens,
  }).toEqual({
    text: want.text,
    finishReason: want.finishReason,
    promptTokens: want.promptTokens,
    completionTokens: want.completionTokens,
  });
}

describe('real backends against serve-surrogate with 20% faults', () => {
  let a: SurrogateServer;
  let b: SurrogateServer;
  let c: SurrogateServer;
  const opened: LlmBackend[] = [];
  beforeAll(async () => {
    a = await startSurrogateServer({ prompts, faults: { rate: 0.2, seed: 1 } });
    b = await startSurrogateServer({ prompts, faults: { rate: 0.2, seed: 2 } });
    c = await startSurrogateServer({ prompts, faults: { rate: 0.2, seed: 3 } });
  });
  afterAll(async () => {
    await Promise.all(opened.map((x) => x.close()));
    await a.close();
    await b.close();
    await c.close();
  });

  it('openai over two endpoints (server probed): every reply equals the in-process one, max_in_flight held', async () => {
    const spec = backendSchema.parse({
      kind: 'openai',
      base_url: [a.url, b.url],
      model: a.model,
      max_in_flight: 6,
      timeout_ms: 400,
      max_retries: 12,
    });
    const backend = new OpenAICompatibleBackend(spec as Extract<typeof spec, { kind: 'openai' }>, {
      retry: { baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 50 },
    });
    opened.push(backend);
    const all = cases(300, 'openai', 1.3);
    const results = await Promise.all(all.map((c) => backend.complete(c.request)));
    for (let i = 0; i < all.length; i++) same(results[i], await inProcess.complete(all[i].request));
    expect((await backend.serverInfo()).map((s) => s?.server)).toEqual(['vllm', 'vllm']);
    expect(results.some((r) => r.calls > 1)).toBe(true);
    expect(results.filter((r) => r.finishReason === 'length').length).toBeGreaterThan(50);
    expect(a.stats().maxConcurrent).toBeLessThanOrEqual(6);
    expect(b.stats().maxConcurrent).toBeLessThanOrEqual(6);
    const faults = Object.values(a.stats().faults).reduce((x, y) => x + y, 0) + Object.values(b.stats().faults).reduce((x, y) => x + y, 0);
    expect(faults).toBeGreaterThan(30);
    expect(results.reduce((s, r) => s + r.calls, 0)).toBe(300 + backend.stats().retries);
  });

  it('anthropic: every reply equals the in-process one, max_in_flight held', async () => {
    const backend = createBackend(
      backendSchema.parse({ kind: 'anthropic', base_url: c.url, model: c.model, max_in_flight: 5, timeout_ms: 400, max_retries: 12 }),
      prompts,
      'spec.yaml',
      {
        retry: { baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 50 },
      },
    );
    opened.push(backend);
    // Temperatures within 0..1: the Anthropic API (and the surrogate server, like it) refuses more.
    const all = cases(150, 'anthropic', 1);
    const results = await Promise.all(all.map((c) => backend.complete(c.request)));
    for (let i = 0; i < all.length; i++) same(results[i], await inProcess.complete(all[i].request));
    expect(results.some((r) => r.calls > 1)).toBe(true);
    expect(c.stats().maxConcurrent).toBeLessThanOrEqual(5);
    expect(c.stats().maxConcurrent).toBeGreaterThanOrEqual(4);
  });
});
