import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backendSchema, type ChatMessages } from '@panta/core';
import type { ChatRequest } from '../src/backend.js';
import { AnthropicBackend } from '../src/anthropic/backend.js';
import { OpenAICompatibleBackend, type RealBackendOptions } from '../src/openai/backend.js';
import { LlmCallError } from '../src/retry/errors.js';
import { startAdversarialServer } from '../../../test/adversarial/server.js';

// A reply that arrived empty or unparsable comes back the same for the same seed: after the call's retries it
// is the answer (""), with replyStatus; failures without a reply still fail the call.

type Kind = 'ok' | 'empty' | 'whitespace' | 'null-content' | 'number-content' | 'no-choices' | 'not-json' | 'broken-json' | '503' | '400';

const MESSAGES: ChatMessages = { system: 'You are agent 3.', user: 'What is the answer?' };
const request: ChatRequest = {
  messages: () => MESSAGES,
  promptLength: () => ({ system: MESSAGES.system.length, user: MESSAGES.user.length }),
  seed: 99,
  temperature: 0.7,
  maxTokens: 50,
  fixedLength: false,
};
const FAST: RealBackendOptions = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server answering attempt i (0-based) as `kinds[min(i, last)]`, in the OpenAI or the Anthropic format. */
async function scripted(kinds: Kind[], format: 'openai' | 'anthropic' = 'openai'): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      // Only completions are attempts: the admission probe's GET /metrics finds no metrics here.
      if (req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const kind = kinds[Math.min(calls++, kinds.length - 1)];
      const send = (status: number, body: string, type = 'application/json'): void => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      const text =
        kind === 'empty'
          ? ''
          : kind === 'whitespace'
            ? ' \n\t'
            : kind === 'null-content'
              ? null
              : kind === 'number-content'
                ? 42
                : 'a real answer';
      if (kind === '503') return send(503, '{"error":{"message":"overloaded"}}');
      if (kind === '400') return send(400, '{"error":{"message":"bad request"}}');
      if (kind === 'not-json') return send(200, '<html>hello</html>', 'text/html');
      if (kind === 'broken-json') return send(200, '{"choices": [{"message": {"content": "trunc');
      if (format === 'anthropic') {
        const content = kind === 'no-choices' ? null : typeof text === 'string' ? [{ type: 'text', text }] : [];
        return send(
          200,
          JSON.stringify({
            id: 'm',
            type: 'message',
            role: 'assistant',
            content,
            stop_reason: 'end_turn',
            usage: { input_tokens: 7, output_tokens: 3 },
          }),
        );
      }
      const choices = kind === 'no-choices' ? [] : [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }];
      send(200, JSON.stringify({ id: 'c', object: 'chat.completion', choices, usage: { prompt_tokens: 7, completion_tokens: 3 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => calls };
}

function openai(url: string, maxRetries = 2): OpenAICompatibleBackend {
  const spec = backendSchema.parse({
    kind: 'openai',
    base_url: url,
    model: 'm',
    server: 'vllm',
    timeout_ms: 2000,
    max_retries: maxRetries,
    // The health breaker off: these backends never give a usable reply (breaker.test.ts has the breaker on).
    max_unusable_share: 1,
  });
  if (spec.kind !== 'openai') throw new Error('unreachable');
  const b = new OpenAICompatibleBackend(spec, FAST);
  closers.push(() => b.close());
  return b;
}

describe('a reply that is empty or unparsable on every attempt is recorded', () => {
  it.each([
    ['empty', 'empty'],
    ['whitespace', 'empty'],
    ['null-content', 'empty'],
    ['number-content', 'unparsable'],
    ['no-choices', 'unparsable'],
    ['not-json', 'unparsable'],
    ['broken-json', 'unparsable'],
  ] as const)('openai: %s after max_retries is "" with replyStatus %s', async (kind, status) => {
    const s = await scripted([kind]);
    const b = openai(s.url);
    const r = await b.complete(request);
    expect(r).toMatchObject({ text: '', replyStatus: status, calls: 3 });
    expect(s.calls()).toBe(3);
    expect(b.stats()).toMatchObject({ attempts: 3, retries: 2, failures: 0, recovered: 1 });
  });

  it('a later reply with text wins; the recorded reply is the latest unusable one, even after a 503', async () => {
    const ok = await b2(['empty', 'ok']);
    expect(ok).toMatchObject({ text: 'a real answer', calls: 2 });
    expect(ok.replyStatus).toBeUndefined();
    const late = await b2(['empty', '503', '503']);
    expect(late).toMatchObject({ text: '', replyStatus: 'empty', calls: 3, promptTokens: 7, completionTokens: 3, finishReason: 'stop' });

    async function b2(kinds: Kind[]) {
      return openai((await scripted(kinds)).url).complete(request);
    }
  });

  it('failures without a usable reply still fail: 503 on every attempt, a 400 after an empty reply', async () => {
    const all503 = await openai((await scripted(['503'])).url)
      .complete(request)
      .catch((e: unknown) => e);
    expect(all503).toBeInstanceOf(LlmCallError);
    expect(all503).toMatchObject({ attempts: 3, exhausted: true, status: 503 });
    const then400 = await openai((await scripted(['empty', '400'])).url)
      .complete(request)
      .catch((e: unknown) => e);
    expect(then400).toMatchObject({ attempts: 2, exhausted: false, status: 400 });
  });

  it('max_retries 0 records the first unusable reply', async () => {
    const s = await scripted(['empty']);
    expect(await openai(s.url, 0).complete(request)).toMatchObject({ text: '', replyStatus: 'empty', calls: 1 });
  });

  it.each([
    ['empty', 'empty'],
    ['null-content', 'empty'],
    ['no-choices', 'unparsable'],
    ['broken-json', 'unparsable'],
  ] as const)('anthropic: %s after max_retries is "" with replyStatus %s', async (kind, status) => {
    const s = await scripted([kind], 'anthropic');
    const spec = backendSchema.parse({
      kind: 'anthropic',
      base_url: s.url,
      model: 'claude-x',
      api_key_env: 'AK',
      timeout_ms: 2000,
      max_retries: 1,
      max_unusable_share: 1,
    });
    if (spec.kind !== 'anthropic') throw new Error('unreachable');
    const b = new AnthropicBackend(spec, { ...FAST, env: { AK: 'sk-ant-test' } });
    closers.push(() => b.close());
    expect(await b.complete(request)).toMatchObject({ text: '', replyStatus: status, calls: 2 });
    expect(s.calls()).toBe(2);
  });

  it('against the adversarial server: empty replies are recorded, control characters arrive well-formed', async () => {
    const empty = await startAdversarialServer({ mode: 'empty' });
    closers.push(() => empty.close());
    expect(await openai(empty.url, 1).complete(request)).toMatchObject({ text: '', replyStatus: 'empty', calls: 2 });
    const control = await startAdversarialServer({ mode: 'control-chars' });
    closers.push(() => control.close());
    const b = openai(control.url, 1);
    let all = '';
    for (let seed = 0; seed < 20; seed++) {
      const r = await b.complete({ ...request, seed });
      expect(r.replyStatus).toBeUndefined();
      // A lone surrogate would not survive UTF-8 as itself.
      expect(Buffer.from(r.text, 'utf8').toString('utf8')).toBe(r.text);
      all += r.text;
    }
    // The other control characters arrive as sent.
    expect(all).toContain('\u0000');
    expect(all).toContain('\u001b[');
    expect(all).toContain('\ufffd');
  });
});
