import { describe, expect, it } from 'vitest';
import { registerSecret } from '@panta/core';
import { EndpointUnhealthyError, HealthBreaker, unhealthyCause } from '../src/retry/breaker.js';
import { RetryingCaller } from '../src/retry/policy.js';
import { MalformedReplyError } from '../src/retry/errors.js';
import { UnusableReplyError, recordedReply } from '../src/result.js';

const ENDPOINTS = ['http://a:8000/v1', 'http://b:8000/v1'];
const HTML = `not JSON: "<!DOCTYPE html><html><head><title>Login</title></head><body>${'x'.repeat(400)}</body></html>"`;

describe('HealthBreaker', () => {
  it('trips once more than max_unusable_share of the window is unusable, naming the endpoint, the reply and the fix', () => {
    const b = new HealthBreaker('openai', ENDPOINTS, { window: 50, maxUnusableShare: 0.75 }, 'qwen3');
    let trip: EndpointUnhealthyError | undefined;
    let n = 0;
    while (!trip && n < 100) {
      trip = b.record(0, { kind: 'unusable', reason: HTML });
      n++;
    }
    // Not before the minimum count (20 attempts, min(window, 20)).
    expect(n).toBe(20);
    expect(trip).toBeInstanceOf(EndpointUnhealthyError);
    const line = trip!.message;
    expect(line).not.toContain('\n');
    expect(line).toMatch(
      /^openai http:\/\/a:8000\/v1: 20 of its last 20 attempts gave no usable reply \(latest: not JSON: "<!DOCTYPE html>/,
    );
    expect(line).toMatch(/fix: check that backend\.base_url is the OpenAI-compatible API root .* model qwen3/);
    // At most about 200 characters of what the server said.
    expect(line).not.toContain('x'.repeat(250));
    expect(b.trip).toBe(trip);
    // It trips once: later attempts return nothing new.
    expect(b.record(0, { kind: 'unusable', reason: HTML })).toBeUndefined();
  });

  it('keeps a rolling window per endpoint: old attempts leave it, and each endpoint counts its own', () => {
    const b = new HealthBreaker('openai', ENDPOINTS, { window: 10, maxUnusableShare: 0.5 });
    for (let i = 0; i < 10; i++) expect(b.record(0, { kind: 'ok' })).toBeUndefined();
    // Endpoint b's failures do not touch a's window.
    for (let i = 0; i < 5; i++) expect(b.record(1, { kind: 'failed', reason: 'HTTP 500: boom', status: 500 })).toBeUndefined();
    // a: 5 bad replace 5 good ones: 5 of 10 is not above 0.5.
    for (let i = 0; i < 5; i++) expect(b.record(0, { kind: 'unusable', reason: 'empty' })).toBeUndefined();
    expect(b.window(0)).toEqual({ bad: 5, attempts: 10 });
    // The sixth bad one replaces a good one: 6 of 10.
    const trip = b.record(0, { kind: 'unusable', reason: 'empty' });
    expect(trip?.message).toMatch(/^openai http:\/\/a:8000\/v1: 6 of its last 10 attempts gave no usable reply \(latest: empty\)/);
  });

  it('a single odd reply and its retries stay far below the bound', () => {
    const b = new HealthBreaker('openai', ENDPOINTS.slice(0, 1), { window: 50, maxUnusableShare: 0.75 });
    // One call's reply is empty on all of its 9 attempts (the same seed gives the same reply), among good ones.
    for (let i = 0; i < 9; i++) expect(b.record(0, { kind: 'unusable', reason: 'empty' })).toBeUndefined();
    for (let i = 0; i < 200; i++) expect(b.record(0, { kind: i % 40 === 0 ? 'unusable' : 'ok' })).toBeUndefined();
    expect(b.trip).toBeUndefined();
  });

  it('names a failing endpoint by its status and says to start the server', () => {
    const b = new HealthBreaker('openai', ENDPOINTS, { window: 50, maxUnusableShare: 0.75 });
    let trip: EndpointUnhealthyError | undefined;
    for (let i = 0; i < 20 && !trip; i++) trip = b.record(1, { kind: 'failed', reason: 'HTTP 500: internal error', status: 500 });
    expect(trip?.status).toBe(500);
    expect(trip?.message).toMatch(
      /^openai http:\/\/b:8000\/v1: 20 of its last 20 attempts failed \(latest: HTTP 500: internal error\); fix: check that the model server at backend\.base_url is up/,
    );
  });

  it('stops at once on 401 and 403, without counting; never counts a rate limit', () => {
    const b = new HealthBreaker('openai', ENDPOINTS, { window: 50, maxUnusableShare: 0.75 });
    for (let i = 0; i < 100; i++) expect(b.record(0, { kind: 'failed', reason: 'HTTP 429: slow down', status: 429 })).toBeUndefined();
    const trip = b.record(0, { kind: 'failed', reason: 'HTTP 401: invalid key', status: 401 });
    expect(trip?.status).toBe(401);
    expect(trip?.message).toMatch(
      /^openai http:\/\/a:8000\/v1: HTTP 401: invalid key: the endpoint refuses the key; fix: check backend\.api_key_env/,
    );
    expect(trip?.message).toMatch(/not retried/);
    expect(trip?.message).not.toMatch(/run the same command again/);
    const forbidden = new HealthBreaker('anthropic', ENDPOINTS, { window: 50, maxUnusableShare: 0.75 }).record(1, {
      kind: 'failed',
      status: 403,
    });
    expect(forbidden?.message).toMatch(/^anthropic http:\/\/b:8000\/v1: HTTP 403: the endpoint refuses the key/);
  });

  it('redacts a key the server echoes', () => {
    registerSecret('sk-breaker-test-secret-0123456789');
    const b = new HealthBreaker('openai', ENDPOINTS, { window: 20, maxUnusableShare: 0.75 });
    let trip: EndpointUnhealthyError | undefined;
    for (let i = 0; i < 20 && !trip; i++)
      trip = b.record(0, { kind: 'unusable', reason: 'not JSON: "your key sk-breaker-test-secret-0123456789 is fine"' });
    expect(trip?.message).toContain('[redacted]');
    expect(trip?.message).not.toContain('sk-breaker-test-secret');
  });
});

describe('RetryingCaller with its health breaker', () => {
  const tuning = { baseDelayMs: 1, maxDelayMs: 2, random: () => 0.5, abortGraceMs: 0 };
  const options = { backend: 'openai', endpoints: ENDPOINTS.slice(0, 1), maxInFlight: 8, timeoutMs: 1000, tuning };

  it('an endpoint that only sends unusable replies stops every call, queued and later, with one error', async () => {
    const tripped: EndpointUnhealthyError[] = [];
    const caller = new RetryingCaller({
      ...options,
      maxRetries: 3,
      health: { window: 50, maxUnusableShare: 0.75 },
      onUnhealthy: (e) => tripped.push(e),
    });
    let attempts = 0;
    const html = () => {
      attempts++;
      return Promise.reject(new UnusableReplyError('unparsable', 'not JSON: "<html>proxy login</html>"'));
    };
    const results = await Promise.allSettled(Array.from({ length: 16 }, () => caller.call(html, recordedReply)));
    // 16 calls x 4 attempts would be 64: the breaker stopped them after 20.
    expect(attempts).toBeLessThanOrEqual(20 + 8);
    expect(tripped).toHaveLength(1);
    // A backend that never gave a usable reply records none: every call fails with the trip.
    for (const r of results) expect(r.status === 'rejected' && r.reason).toBe(tripped[0]);
    expect(tripped[0].message).toMatch(/gave no usable reply \(latest: not JSON: "<html>proxy login<\/html>"\)/);
    await expect(caller.call(async () => 'ok')).rejects.toBe(tripped[0]);
    expect(unhealthyCause(new Error('wrapped', { cause: tripped[0] }))).toBe(tripped[0]);
  });

  it('records an unusable reply after max_retries once the backend has given a usable one', async () => {
    const caller = new RetryingCaller({ ...options, maxRetries: 2 });
    expect((await caller.call(async () => 'ok')).value).toBe('ok');
    let attempts = 0;
    const out = await caller.call(async () => {
      attempts++;
      throw new UnusableReplyError('empty', 'choices[0].message.content is empty');
    }, recordedReply);
    expect(attempts).toBe(3);
    expect(out.value).toMatchObject({ status: 'empty', reply: { text: '' } });
    expect(caller.breaker.trip).toBeUndefined();
  });

  it('a healthy endpoint with a few malformed replies keeps going', async () => {
    const caller = new RetryingCaller({ ...options, maxRetries: 2 });
    let n = 0;
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        caller.call(async () => {
          if (++n % 10 === 0) throw new MalformedReplyError('no choices');
          return 'ok';
        }),
      ),
    );
    expect(results.every((r) => r.value === 'ok')).toBe(true);
    expect(caller.breaker.trip).toBeUndefined();
  });
});
