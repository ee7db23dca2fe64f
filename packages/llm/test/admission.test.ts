import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backendSchema, DEFAULT_TEMPLATE, GPU_COST_MODELS, parseDataset, renderPrompt } from '@panta/core';
import { readFileSync } from 'node:fs';
import { startSurrogateServer } from '../src/server/app.js';
import { RHEON6 } from '../../../test/helpers.js';
import type { ChatRequest } from '../src/backend.js';
import { metricsUrlOf } from '../src/admission/endpoint.js';
import { OpenAICompatibleBackend, type RealBackendOptions } from '../src/openai/backend.js';

/**
 * A server scripted per test: `onChat` answers (or holds) each chat request, `metrics` (when set) is what
 * GET /metrics says, as vLLM's Prometheus names.
 */
interface Scripted {
  url: string;
  bodies: Record<string, unknown>[];
  metricsPolls: number;
  close(): Promise<void>;
}
async function scripted(
  onChat: (body: Record<string, unknown>, reply: () => void) => void,
  metrics?: () => { waiting: number; running: number; kv: number; blocks?: number },
): Promise<Scripted> {
  const s: Scripted = { url: '', bodies: [], metricsPolls: 0, close: async () => undefined };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      if (req.url === '/metrics' && metrics) {
        s.metricsPolls++;
        const m = metrics();
        res.end(
          `vllm:num_requests_waiting{model_name="m"} ${m.waiting}\nvllm:num_requests_running{model_name="m"} ${m.running}\nvllm:kv_cache_usage_perc{model_name="m"} ${m.kv}\n${
            m.blocks === undefined ? '' : `vllm:cache_config_info{block_size="16",num_gpu_blocks="${m.blocks}"} 1.0\n`
          }`,
        );
      } else res.writeHead(404).end('no');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      s.bodies.push(body);
      onChat(body, () => {
        if (res.destroyed) return;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'm',
            choices: [{ index: 0, message: { role: 'assistant', content: `reply ${body.seed}` }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
          }),
        );
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  s.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  servers.push(s);
  return s;
}

const servers: Scripted[] = [];
const backends: OpenAICompatibleBackend[] = [];
afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const FAST: RealBackendOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5, abortGraceMs: 0 }, probeTimeoutMs: 500, metricsPollMs: 20 };
function backend(url: string, over: Record<string, unknown> = {}): OpenAICompatibleBackend {
  const spec = backendSchema.parse({ kind: 'openai', base_url: `${url}/v1`, model: 'm', server: 'vllm', max_retries: 3, ...over });
  if (spec.kind !== 'openai') throw new Error('unreachable');
  const b = new OpenAICompatibleBackend(spec, FAST);
  backends.push(b);
  return b;
}
function request(seed: number, depth?: number, userChars?: number): ChatRequest {
  const user = userChars === undefined ? `user ${seed}` : `user ${seed} `.padEnd(userChars, 'x');
  return {
    messages: () => ({ system: 'sys', user }),
    promptLength: () => ({ system: 3, user: 6 }),
    seed,
    temperature: 0.7,
    maxTokens: 10,
    fixedLength: false,
    ...(depth !== undefined ? { depth } : {}),
  };
}

describe('admission', () => {
  it('finds /metrics beside the API root', () => {
    expect(metricsUrlOf('http://gpu-3:8000/v1')).toBe('http://gpu-3:8000/metrics');
    expect(metricsUrlOf('https://host/serve/v1/')).toBe('https://host/serve/metrics');
  });

  it("backend.priority sends vLLM's priority, minus the event's depth; without it no priority is sent", async () => {
    const s = await scripted((_, reply) => reply());
    await backend(s.url, { priority: true }).complete(request(1, 2560));
    await backend(s.url, { priority: true }).complete(request(2));
    await backend(s.url).complete(request(3, 7));
    expect(s.bodies.map((b) => b.priority)).toEqual([-2560, 0, undefined]);
    expect(s.bodies[1]).toHaveProperty('priority');
    expect(s.bodies[2]).not.toHaveProperty('priority');
  });

  it('leaves the time the server reports requests waiting out of the timeout: a call queued 3x its timeout is sent once', async () => {
    let queued = 0;
    const s = await scripted(
      (_, reply) => {
        // Queued for 900 ms (waiting, by /metrics), then runs for 100 ms: 1 s against a 300 ms timeout.
        queued++;
        setTimeout(() => {
          queued--;
          setTimeout(reply, 100);
        }, 900);
      },
      () => ({ waiting: queued, running: 8, kv: 0.95 }),
    );
    const b = backend(s.url, { timeout_ms: 300 });
    const r = await b.complete(request(5));
    expect(r.text).toBe('reply 5');
    expect(r.calls).toBe(1);
    expect(s.bodies.length).toBe(1);
    expect(s.metricsPolls).toBeGreaterThan(5);
    expect(b.stats().retries).toBe(0);
  });

  it('still times out a call the server runs too long, with none waiting', async () => {
    const s = await scripted(
      (_, reply) => setTimeout(reply, 1000),
      () => ({ waiting: 0, running: 1, kv: 0.1 }),
    );
    const b = backend(s.url, { timeout_ms: 150, max_retries: 0 });
    await expect(b.complete(request(6))).rejects.toMatchObject({ reason: expect.stringMatching(/timeout/) });
  });

  it('keeps no more open than the server runs once it reports waiting requests, and grows while it has room', async () => {
    const running = new Set<() => void>();
    const waiting: (() => void)[] = [];
    const CAPACITY = 4;
    const start = (reply: () => void): void => {
      running.add(reply);
      setTimeout(() => {
        running.delete(reply);
        reply();
        const next = waiting.shift();
        if (next) start(next);
      }, 80);
    };
    let peakWaitingLate = 0;
    const s = await scripted(
      (_, reply) => {
        if (running.size < CAPACITY) start(reply);
        else waiting.push(reply);
        if (s.bodies.length > 60) peakWaitingLate = Math.max(peakWaitingLate, waiting.length);
      },
      () => ({ waiting: waiting.length, running: running.size, kv: running.size / CAPACITY }),
    );
    const b = backend(s.url, { max_in_flight: 32, timeout_ms: 5000 });
    await Promise.all(Array.from({ length: 120 }, (_, i) => b.complete(request(i))));
    expect(s.bodies.length).toBe(120);
    // Started at 4 (the server's metrics answered), it stays near what the server holds (the KV cache is full
    // at 4), far from max_in_flight (32 open, 28 of them queued in the server, without admission).
    expect(b.stats().limits[0]).toBeLessThanOrEqual(2 * CAPACITY);
    expect(b.stats().peakInFlight[0]).toBeLessThanOrEqual(2 * CAPACITY);
    expect(peakWaitingLate).toBeLessThanOrEqual(4);
  });

  it("counts tokens where /metrics gives the KV cache's size: 0.95 of it by the client's count, more while the server reports room", async () => {
    const held: (() => void)[] = [];
    // 64 blocks of 16: 1,024 tokens. Each request: 'sys' + 757 characters = 191 prompt tokens by the estimate,
    // + 10 max_tokens = 201; 4 of them (804) are below 0.95 x 1,024 = 972.8, a 5th takes them past it.
    // The server says each one it holds takes a tenth of its cache (about half the client's count: its
    // max_tokens not decoded, its prefix shared), none waiting.
    const s = await scripted(
      (_, reply) => held.push(reply),
      () => ({ waiting: 0, running: held.length, kv: held.length / 10, blocks: 64 }),
    );
    const b = backend(s.url, { max_in_flight: 64, timeout_ms: 5000 });
    const calls = Array.from({ length: 12 }, (_, i) => b.complete(request(i, 0, 757)));
    // The budget grows by the room the server reports (0.9 - its usage) while none wait, until one more
    // request of the size of those running would take it to 0.9: 8 held (0.8 + 0.8 / 8). A poll that ran while
    // a request was on its way (sent, not yet held) counts less: 9 or 10 at most then. The old budget (0.95 of
    // the cache by the client's count) stopped at 5.
    await vi.waitFor(() => expect(s.metricsPolls).toBeGreaterThan(12), { timeout: 5000, interval: 10 });
    const sent = s.bodies.length;
    expect(sent).toBeGreaterThanOrEqual(8);
    expect(sent).toBeLessThanOrEqual(10);
    expect(b.stats().limits[0]).toBe(64);
    // Held there: the server reports its cache nearly full, so the budget holds (more polls, nothing sent).
    const polls = s.metricsPolls;
    await vi.waitFor(() => expect(s.metricsPolls).toBeGreaterThan(polls + 8), { timeout: 5000, interval: 10 });
    expect(s.bodies.length).toBe(sent);
    while (held.length > 0) held.shift()!();
    const answered = setInterval(() => {
      while (held.length > 0) held.shift()!();
    }, 5);
    try {
      await Promise.all(calls);
    } finally {
      clearInterval(answered);
    }
    expect(s.bodies.length).toBe(12);
    expect(b.stats().retries).toBe(0);
  });

  it("fills the project's simulated vLLM endpoint by tokens: what its KV cache holds runs, one or two more wait there, no more", async () => {
    const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
    // The surrogate reads prompts back with its template: 10 agents' prompts with 100 neighbour lines each
    // (~2,300 tokens), their own previous answers apart.
    const rendered = Array.from({ length: 10 }, (_, i) =>
      renderPrompt(DEFAULT_TEMPLATE, {
        question: prompts[0].question,
        sweep: 1,
        temperature: 0.7,
        previous: `Call ${i}: my previous answer.`,
        neighbourAgents: Array.from({ length: 100 }, (_, j) => j + 1),
        neighbourAnswers: Array.from({ length: 100 }, (_, j) => `Answer of agent ${j + 1}: the option I find most convincing.`),
      }),
    );
    const { system, user } = rendered[0];
    const clientTokens = Math.ceil((system.length + user.length) / 4) + 10; // the client's estimate, + max_tokens
    const blocks = Math.ceil((Math.ceil(system.length / 4) + Math.ceil(user.length / 4) + 10) / 16); // the server's
    // Room for 4.5 requests: the server runs 4 at once; the client's budget (0.95 of it) is above 4 requests' tokens,
    // so it sends a 5th, which waits in the server's queue for the first blocks freed. A poll that finds the
    // server with room for one more of the size of those running and none waiting (two answered, their replies
    // still on their way back) grows the budget by that room: a 6th at most, never more than 2 waiting there.
    const capacity = Math.floor(4.5 * blocks) * 16;
    expect(4 * clientTokens).toBeLessThan(0.95 * capacity);
    expect(5 * clientTokens).toBeGreaterThan(0.95 * capacity);
    const server = await startSurrogateServer({
      prompts,
      costModel: { ...GPU_COST_MODELS['h100-qwen3-14b'], name: 'kv-4.5', kvCapacityTokens: capacity },
      timeScale: 1,
    });
    try {
      const b = backend(server.url, { model: server.model, max_in_flight: 64, timeout_ms: 5000 });
      const calls = rendered.map(
        (m, i): ChatRequest => ({
          messages: () => m,
          promptLength: () => ({ system: m.system.length, user: m.user.length }),
          seed: i,
          temperature: 0.7,
          maxTokens: 10,
          fixedLength: false,
        }),
      );
      const replies = await Promise.all(calls.map((c) => b.complete(c)));
      expect(replies.every((r) => r.calls === 1)).toBe(true);
      expect(b.stats().peakInFlight[0]).toBeGreaterThanOrEqual(5);
      expect(b.stats().peakInFlight[0]).toBeLessThanOrEqual(6);
      expect(server.stats().vllm?.max_waiting).toBeLessThanOrEqual(2);
      expect(b.stats().retries).toBe(0);
      expect(server.stats().vllm?.completed).toBe(10);
    } finally {
      await server.close();
    }
  });
});
