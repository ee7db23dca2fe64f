import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { parseDataset, surrogateBackendSchema } from '@panta/core';
import { SurrogateAgent } from '../src/index.js';
import { startSurrogateServer, type SurrogateServer } from '../src/server/app.js';
import { FAULT_KINDS, anthropicSeedUserId, type FaultKind } from '../src/server/types.js';
import { RHEON6 } from '../../../test/helpers.js';
import { chat, firstPrompt, pool } from './fixtures.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const agent = new SurrogateAgent(prompts[3], surrogateBackendSchema.parse({ kind: 'surrogate' }));
const messages = firstPrompt(prompts[3].question);
/**
 * The client gives up on the requests the server hung (the timeout fault), and on those only: the test aborts
 * the requests still pending once their number is that of the hung requests the server holds, which makes
 * them exactly the hung ones. A wall-clock timeout instead counted a reply slow on a loaded host as a timeout.
 */
/** The SDKs' own timeout, off in effect (setTimeout's largest delay). */
const NO_TIMEOUT = 2_147_483_647;

class HungGate {
  private readonly pending = new Set<AbortController>();
  private aborted = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly server: SurrogateServer) {}

  /** Runs `work` with a signal the gate aborts once the request is known to be hung. */
  async track<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const c = new AbortController();
    this.pending.add(c);
    this.timer ??= setInterval(() => this.check(), 5);
    try {
      return await work(c.signal);
    } finally {
      this.pending.delete(c);
      if (this.pending.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }
  }

  private check(): void {
    const hung = this.server.stats().faults.timeout - this.aborted;
    if (this.pending.size === 0 || this.pending.size !== hung) return;
    this.aborted += hung;
    for (const c of this.pending) c.abort();
  }
}

type Outcome = FaultKind | 'ok';

/** 429 replies seen with the finer retry-after-ms header (the server adds it to about half). */
let retryAfterMs = 0;

/** What a client sees, mapped back to the fault that caused it. A healthy reply must be the agent's. */
function classifyOpenAI(client: OpenAI, seed: number, signal?: AbortSignal): Promise<Outcome> {
  return client.chat.completions
    .create(
      {
        model: 'surrogate-potts-v1',
        messages: chat(messages),
        seed,
        temperature: 0.7,
        max_tokens: 100,
      },
      signal ? { signal } : undefined,
    )
    .then(
      (r): Outcome => {
        if (r === undefined || r === null || r.choices.length === 0) return 'empty';
        expect(r.choices[0].message.content).toBe(agent.reply(seed, 0.7, undefined, []).text);
        return 'ok';
      },
      (e: unknown): Outcome => {
        if (e instanceof OpenAI.APIConnectionTimeoutError || e instanceof OpenAI.APIUserAbortError) return 'timeout';
        if (e instanceof OpenAI.APIConnectionError) return 'reset';
        if (e instanceof OpenAI.RateLimitError) {
          expect(e.headers.get('retry-after')).toBe('1');
          if (e.headers.get('retry-after-ms') !== null) retryAfterMs++;
          return '429';
        }
        if (e instanceof OpenAI.InternalServerError && (e.status === 500 || e.status === 503)) return String(e.status) as Outcome;
        // The SDK lets JSON.parse's error through for a truncated body.
        if (e instanceof SyntaxError) return 'malformed';
        throw e;
      },
    );
}

function classifyAnthropic(client: Anthropic, seed: number, signal?: AbortSignal): Promise<Outcome> {
  return client.messages
    .create(
      {
        model: 'surrogate-potts-v1',
        system: messages.system,
        messages: [{ role: 'user', content: messages.user }],
        max_tokens: 100,
        temperature: 0.7,
        metadata: { user_id: anthropicSeedUserId(seed) },
      },
      signal ? { signal } : undefined,
    )
    .then(
      (r): Outcome => {
        if (r === undefined || r === null || r.content.length === 0) return 'empty';
        expect(r.content[0]).toEqual({ type: 'text', text: agent.reply(seed, 0.7, undefined, []).text });
        return 'ok';
      },
      (e: unknown): Outcome => {
        if (e instanceof Anthropic.APIConnectionTimeoutError || e instanceof Anthropic.APIUserAbortError) return 'timeout';
        if (e instanceof Anthropic.APIConnectionError) return 'reset';
        if (e instanceof Anthropic.RateLimitError) {
          expect(e.headers.get('retry-after')).toBe('1');
          return '429';
        }
        if (e instanceof Anthropic.APIError && (e.status === 500 || e.status === 503)) return String(e.status) as Outcome;
        if (e instanceof SyntaxError) return 'malformed';
        throw e;
      },
    );
}

function tally(outcomes: Outcome[]): Record<Outcome, number> {
  const counts = Object.fromEntries([...FAULT_KINDS, 'ok'].map((k) => [k, 0])) as Record<Outcome, number>;
  for (const o of outcomes) counts[o]++;
  return counts;
}

async function settled(server: SurrogateServer): Promise<void> {
  for (let i = 0; i < 50 && server.stats().open > 0; i++) await new Promise((r) => setTimeout(r, 20));
}

describe('serve-surrogate: seeded fault injection', () => {
  for (const sdk of ['openai', 'anthropic'] as const) {
    it(`${sdk} SDK: every fault kind shows up as its client-side error, at the configured rate`, async () => {
      const rate = 0.3;
      const n = 350;
      const server = await startSurrogateServer({ prompts, faults: { rate, seed: 11 } });
      try {
        const gate = new HungGate(server);
        const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: NO_TIMEOUT });
        const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0, timeout: NO_TIMEOUT });
        const classify = (seed: number): Promise<Outcome> =>
          gate.track((signal) => (sdk === 'openai' ? classifyOpenAI(openai, seed, signal) : classifyAnthropic(anthropic, seed, signal)));
        const counts = tally(await pool(n, 32, (i) => classify(1000 + i)));
        const stats = server.stats();
        // What clients saw is exactly what the server injected, kind by kind.
        for (const kind of FAULT_KINDS) expect(counts[kind], kind).toBe(stats.faults[kind]);
        for (const kind of FAULT_KINDS) expect(counts[kind], kind).toBeGreaterThan(0);
        if (sdk === 'openai') {
          expect(retryAfterMs).toBeGreaterThan(0);
          expect(retryAfterMs).toBeLessThan(counts['429']);
        }
        expect(counts.ok).toBe(stats.completed);
        const share = (n - counts.ok) / n;
        expect(share).toBeGreaterThan(rate - 0.08);
        expect(share).toBeLessThan(rate + 0.08);
        // Hung requests are dropped once their clients give up.
        await settled(server);
        expect(server.stats().open).toBe(0);
      } finally {
        await server.close();
      }
    });
  }

  it('is reproducible: the i-th request gets the same fault for the same fault seed, and another seed differs', async () => {
    const kinds: FaultKind[] = ['429', '500', '503', 'reset', 'malformed', 'empty'];
    const run = async (seed: number) => {
      const server = await startSurrogateServer({ prompts, faults: { rate: 0.5, kinds, seed } });
      try {
        const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 5000 });
        const outcomes: Outcome[] = [];
        for (let i = 0; i < 80; i++) outcomes.push(await classifyOpenAI(client, i));
        return outcomes;
      } finally {
        await server.close();
      }
    };
    const a = await run(5);
    expect(await run(5)).toEqual(a);
    expect(await run(6)).not.toEqual(a);
    expect(new Set(a).size).toBe(kinds.length + 1);
  });

  it('faults do not hold batch slots: once the clients give up on hung requests, the batch and the open requests are empty', async () => {
    const server = await startSurrogateServer({
      prompts,
      slots: 2,
      tokenMs: 1,
      faults: { rate: 0.5, kinds: ['timeout', 'reset', 'malformed'], seed: 3 },
    });
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 300 });
      const counts = tally(await pool(60, 8, (i) => classifyOpenAI(client, i)));
      expect(counts.timeout).toBeGreaterThan(0);
      await settled(server);
      const stats = server.stats();
      expect(stats.open).toBe(0);
      expect(stats.batch!.running + stats.batch!.queued).toBe(0);
      expect(stats.batch!.maxRunning).toBeLessThanOrEqual(2);
    } finally {
      await server.close();
    }
  });
});
