import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import * as Anthropic from '@anthropic-ai/sdk';
import { classifyFailure, isRetryableStatus, retryAfterMs } from '../src/retry/classify.js';
import { loadAnthropic, loadOpenAI } from '../src/sdk.js';
import { BackendClosedError, LlmCallError, MalformedReplyError } from '../src/retry/errors.js';
import { EndpointUnhealthyError } from '../src/retry/breaker.js';
import { EndpointPool } from '../src/retry/pool.js';
import { nodeFetch } from '../src/node-fetch.js';
import { DEFAULT_RETRY_TUNING, RetryingCaller, retryDelayMs, type RetryEvent } from '../src/retry/policy.js';

const tuning = { ...DEFAULT_RETRY_TUNING, baseDelayMs: 1, maxDelayMs: 4 };

function statusError(status: number, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, { error: { message: `status ${status}` } }, undefined, new Headers(headers));
}

describe('classifyFailure', () => {
  // The backends load their SDK on first use, which registers its error classes; these tests throw SDK
  // errors without a backend, so they load both the same way.
  beforeAll(async () => {
    await loadOpenAI();
    await loadAnthropic();
  });

  it('retries 408, 409, 429 and every 5xx; fails 400, 401, 403, 404, 422 at once', () => {
    for (const s of [408, 409, 429, 500, 502, 503, 504, 529]) expect(isRetryableStatus(s), String(s)).toBe(true);
    for (const s of [400, 401, 403, 404, 413, 422]) expect(isRetryableStatus(s), String(s)).toBe(false);
    expect(classifyFailure(statusError(503), false, 1000)).toMatchObject({ retry: true, status: 503 });
    expect(classifyFailure(statusError(422), false, 1000)).toMatchObject({ retry: false, status: 422 });
    const anthropic = Anthropic.APIError.generate(
      529,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      undefined,
      new Headers(),
    );
    expect(classifyFailure(anthropic, false, 1000)).toMatchObject({ retry: true, status: 529 });
  });

  it('retries timeouts, connection failures, resets in the cause chain, malformed and empty replies', () => {
    expect(classifyFailure(new APIConnectionTimeoutError(), false, 750)).toEqual({ retry: true, reason: 'timeout after 750 ms' });
    // Our own timer fired: whatever the SDK threw (here an abort error) is a timeout.
    expect(classifyFailure(new APIUserAbortError(), true, 750)).toEqual({ retry: true, reason: 'timeout after 750 ms' });
    expect(classifyFailure(new APIUserAbortError(), false, 750).retry).toBe(false);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(
      classifyFailure(new APIConnectionError({ cause: new TypeError('fetch failed', { cause: refused }) }), false, 1).reason,
    ).toContain('ECONNREFUSED');
    // A body read cut by a reset: undici's TypeError('terminated') reaches us unwrapped by the SDK.
    const reset = new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(classifyFailure(reset, false, 1)).toMatchObject({ retry: true });
    expect(classifyFailure(new SyntaxError('Unexpected end of JSON input'), false, 1).retry).toBe(true);
    expect(classifyFailure(new MalformedReplyError('no choices'), false, 1).reason).toBe('malformed reply: no choices');
  });

  it('does not retry a closed backend or an unknown bug', () => {
    expect(classifyFailure(new BackendClosedError('backend closed'), true, 1).retry).toBe(false);
    expect(classifyFailure(new RangeError('oops'), false, 1)).toMatchObject({ retry: false, reason: 'unexpected error: RangeError: oops' });
  });

  it('reads retry-after-ms, retry-after in seconds and as an HTTP date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '1500.5', 'retry-after': '9' }))).toBe(1500.5);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(classifyFailure(statusError(429, { 'retry-after': '3' }), false, 1).retryAfterMs).toBe(3000);
  });
});

describe('retryDelayMs', () => {
  it('is full jitter under a doubling ceiling capped at maxDelayMs', () => {
    const t = { ...DEFAULT_RETRY_TUNING, random: () => 0.999999 };
    expect(retryDelayMs(1, {}, t)).toBeCloseTo(250, 0);
    expect(retryDelayMs(3, {}, t)).toBeCloseTo(1000, 0);
    expect(retryDelayMs(20, {}, t)).toBeCloseTo(20_000, 0);
    expect(retryDelayMs(5, {}, { ...t, random: () => 0 })).toBe(0);
  });

  it('honours Retry-After as a lower bound, capped at maxRetryAfterMs', () => {
    for (const r of [0, 0.5, 0.999]) {
      const d = retryDelayMs(1, { retryAfterMs: 2000 }, { ...DEFAULT_RETRY_TUNING, random: () => r });
      expect(d).toBeGreaterThanOrEqual(2000);
      expect(d).toBeLessThanOrEqual(2200);
    }
    expect(retryDelayMs(1, { retryAfterMs: 3_600_000 }, { ...DEFAULT_RETRY_TUNING, random: () => 0 })).toBe(60_000);
  });
});

describe('EndpointPool', () => {
  it('never opens more than cap per endpoint, queues FIFO, and prefers the least busy endpoint', async () => {
    const pool = new EndpointPool(2, 2);
    const got = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire(), pool.acquire()]);
    expect(got.sort()).toEqual([0, 0, 1, 1]);
    const order: string[] = [];
    const a = pool.acquire().then((i) => order.push(`a${i}`));
    const b = pool.acquire().then((i) => order.push(`b${i}`));
    expect(pool.waiting).toBe(2);
    pool.release(1);
    pool.release(0);
    await Promise.all([a, b]);
    expect(order).toEqual(['a1', 'b0']);
    expect(pool.inFlight()).toEqual([2, 2]);
    expect(pool.peakInFlight()).toEqual([2, 2]);
    pool.release(0);
    pool.release(0);
    // Endpoint 0 is idle, endpoint 1 full: the next request goes to 0, and again while 0 has fewer open.
    expect(await pool.acquire()).toBe(0);
    expect(() => pool.release(0)).not.toThrow();
    expect(() => pool.release(0)).toThrow(/without a slot/);
  });

  it('lets the deepest waiting call in first (arrival order within a depth), and follows a cap that moves', async () => {
    let cap = 1;
    const pool = new EndpointPool(1, 8, () => cap);
    await pool.acquire();
    const order: string[] = [];
    const waits = [
      ['lattice-a', 3],
      ['chain', 2560],
      ['lattice-b', 3],
      ['shallow', 1],
      ['chain-2', 2560],
    ].map(([name, depth]) => pool.acquire(-1, depth as number).then(() => order.push(name as string)));
    expect(pool.waiting).toBe(5);
    pool.release(0);
    await Promise.resolve();
    expect(order).toEqual(['chain']);
    // The limit grows to 3: kick lets two more in without a release; it never passes the pool's cap of 8.
    cap = 3;
    pool.kick();
    await Promise.resolve();
    expect(order).toEqual(['chain', 'chain-2', 'lattice-a']);
    expect(pool.inFlight()).toEqual([3]);
    cap = 100;
    pool.kick();
    await Promise.all(waits);
    expect(order).toEqual(['chain', 'chain-2', 'lattice-a', 'lattice-b', 'shallow']);
    expect(pool.peakInFlight()).toEqual([5]);
  });

  it('sends a retry elsewhere when another endpoint has room, else back to the same one', async () => {
    const pool = new EndpointPool(3, 4);
    expect(await pool.acquire(0)).not.toBe(0);
    const single = new EndpointPool(1, 1);
    expect(await single.acquire(0)).toBe(0);
  });

  it('rejects queued and later requests once closed', async () => {
    const pool = new EndpointPool(1, 1);
    await pool.acquire();
    const queued = pool.acquire();
    pool.close();
    await expect(queued).rejects.toBeInstanceOf(BackendClosedError);
    await expect(pool.acquire()).rejects.toBeInstanceOf(BackendClosedError);
  });
});

describe('RetryingCaller', () => {
  const options = { backend: 'openai', endpoints: ['http://a/v1', 'http://b/v1'], maxInFlight: 4, timeoutMs: 200, tuning };

  it('retries until success and counts attempts', async () => {
    const events: RetryEvent[] = [];
    const caller = new RetryingCaller({ ...options, maxRetries: 5, onRetry: (e) => events.push(e) });
    let n = 0;
    const out = await caller.call(async () => {
      if (++n < 3) throw statusError(503);
      return 'ok';
    });
    expect(out).toMatchObject({ value: 'ok', attempts: 3 });
    expect(events.map((e) => [e.attempt, e.status])).toEqual([
      [1, 503],
      [2, 503],
    ]);
    // The retry went to the other endpoint while that one had room.
    expect(events[0].endpoint).not.toBe(events[1].endpoint);
    expect(caller.stats()).toMatchObject({ attempts: 3, retries: 2, failures: 0, inFlight: [0, 0] });
  });

  it('rejects with LlmCallError(attempts = max_retries + 1) when retries run out', async () => {
    const caller = new RetryingCaller({ ...options, maxRetries: 3 });
    let n = 0;
    const err = await caller
      .call(async () => {
        n++;
        throw new MalformedReplyError('no choices');
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmCallError);
    expect(err).toMatchObject({ name: 'LlmCallError', attempts: 4, exhausted: true, reason: 'malformed reply: no choices' });
    expect((err as LlmCallError).cause).toBeInstanceOf(MalformedReplyError);
    expect((err as Error).message).toMatch(
      /^openai http:\/\/[ab]\/v1: gave up after 4 attempts; last failure: malformed reply: no choices$/,
    );
    expect(n).toBe(4);
    expect(caller.stats()).toMatchObject({ failures: 1, inFlight: [0, 0] });
  });

  it('fails a non-retryable status after one attempt, naming the status and a fix', async () => {
    const caller = new RetryingCaller({ ...options, maxRetries: 8 });
    const err = await caller.call(async () => Promise.reject(statusError(404))).catch((e: unknown) => e);
    expect(err).toMatchObject({ attempts: 1, exhausted: false, status: 404 });
    expect((err as Error).message).toMatch(/HTTP 404.*not retried.*base_url and model/);
  });

  it('stops the backend at a 401 after one attempt: every later call fails with the same line', async () => {
    const caller = new RetryingCaller({ ...options, maxRetries: 8 });
    let attempts = 0;
    const err = await caller
      .call(async () => {
        attempts++;
        throw statusError(401);
      })
      .catch((e: unknown) => e);
    expect(attempts).toBe(1);
    expect(err).toBeInstanceOf(EndpointUnhealthyError);
    expect(err).toMatchObject({ status: 401 });
    expect((err as Error).message).toMatch(
      /^openai http:\/\/[ab]\/v1: HTTP 401: status 401: the endpoint refuses the key; fix: check backend\.api_key_env/,
    );
    await expect(caller.call(async () => 'ok')).rejects.toBe(err);
  });

  it('aborts an attempt at timeoutMs and retries it', async () => {
    const caller = new RetryingCaller({ ...options, timeoutMs: 50, maxRetries: 1 });
    const started = performance.now();
    const err = await caller
      .call(
        (_e, signal) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener('abort', () => reject(new APIUserAbortError()));
          }),
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ attempts: 2, exhausted: true, reason: 'timeout after 50 ms' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('does not time out a reply that arrived while the event loop was blocked past timeoutMs', async () => {
    // The server (in this process) writes its reply at once and then blocks the event loop past the
    // attempt's timeout: when the loop runs again, the timer and the reply are both due, and timers run first.
    const blockMs = 250;
    const server = createServer((_req, res) => {
      res.end('{"ok":true}');
      const until = performance.now() + blockMs;
      while (performance.now() < until) {
        // the client's own lag (a loaded machine, a long synchronous step)
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const fetchImpl = nodeFetch(1);
    const caller = new RetryingCaller({ ...options, timeoutMs: 100, maxRetries: 0 });
    try {
      const out = await caller.call(async (_e, signal) => (await fetchImpl(url, { signal })).json());
      expect(out).toMatchObject({ value: { ok: true }, attempts: 1 });
    } finally {
      caller.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("keeps a timed-out attempt's slot for abortGraceMs, so the server never sees more than the cap", async () => {
    const caller = new RetryingCaller({
      ...options,
      endpoints: ['http://a/v1'],
      maxInFlight: 1,
      timeoutMs: 20,
      maxRetries: 0,
      tuning: { ...tuning, abortGraceMs: 80 },
    });
    const hang = (_e: number, signal: AbortSignal) =>
      new Promise<string>((_r, reject) => signal.addEventListener('abort', () => reject(new APIUserAbortError())));
    const failed = await caller.call(hang).catch((e: unknown) => e);
    expect(failed).toMatchObject({ reason: 'timeout after 20 ms' });
    expect(caller.stats().inFlight).toEqual([1]);
    const started = performance.now();
    await caller.call(async () => 'next');
    expect(performance.now() - started).toBeGreaterThanOrEqual(60);
    expect(caller.stats().inFlight).toEqual([0]);
  });

  it('close() fails open, sleeping and queued calls without retrying them', async () => {
    const caller = new RetryingCaller({
      ...options,
      endpoints: ['http://a/v1'],
      maxInFlight: 1,
      maxRetries: 8,
      tuning: { ...tuning, baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 1 },
    });
    const open = caller
      .call((_e, signal) => new Promise((_r, reject) => signal.addEventListener('abort', () => reject(new APIUserAbortError()))))
      .catch((e: unknown) => e);
    const queued = caller.call(async () => 'never').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 10));
    const started = performance.now();
    await caller.close();
    const [a, b] = await Promise.all([open, queued]);
    expect(a).toMatchObject({ name: 'LlmCallError', exhausted: false, reason: 'backend closed during the call', attempts: 1 });
    expect(b).toMatchObject({ name: 'LlmCallError', exhausted: false, reason: 'backend closed', attempts: 0 });
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(caller.call(async () => 'late')).rejects.toMatchObject({ reason: 'backend closed' });
  });
});
