import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDataset, parseVerdict, rubric } from '@panta/core';
import { ReferenceJudge } from '@panta/judge';
import { ROOT } from '../helpers.js';
import { answerFor, HUGE_LENGTH, IDENTICAL_ANSWER, startAdversarialServer, type AdversarialServer } from './server.js';

const prompts = ['rheon6.jsonl', 'freshqa.jsonl'].flatMap((f) => parseDataset(readFileSync(join(ROOT, 'datasets', f), 'utf8'), f));
const KEY = 'sk-adversarial-SECRET-1234567890';

let server: AdversarialServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function ask(
  mode: Parameters<typeof startAdversarialServer>[0]['mode'],
  user = 'Question: How old was Queen Elizabeth II when she died?',
  seed = 7,
): Promise<string> {
  server ??= await startAdversarialServer({ mode, apiKey: KEY });
  const client = new OpenAI({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
  // vLLM extras ride along, as Panta sends them.
  const body = {
    model: 'm',
    messages: [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: user },
    ],
    seed,
    temperature: 1,
    top_k: -1,
    min_tokens: 8,
    ignore_eos: true,
  };
  const reply = await client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  return reply.choices[0].message.content!;
}

describe('adversarial server', () => {
  it('never-matching answers are fluent, varied and match no answer of any dataset prompt', () => {
    const judge = new ReferenceJudge();
    const texts = new Set<string>();
    for (let i = 0; i < 400; i++) texts.add(answerFor('never-matching', createHash('sha256').update(String(i)).digest(), false) as string);
    expect(texts.size).toBeGreaterThan(300);
    for (const p of prompts) for (const t of texts) expect(judge.tag(p, t), `${p.id}: ${t}`).toBe('not_known');
  });

  it('answers the same bytes to the same body and differs with the seed', async () => {
    const a = await ask('never-matching');
    expect(await ask('never-matching')).toBe(a);
    expect(await ask('never-matching', undefined, 8)).not.toBe(a);
    expect(server!.requests).toBe(3);
  });

  it('serves each answering mode through the openai client', async () => {
    expect(await ask('identical')).toBe(IDENTICAL_ANSWER);
    await server!.close();
    server = undefined;
    expect((await ask('empty')).trim()).toBe('');
    await server!.close();
    server = undefined;
    expect((await ask('huge')).length).toBe(HUGE_LENGTH);
    await server!.close();
    server = undefined;
    expect(await ask('non-utf8')).toContain('\ufffd');
    await server!.close();
    server = undefined;
    const seen = new Set<string>();
    for (let seed = 0; seed < 20; seed++) for (const ch of await ask('control-chars', undefined, seed)) seen.add(ch);
    expect(seen.has('\u0000') || seen.has('\u001b') || seen.has('\ud800')).toBe(true);
  });

  it('unparsable-verdict answers a judge call with prose no verdict parser accepts', async () => {
    for (let seed = 0; seed < 30; seed++) {
      const { user } = rubric(prompts[0], 'The answer is 96.');
      expect(parseVerdict(await ask('unparsable-verdict', user, seed))).toBeNull();
    }
    expect(parseVerdict(await ask('unparsable-verdict'))).toBeNull();
  });

  it('mixed draws several modes', async () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const t = await ask('mixed', undefined, seed);
      kinds.add(
        t === IDENTICAL_ANSWER
          ? 'identical'
          : t.trim() === ''
            ? 'empty'
            : t.length === HUGE_LENGTH
              ? 'huge'
              : t.includes('\ufffd')
                ? 'non-utf8'
                : 'other',
      );
    }
    expect(kinds.size).toBeGreaterThanOrEqual(4);
  });

  it('echo-key puts the key verbatim in a 401 body, echo-key-500 in a 500 body and a URL', async () => {
    for (const [mode, status] of [
      ['echo-key', 401],
      ['echo-key-500', 500],
    ] as const) {
      server = await startAdversarialServer({ mode });
      for (const path of ['/chat/completions', '/models']) {
        const res = await fetch(`${server.url}${path}`, {
          method: path === '/models' ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${KEY}` },
          body: path === '/models' ? undefined : '{}',
        });
        expect(res.status).toBe(status);
        const text = await res.text();
        expect(text).toContain(KEY);
        if (status === 500) expect(text).toContain(`https://panta:${KEY}@`);
      }
      await server.close();
      server = undefined;
    }
  });

  it('refuses a wrong key without echoing it', async () => {
    server = await startAdversarialServer({ mode: 'identical', apiKey: KEY });
    const res = await fetch(`${server.url}/models`, { headers: { authorization: 'Bearer wrong-key' } });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain('wrong-key');
  });
});
