import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDataset, type JudgeSpec } from '@panta/core';
import { judgeCachePath } from '@panta/corpus';
import { createJudge, type LlmJudge } from '@panta/judge';
import { startSurrogateServer, type SurrogateServer } from '@panta/llm';
import { sweepKeys } from '../src/keys.js';
import { RedisVerdicts } from '../src/redis/verdicts.js';
import { RedisServer } from '../../../test/redis-server.js';
import { RHEON6, tempDir } from '../../../test/helpers.js';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
const fq367 = prompts.find((p) => p.id === 'fq367')!;
const fq117 = prompts.find((p) => p.id === 'fq117')!;

let redisServer: RedisServer;
const connections: Redis[] = [];
/** A connection of its own, as each process of a sweep has. */
const connect = () => {
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  connections.push(redis);
  return redis;
};

beforeAll(async () => {
  redisServer = await RedisServer.start(tempDir('panta-verdicts-'));
});
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await redisServer.stop();
});

const judgeSpec = (url: string, extra: object = {}): JudgeSpec => ({
  kind: 'llm',
  backend: {
    kind: 'openai',
    base_url: `${url}/v1`,
    model: 'surrogate-potts-v1',
    max_in_flight: 64,
    timeout_ms: 5_000,
    max_retries: 0,
    thinking: false,
    ...extra,
  },
});

/** A judge as a process of the sweep builds it: its own connection, the sweep's verdict hash, a corpus folder or none. */
function judgeOf(url: string, sweepId: string, out?: string) {
  return createJudge(judgeSpec(url), 'spec.yaml', prompts, out, { shared: new RedisVerdicts(connect(), sweepKeys(sweepId).verdicts) });
}

describe('verdicts shared in Redis', () => {
  let server: SurrogateServer;
  beforeAll(async () => {
    server = await startSurrogateServer({ prompts, latencyMs: 50 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('judges an identical (prompt, answer) once across processes, and counts a shared verdict as cached', async () => {
    const collector = judgeOf(server.url, 'shared-a', join(tempDir(), 'corpus')) as LlmJudge;
    const worker = judgeOf(server.url, 'shared-a') as LlmJudge;
    const before = server.stats().completed;
    expect(await worker.judge(fq367, 'She was 96 years old.')).toBe('correct');
    // the same pair up to case and punctuation, in another process
    expect(await collector.judge(fq367, 'she was 96 years old')).toBe('correct');
    expect(server.stats().completed - before).toBe(1);
    expect(worker.stats).toEqual({ calls: 1, cached: 0, failures: 0 });
    expect(collector.stats).toEqual({ calls: 0, cached: 1, failures: 0 });
    // concurrent duplicates in one process share one call; the other process then finds it
    const tags = await Promise.all([1, 2, 3].map(() => collector.judge(fq117, 'It is 1729.')));
    expect(tags).toEqual(['hallucinated', 'hallucinated', 'hallucinated']);
    expect(await worker.judge(fq117, 'it is 1729')).toBe('hallucinated');
    expect(server.stats().completed - before).toBe(2);
    // another sweep shares nothing
    const other = judgeOf(server.url, 'shared-b') as LlmJudge;
    expect(await other.judge(fq367, 'She was 96 years old.')).toBe('correct');
    expect(server.stats().completed - before).toBe(3);
    for (const j of [collector, worker, other]) await j.close();
  });

  it("writes the verdicts a collector's rows got to the corpus's judge-cache.jsonl: an embedded resume asks for none", async () => {
    const out = join(tempDir(), 'corpus');
    const worker = judgeOf(server.url, 'corpus-a');
    const collector = judgeOf(server.url, 'corpus-a', out);
    const answers = ['She was 96.', 'I think 95.', 'I am not sure.'];
    for (const a of answers) await worker.judge(fq367, a);
    for (const a of answers) await collector.judge(fq367, a);
    await collector.judge(fq117, 'No such number exists.');
    expect(readFileSync(judgeCachePath(out), 'utf8').trim().split('\n')).toHaveLength(4);
    const before = server.stats().completed;
    const embedded = createJudge(judgeSpec(server.url), 'spec.yaml', prompts, out) as LlmJudge;
    for (const a of answers) await embedded.judge(fq367, a);
    expect(await embedded.judge(fq117, 'no such number exists')).toBe('correct');
    expect(server.stats().completed).toBe(before);
    expect(embedded.stats).toEqual({ calls: 0, cached: 4, failures: 0 });
    for (const j of [worker, collector, embedded]) await j.close();
  });
});

/** A judge endpoint that misbehaves as `mode` says, counting the calls it gets. */
async function badJudge(): Promise<{ url: string; calls: () => number; mode: { now: string }; close(): Promise<void> }> {
  let calls = 0;
  const mode = { now: 'garbage' };
  const reply = (content: string) =>
    JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'surrogate-potts-v1',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  const http: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/models')) return res.writeHead(200).end('{"object":"list","data":[]}');
      calls++;
      const json = { 'content-type': 'application/json' };
      if (mode.now === 'garbage') res.writeHead(200, json).end(reply('I would rather not grade this.'));
      else if (mode.now === 'empty') res.writeHead(200, json).end(reply(''));
      else if (mode.now === 'empty-body') res.writeHead(200, json).end('');
      else if (mode.now === '500') res.writeHead(500, json).end('{"error":{"message":"boom"}}');
      else res.writeHead(200, json).end(reply('{"tag": "correct"}'));
    });
  });
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  const { port } = http.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, calls: () => calls, mode, close: () => new Promise((ok) => http.close(() => ok())) };
}

describe('a judge endpoint that answers garbage, 500s or nothing', () => {
  it('tags judge_failure, never drops the row, never stores a failure, and asks again later', async () => {
    const bad = await badJudge();
    const hash = sweepKeys('adversarial').verdicts;
    const out = join(tempDir(), 'corpus');
    try {
      const collector = judgeOf(bad.url, 'adversarial', out) as LlmJudge;
      const worker = judgeOf(bad.url, 'adversarial') as LlmJudge;
      let n = 0;
      for (const mode of ['garbage', 'empty', 'empty-body', '500']) {
        bad.mode.now = mode;
        expect(await collector.judge(fq367, 'She was 96.'), mode).toBe('judge_failure');
        expect(await worker.judge(fq367, 'She was 96.'), mode).toBe('judge_failure');
        n += 2;
        expect(bad.calls(), mode).toBe(n);
      }
      expect(collector.stats).toEqual({ calls: 4, cached: 0, failures: 4 });
      const probe = connect();
      expect(await probe.hlen(hash)).toBe(0);
      expect(existsSync(judgeCachePath(out))).toBe(false);
      // healed: the pair is asked again, once, and its verdict is shared and written
      bad.mode.now = 'ok';
      expect(await worker.judge(fq367, 'She was 96.')).toBe('correct');
      expect(await collector.judge(fq367, 'she was 96')).toBe('correct');
      expect(bad.calls()).toBe(n + 1);
      expect(await probe.hvals(hash)).toEqual(['correct']);
      expect(readFileSync(judgeCachePath(out), 'utf8')).toContain('"tag":"correct"');
      await collector.close();
      await worker.close();
    } finally {
      await bad.close();
    }
  });

  it('judges without the shared store while Redis is down: a verdict, never a failure for that', async () => {
    const server = await startSurrogateServer({ prompts });
    const lost = new Redis(`redis://127.0.0.1:1`, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    lost.on('error', () => undefined);
    try {
      const judge = createJudge(judgeSpec(server.url), 'spec.yaml', prompts, undefined, {
        shared: new RedisVerdicts(lost, sweepKeys('down').verdicts),
      }) as LlmJudge;
      expect(await judge.judge(fq367, 'She was 96.')).toBe('correct');
      expect(judge.stats).toEqual({ calls: 1, cached: 0, failures: 0 });
      // kept in the process's own store: no second call
      expect(await judge.judge(fq367, 'She was 96.')).toBe('correct');
      expect(server.stats().completed).toBe(1);
      await judge.close();
    } finally {
      lost.disconnect();
      await server.close();
    }
  });
});
