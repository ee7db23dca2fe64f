import { describe, expect, it } from 'vitest';
import type { BackendSpec } from '@panta/core';
import { withBaseUrl } from '../src/worker-context.js';

const openai = { kind: 'openai', base_url: 'http://spec:8000/v1', model: 'm', max_in_flight: 64 } as unknown as BackendSpec;
const anthropic = { kind: 'anthropic', model: 'claude', max_in_flight: 8 } as unknown as BackendSpec;
const surrogate = { kind: 'surrogate', latency_ms: 0 } as unknown as BackendSpec;

describe("a worker's --base-url", () => {
  it('replaces the spec endpoints with one URL or a list the backend balances over', () => {
    expect(withBaseUrl(openai, undefined)).toBe(openai);
    expect(withBaseUrl(openai, 'http://node:8001/v1')).toMatchObject({ base_url: 'http://node:8001/v1', model: 'm' });
    expect(withBaseUrl(openai, ['http://node:8001/v1'])).toMatchObject({ base_url: 'http://node:8001/v1' });
    expect(withBaseUrl(openai, ['http://node:8001/v1', 'http://node:8002/v1'])).toMatchObject({
      base_url: ['http://node:8001/v1', 'http://node:8002/v1'],
    });
  });

  it('leaves the in-process surrogate alone, and refuses a list for Anthropic in one line', () => {
    expect(withBaseUrl(surrogate, ['http://node:8001/v1'])).toBe(surrogate);
    expect(withBaseUrl(anthropic, 'https://proxy.example')).toMatchObject({ base_url: 'https://proxy.example' });
    expect(() => withBaseUrl(anthropic, ['https://a.example', 'https://b.example'])).toThrow(
      /^--base-url: 2 endpoints for an Anthropic backend, which takes one; fix: give one URL$/,
    );
  });
});
