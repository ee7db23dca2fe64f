import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backendSchema, InputError, type ChatMessages } from '@panta/core';
import type { ChatRequest } from '../src/backend.js';
import { createBackend } from '../src/create.js';
import { AnthropicBackend } from '../src/anthropic/backend.js';
import { OpenAICompatibleBackend, type RealBackendOptions } from '../src/openai/backend.js';
import { serverFromModels } from '../src/openai/probe.js';
import { LlmCallError } from '../src/retry/errors.js';

// ---------------------------------------------------------------------------------------------------------
// A stub OpenAI/Anthropic-compatible server: records every request and how many were open at once, and
// answers each request as its script says (a good reply or one of the faults a real server produces).

type Fault =
  | 'ok'
  | 'status-429'
  | 'status-500'
  | 'status-503'
  | 'status-400'
  | 'hang'
  | 'reset'
  | 'reset-mid-body'
  | 'stall-body'
  | 'malformed-json'
  | 'not-json'
  | 'empty-body'
  | 'empty-choices'
  | 'empty-content'
  | 'missing-content';

interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** Requests open (completions or messages) when this one arrived, itself included. */
  openAtArrival: number;
  at: number;
}

interface Answer {
  fault?: Fault;
  /** Extra headers for status faults (Retry-After). */
  headers?: Record<string, string>;
  /** Wait before answering (ms). */
  delayMs?: number;
  /** Answer once this settles (before delayMs): a barrier the test releases. */
  hold?: Promise<unknown>;
  text?: string;
}

class Stub {
  readonly requests: Recorded[] = [];
  open = 0;
  peak = 0;
  url = '';
  /** GET /v1/models: a body, a status, or 'hang'. */
  models: unknown = { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'someone' }] };
  private server: Server;

  constructor(private script: (req: Recorded, n: number) => Answer = () => ({})) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  setScript(script: (req: Recorded, n: number) => Answer): void {
    this.script = script;
  }

  calls(): Recorded[] {
    return this.requests.filter((r) => r.method === 'POST');
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '';
    const post = req.method === 'POST';
    if (post) {
      this.open++;
      this.peak = Math.max(this.peak, this.open);
      let closed = false;
      const done = (): void => {
        if (!closed) {
          closed = true;
          this.open--;
        }
      };
      res.on('close', done);
      res.on('finish', done);
    }
    const rec: Recorded = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
      openAtArrival: this.open,
      at: performance.now(),
    };
    this.requests.push(rec);
    if (!post) {
      if (this.models === 'hang') return;
      if (typeof this.models === 'number') return void res.writeHead(this.models).end('no');
      return json(res, 200, this.models);
    }
    const answer = this.script(rec, this.calls().length);
    if (answer.hold) await answer.hold;
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    const anthropic = path.endsWith('/messages');
    const text = answer.text ?? `reply to seed ${anthropic ? rec.body.metadata?.user_id : rec.body.seed}`;
    switch (answer.fault ?? 'ok') {
      case 'ok':
        return json(res, 200, anthropic ? anthropicReply(text, rec.body) : openaiReply(text, rec.body));
      case 'status-429':
      case 'status-500':
      case 'status-503':
      case 'status-400': {
        const status = Number(answer.fault!.slice(7));
        return json(res, status, { error: { message: `stub says ${status}`, type: 'stub' } }, answer.headers);
      }
      case 'hang':
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'reset-mid-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"id":"x","choices":[{"index":0,');
        setTimeout(() => req.socket.resetAndDestroy(), 10);
        return;
      case 'stall-body':
        // Headers and half a body, then nothing: only a timeout that covers the body read ends this.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"id":"x","choices":[{"index":0,');
        return;
      case 'malformed-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"choices": [{"message": {"content": "trunc');
      case 'not-json':
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<html>bad gateway</html>');
      case 'empty-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' });
        return void res.end();
      case 'empty-choices':
        return json(res, 200, { id: 'x', object: 'chat.completion', choices: [] });
      case 'empty-content':
        return json(res, 200, anthropic ? { ...anthropicReply('', rec.body), content: [] } : openaiReply('', rec.body));
      case 'missing-content':
        return json(res, 200, { id: 'x', choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    }
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function openaiReply(text: string, body: any): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: body.ignore_eos ? 'length' : 'stop' }],
    usage: { prompt_tokens: 17, completion_tokens: body.min_tokens ?? 5, total_tokens: 17 + (body.min_tokens ?? 5) },
  };
}

function anthropicReply(text: string, body: any): unknown {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [
      { type: 'text', text: text.slice(0, 5) },
      { type: 'text', text: text.slice(5) },
    ],
    stop_reason: 'max_tokens',
    stop_sequence: null,
    usage: { input_tokens: 11, output_tokens: body.max_tokens, cache_creation_input_tokens: 2, cache_read_input_tokens: 3 },
  };
}

// ---------------------------------------------------------------------------------------------------------

const MESSAGES: ChatMessages = { system: 'You are agent 3.', user: 'What is the answer?' };

function request(seed: number, over: Partial<ChatRequest> = {}): ChatRequest {
  return {
    messages: () => MESSAGES,
    promptLength: () => ({ system: MESSAGES.system.length, user: MESSAGES.user.length }),
    seed,
    temperature: 0.7,
    maxTokens: 100,
    fixedLength: false,
    context: { question: 'q', sweep: 0, temperature: 0.7, neighbourAgents: [], neighbourAnswers: [] },
    ...over,
  };
}

const FAST: RealBackendOptions = { retry: { baseDelayMs: 2, maxDelayMs: 10 }, probeTimeoutMs: 500 };

function openai(base: string | string[], over: Record<string, unknown> = {}, options: RealBackendOptions = FAST): OpenAICompatibleBackend {
  const spec = backendSchema.parse({ kind: 'openai', base_url: base, model: 'qwen3-14b', timeout_ms: 2000, max_retries: 3, ...over });
  if (spec.kind !== 'openai') throw new Error('unreachable');
  return new OpenAICompatibleBackend(spec, options);
}

const stubs: Stub[] = [];
const backends: { close(): Promise<void> }[] = [];
async function stub(script?: (req: Recorded, n: number) => Answer): Promise<Stub> {
  const s = await new Stub(script).start();
  stubs.push(s);
  return s;
}
function track<T extends { close(): Promise<void> }>(b: T): T {
  backends.push(b);
  return b;
}

afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
  await Promise.all(stubs.splice(0).map((s) => s.stop()));
});

const STANDARD = ['max_tokens', 'messages', 'model', 'seed', 'temperature', 'top_p'];

describe('openai backend: request bodies', () => {
  it('vllm gets every sampling field explicitly, the extras, and fixed length as min_tokens = max_tokens', async () => {
    const s = await stub();
    const b = track(openai(s.url, { server: 'vllm' }));
    const r = await b.complete(request(12345, { fixedLength: true, maxTokens: 64 }));
    const body = s.calls()[0].body;
    expect(s.calls()[0].path).toBe('/v1/chat/completions');
    expect(body).toEqual({
      model: 'qwen3-14b',
      messages: [
        { role: 'system', content: MESSAGES.system },
        { role: 'user', content: MESSAGES.user },
      ],
      temperature: 0.7,
      top_p: 1,
      max_tokens: 64,
      seed: 12345,
      top_k: -1,
      min_p: 0,
      repetition_penalty: 1,
      chat_template_kwargs: { enable_thinking: false },
      min_tokens: 64,
      ignore_eos: true,
    });
    expect(r).toMatchObject({ text: 'reply to seed 12345', finishReason: 'length', promptTokens: 17, completionTokens: 64, calls: 1 });
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    expect(b.stats().fixedLengthMismatches).toBe(0);

    await b.complete(request(7));
    expect(Object.keys(s.calls()[1].body).sort()).toEqual(
      [...STANDARD, 'chat_template_kwargs', 'min_p', 'repetition_penalty', 'top_k'].sort(),
    );
  });

  it('thinking: true is passed to the chat template', async () => {
    const s = await stub();
    const b = track(openai(s.url, { server: 'vllm', thinking: true }));
    await b.complete(request(1));
    expect(s.calls()[0].body.chat_template_kwargs).toEqual({ enable_thinking: true });
  });

  it('llama.cpp gets top_k, min_p, repeat_penalty and ignore_eos, never min_tokens', async () => {
    const s = await stub();
    const b = track(openai(s.url, { server: 'llamacpp' }));
    await b.complete(request(5, { fixedLength: true }));
    expect(Object.keys(s.calls()[0].body).sort()).toEqual([...STANDARD, 'ignore_eos', 'min_p', 'repeat_penalty', 'top_k'].sort());
    expect(s.calls()[0].body).toMatchObject({ top_k: -1, min_p: 0, repeat_penalty: 1, ignore_eos: true, seed: 5 });
  });

  it.each(['ollama', 'openai'] as const)('%s gets the standard fields and the seed only', async (server) => {
    const s = await stub();
    const b = track(openai(s.url, { server }));
    await b.complete(request(99, { fixedLength: true, temperature: 1.3 }));
    expect(Object.keys(s.calls()[0].body).sort()).toEqual(STANDARD);
    expect(s.calls()[0].body).toMatchObject({ seed: 99, temperature: 1.3, top_p: 1, max_tokens: 100 });
  });

  it('sends the key from api_key_env, else EMPTY; a named but unset variable is an input error', async () => {
    const s = await stub();
    await track(
      openai(s.url, { server: 'openai', api_key_env: 'PANTA_TEST_KEY' }, { ...FAST, env: { PANTA_TEST_KEY: 'sk-test-123' } }),
    ).complete(request(1));
    await track(openai(s.url, { server: 'openai' })).complete(request(1));
    expect(s.calls().map((c) => c.headers.authorization)).toEqual(['Bearer sk-test-123', 'Bearer EMPTY']);
    expect(() => openai(s.url, { api_key_env: 'PANTA_TEST_UNSET' }, { ...FAST, env: {} })).toThrow(InputError);
    expect(() => openai(s.url, { api_key_env: 'PANTA_TEST_UNSET' }, { ...FAST, env: {} })).toThrow(/PANTA_TEST_UNSET is not set/);
  });

  it('a bare origin gets /v1', async () => {
    const s = await stub();
    const b = track(openai(`${s.url}/`, { server: 'openai' }));
    expect(b.endpoints).toEqual([`${s.url}/v1`]);
  });
});

describe('openai backend: server probing', () => {
  it('picks vllm from an owned_by: vllm model list, probing each endpoint (and its /metrics) once', async () => {
    const s = await stub();
    s.models = { object: 'list', data: [{ id: 'qwen3-14b', object: 'model', owned_by: 'vllm', max_model_len: 32768 }] };
    const b = track(openai(s.url));
    await Promise.all([1, 2, 3, 4, 5].map((seed) => b.complete(request(seed))));
    // /metrics: admission asks once whether the server reports vLLM's load (this stub does not: no polls).
    expect(
      s.requests
        .filter((r) => r.method === 'GET')
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/metrics', '/v1/models']);
    expect(s.calls().every((c) => c.body.top_k === -1 && c.body.chat_template_kwargs !== undefined)).toBe(true);
    expect(await b.serverInfo()).toEqual([{ server: 'vllm', fromSpec: false, contextTokens: 32768 }]);
  });

  it('recognises llama.cpp and Ollama lists; anything else is openai', () => {
    expect(
      serverFromModels({
        object: 'list',
        data: [{ id: 'x.gguf', object: 'model', owned_by: 'llamacpp', meta: { n_ctx_train: 4096, n_vocab: 10 } }],
      }),
    ).toEqual({ server: 'llamacpp', contextTokens: 4096 });
    expect(serverFromModels({ object: 'list', data: [{ id: 'llama3.2:latest', object: 'model', owned_by: 'library' }] }).server).toBe(
      'ollama',
    );
    expect(
      serverFromModels({ object: 'list', data: [{ id: 'bartowski/qwen:Q4_K_M', object: 'model', owned_by: 'bartowski' }] }).server,
    ).toBe('ollama');
    expect(serverFromModels({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'system' }] }).server).toBe('openai');
    expect(serverFromModels({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'sglang' }] }).server).toBe('vllm');
    expect(serverFromModels('garbage').server).toBe('openai');
  });

  it('falls back to openai, silently, when /v1/models answers 404', async () => {
    const s = await stub();
    s.models = 404;
    const b = track(openai(s.url));
    await b.complete(request(3));
    expect(Object.keys(s.calls()[0].body).sort()).toEqual(STANDARD);
  });

  it('asks again before the next request when the probe got no answer (a vLLM still loading)', async () => {
    const s = await stub();
    s.models = 'hang';
    const b = track(openai(s.url, {}, { ...FAST, probeTimeoutMs: 100 }));
    expect(await b.serverInfo()).toEqual([undefined]);
    s.models = { object: 'list', data: [{ id: 'qwen3-14b', owned_by: 'vllm' }] };
    const r = await b.complete(request(8));
    expect(r.calls).toBe(1);
    expect(s.calls()[0].body.top_k).toBe(-1);
  });
});

describe('openai backend: faults', () => {
  const faults: Fault[] = [
    'status-429',
    'status-500',
    'status-503',
    'hang',
    'stall-body',
    'reset',
    'reset-mid-body',
    'malformed-json',
    'not-json',
    'empty-body',
    'empty-choices',
    'empty-content',
    'missing-content',
  ];

  it.each(faults)('retries after %s with the same body and seed', { timeout: 5000 }, async (fault) => {
    const s = await stub((_req, n) => (n === 1 ? { fault } : {}));
    const b = track(openai(s.url, { server: 'vllm', timeout_ms: 300 }));
    const r = await b.complete(request(424242, { fixedLength: true }));
    expect(r.text).toBe('reply to seed 424242');
    expect(r.calls).toBe(2);
    const [first, second] = s.calls();
    expect(second!.body).toEqual(first!.body);
    expect(second!.body.seed).toBe(424242);
  });

  it('honours Retry-After on a 429 (seconds) and retry-after-ms on a 503', async () => {
    const s = await stub((_req, n) =>
      n === 1
        ? { fault: 'status-429', headers: { 'retry-after': '1' } }
        : n === 2
          ? { fault: 'status-503', headers: { 'retry-after-ms': '300' } }
          : {},
    );
    const b = track(openai(s.url, { server: 'openai' }));
    const r = await b.complete(request(1));
    expect(r.calls).toBe(3);
    const [a, c, d] = s.calls().map((x) => x.at);
    expect(c! - a!).toBeGreaterThanOrEqual(950);
    expect(d! - c!).toBeGreaterThanOrEqual(280);
  });

  it('fails a 400 at once: one attempt, an LlmCallError naming the endpoint and the status', async () => {
    const s = await stub(() => ({ fault: 'status-400' }));
    const b = track(openai(s.url, { server: 'openai', max_retries: 8 }));
    const err = await b.complete(request(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmCallError);
    expect(err).toMatchObject({ attempts: 1, exhausted: false, status: 400, endpoint: `${s.url}/v1` });
    expect((err as Error).message).toContain(`openai ${s.url}/v1: HTTP 400`);
    expect((err as Error).message).toContain('stub says 400');
    expect(s.calls()).toHaveLength(1);
  });

  it('rejects with LlmCallError(attempts = max_retries + 1) when every attempt fails, all with one body', async () => {
    const s = await stub(() => ({ fault: 'status-503' }));
    const b = track(openai(s.url, { server: 'vllm', max_retries: 4 }));
    const err = await b.complete(request(77)).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmCallError', attempts: 5, exhausted: true, status: 503 });
    expect(s.calls()).toHaveLength(5);
    expect(new Set(s.calls().map((c) => JSON.stringify(c.body))).size).toBe(1);
    expect(b.stats()).toMatchObject({ attempts: 5, retries: 4, failures: 1 });
  });

  it('times out a hanging server per attempt and gives up after max_retries', async () => {
    const s = await stub(() => ({ fault: 'hang' }));
    const b = track(openai(s.url, { server: 'openai', timeout_ms: 150, max_retries: 1 }));
    const started = performance.now();
    const err = await b.complete(request(1)).catch((e: unknown) => e);
    expect(err).toMatchObject({ attempts: 2, exhausted: true, reason: 'timeout after 150 ms' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('retries a refused connection and never puts the key in the error', async () => {
    const s = await stub();
    const url = s.url;
    await s.stop();
    stubs.length = 0;
    const b = track(openai(url, { server: 'openai', max_retries: 2, api_key_env: 'K' }, { ...FAST, env: { K: 'sk-secret-xyz' } }));
    const err = await b.complete(request(1)).catch((e: unknown) => e);
    expect(err).toMatchObject({ attempts: 3, exhausted: true });
    expect((err as Error).message).toMatch(/connection failed \(ECONNREFUSED\)/);
    expect(JSON.stringify(err) + String((err as Error).message) + String((err as Error).stack)).not.toContain('sk-secret-xyz');
  });
});

describe('openai backend: load', () => {
  it('keeps at most max_in_flight open per endpoint under 200 concurrent calls, spread over two endpoints', async () => {
    // Each stub holds its replies until it has 8 open (then answers in 15 ms): the peak is reached by
    // construction, not by the first replies being slower than the 8th request on a loaded machine.
    const atEight = (): ((rec: Recorded) => Answer) => {
      let release = (): void => {};
      const eight = new Promise<void>((resolve) => (release = resolve));
      return (rec) => {
        if (rec.openAtArrival >= 8) release();
        return { hold: eight, delayMs: 15 };
      };
    };
    const a = await stub(atEight());
    const c = await stub(atEight());
    const b = track(openai([a.url, c.url], { server: 'vllm', max_in_flight: 8 }));
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => b.complete(request(i))));
    expect(results.map((r) => r.text)).toEqual(Array.from({ length: 200 }, (_, i) => `reply to seed ${i}`));
    expect(a.peak).toBeLessThanOrEqual(8);
    expect(c.peak).toBeLessThanOrEqual(8);
    expect(a.peak).toBe(8);
    expect(c.peak).toBe(8);
    expect(a.calls().length + c.calls().length).toBe(200);
    expect(Math.min(a.calls().length, c.calls().length)).toBeGreaterThanOrEqual(80);
    expect(b.stats().peakInFlight).toEqual([8, 8]);
  });

  it('sends each call to the endpoint with the fewest calls in flight (least in-flight, not round-robin)', async () => {
    // The slow endpoint holds every call it gets; the fast one answers at once. Each call is sent once the one
    // before it has reached a server (and, where that was the fast one, been answered), so at every choice after
    // the slow endpoint's first call it has more in flight: least in-flight sends it nothing more, round-robin
    // every other call. No timing decides it.
    const slow = await stub(() => ({ fault: 'hang' }));
    const fast = await stub();
    const b = track(openai([slow.url, fast.url], { server: 'openai', max_in_flight: 64, timeout_ms: 60_000 }));
    const arrived = () => slow.calls().length + fast.calls().length;
    for (let i = 0; i < 20; i++) {
      const [before, fastBefore] = [arrived(), fast.calls().length];
      const call = b.complete(request(i));
      await vi.waitFor(() => expect(arrived()).toBeGreaterThan(before), { timeout: 10_000, interval: 2 });
      if (fast.calls().length > fastBefore) await call;
      else void call.catch(() => undefined); // held by the slow endpoint until close()
    }
    expect(slow.calls().length).toBeLessThanOrEqual(1);
    expect(fast.calls().length).toBeGreaterThanOrEqual(19);
  });

  it('close() fails calls still waiting for a slot', async () => {
    const s = await stub(() => ({ fault: 'hang' }));
    const b = openai(s.url, { server: 'openai', max_in_flight: 1, timeout_ms: 10_000 });
    const calls = [b.complete(request(1)), b.complete(request(2))].map((p) => p.catch((e: unknown) => e));
    // The first call is at the server (it hangs there) before close(): a fixed sleep lost that race under load.
    await vi.waitFor(() => expect(s.calls()).toHaveLength(1), { timeout: 10_000, interval: 5 });
    await b.close();
    const errs = await Promise.all(calls);
    expect(errs.map((e) => (e as LlmCallError).reason)).toEqual(['backend closed during the call', 'backend closed']);
    expect(s.calls()).toHaveLength(1);
  });
});

describe('anthropic backend', () => {
  function anthropic(base: string, over: Record<string, unknown> = {}, options: RealBackendOptions = FAST): AnthropicBackend {
    const spec = backendSchema.parse({
      kind: 'anthropic',
      base_url: base,
      model: 'claude-haiku-4-5',
      timeout_ms: 2000,
      max_retries: 3,
      ...over,
    });
    if (spec.kind !== 'anthropic') throw new Error('unreachable');
    return track(new AnthropicBackend(spec, options));
  }

  it('sends the system string, one user message, max_tokens, temperature and the seed in metadata.user_id', async () => {
    const s = await stub();
    const b = anthropic(s.url, { api_key_env: 'AK' }, { ...FAST, env: { AK: 'sk-ant-test' } });
    const r = await b.complete(request(31337, { maxTokens: 50, temperature: 0.4 }));
    const call = s.calls()[0];
    expect(call.path).toBe('/v1/messages');
    expect(call.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 50,
      temperature: 0.4,
      system: MESSAGES.system,
      messages: [{ role: 'user', content: MESSAGES.user }],
      metadata: { user_id: 'seed:31337' },
    });
    expect(call.headers['anthropic-version']).toBe('2023-06-01');
    expect(call.headers['x-api-key']).toBe('sk-ant-test');
    expect(call.headers.authorization).toBe('Bearer sk-ant-test');
    // Two text blocks joined; stop_reason max_tokens is `length`; prompt tokens count cache reads and writes.
    expect(r).toEqual({
      text: 'reply to seed seed:31337',
      finishReason: 'length',
      promptTokens: 16,
      completionTokens: 50,
      calls: 1,
      latencyMs: expect.any(Number),
    });
  });

  it('sends no temperature from API version 2026-10-21 on', async () => {
    const s = await stub();
    const b = anthropic(s.url, { api_version: '2026-10-21' });
    await b.complete(request(1));
    expect(s.calls()[0].body).not.toHaveProperty('temperature');
    expect(s.calls()[0].headers['anthropic-version']).toBe('2026-10-21');
  });

  it('accepts a base_url ending in /v1', async () => {
    const s = await stub();
    await anthropic(`${s.url}/v1`).complete(request(2));
    expect(s.calls()[0].path).toBe('/v1/messages');
  });

  it.each(['status-429', 'status-503', 'hang', 'stall-body', 'reset', 'malformed-json', 'empty-content'] as const)(
    'retries after %s with the same seed',
    { timeout: 5000 },
    async (fault) => {
      const s = await stub((_req, n) => (n === 1 ? { fault } : {}));
      const r = await anthropic(s.url, { timeout_ms: 300 }).complete(request(555));
      expect(r.calls).toBe(2);
      expect(s.calls()[1].body).toEqual(s.calls()[0].body);
      expect(s.calls()[1].body.metadata.user_id).toBe('seed:555');
    },
  );

  it('fails a 400 at once', async () => {
    const s = await stub(() => ({ fault: 'status-400' }));
    const err = await anthropic(s.url)
      .complete(request(1))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmCallError', attempts: 1, status: 400 });
    expect((err as Error).message).toContain(`anthropic ${s.url}: HTTP 400`);
  });
});

describe('createBackend', () => {
  it('builds the openai and anthropic backends from a parsed spec', async () => {
    const s = await stub();
    const o = track(createBackend(backendSchema.parse({ kind: 'openai', base_url: s.url, model: 'm', server: 'openai' }), [], 'spec.yaml'));
    const a = track(createBackend(backendSchema.parse({ kind: 'anthropic', base_url: s.url, model: 'c' }), [], 'spec.yaml'));
    expect(o).toBeInstanceOf(OpenAICompatibleBackend);
    expect(a).toBeInstanceOf(AnthropicBackend);
    expect([o.kind, o.model, a.kind, a.model]).toEqual(['openai', 'm', 'anthropic', 'c']);
    expect((await o.complete(request(4))).text).toBe('reply to seed 4');
    expect(() =>
      createBackend(
        backendSchema.parse({ kind: 'openai', base_url: s.url, model: 'm', api_key_env: `PANTA_NOPE_${Date.now()}` }),
        [],
        'spec.yaml',
      ),
    ).toThrow(/spec\.yaml/);
  });
});
