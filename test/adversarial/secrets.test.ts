import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTable, queryRows, readManifest, writeManifest, writeParquetTable, type Manifest } from '@panta/corpus';
import { tailLog } from '@panta/report';
import { RHEON6, pantaProcess, tempDir, writeSpec } from '../helpers.js';
import { RedisServer } from '../redis-server.js';
import { startAdversarialServer, type AdversarialMode, type AdversarialServer } from './server.js';

// Shaped like no vendor key, in variables whose names say nothing: only the backends registering the keys
// they read from api_key_env can keep them out of what Panta writes.
const AGENT_VAR = 'SECRETS_TEST_AGENT_CREDENTIAL';
const JUDGE_VAR = 'SECRETS_TEST_JUDGE_CREDENTIAL';
const AGENT_KEY = 'agentKey-9f3c1d7e5b2a4860';
const JUDGE_KEY = 'judgeKey-5d1e0b7a3c9f2468';
const KEYS = [AGENT_KEY, JUDGE_KEY];
const ENV = { [AGENT_VAR]: AGENT_KEY, [JUDGE_VAR]: JUDGE_KEY };

const servers: AdversarialServer[] = [];
async function server(mode: AdversarialMode, apiKey?: string): Promise<string> {
  const s = await startAdversarialServer({ mode, ...(apiKey ? { apiKey } : {}) });
  servers.push(s);
  return s.url;
}

const dir = tempDir('panta-secrets-');
let redisServer: RedisServer;
beforeAll(async () => {
  mkdirSync(join(dir, 'redis'));
  redisServer = await RedisServer.start(join(dir, 'redis'));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await redisServer?.stop();
});

function spec(name: string, agentsUrl: string, judgeUrl?: string): string {
  const backend = (url: string, keyVar: string) =>
    `{kind: openai, base_url: "${url}", model: adversarial-1, api_key_env: ${keyVar}, max_retries: 1, max_context_tokens: 32768}`;
  return writeSpec(
    dir,
    `name: ${name}
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [4]
temperatures: [0.7]
sweeps: 1
seed: 1
backend: ${backend(agentsUrl, AGENT_VAR)}
${judgeUrl ? `judge: {kind: llm, backend: ${backend(judgeUrl, JUDGE_VAR)}}` : ''}
`,
    `${name}.yaml`,
  );
}

function files(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const asText = (value: unknown) =>
  JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'bigint' ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
  );

/**
 * Where a key appears: every file's raw bytes, and every Parquet file read back by DuckDB (a byte search can
 * miss text in compressed pages): rows, schema and key-value metadata.
 */
async function leaks(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of files(root)) {
    const raw = readFileSync(file);
    for (const key of KEYS) if (raw.includes(key)) found.push(`${file}: ${key}`);
    if (!file.endsWith('.parquet')) continue;
    const text = asText([
      await queryRows(`SELECT * FROM read_parquet('${file}')`),
      await queryRows(`SELECT * FROM parquet_schema('${file}')`),
      await queryRows(`SELECT * FROM parquet_kv_metadata('${file}')`),
    ]);
    for (const key of KEYS) if (text.includes(key)) found.push(`${file} (read back): ${key}`);
  }
  return found;
}

function inText(label: string, text: string): string[] {
  return KEYS.filter((k) => text.includes(k)).map((k) => `${label}: ${k}`);
}

/** Every key of a Redis database with its value, whatever its type. */
async function redisDump(url: string): Promise<string> {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  try {
    const out: unknown[] = [];
    for (const key of await redis.keys('*')) {
      const type = await redis.type(key);
      const read: Record<string, () => Promise<unknown>> = {
        string: () => redis.get(key),
        hash: () => redis.hgetall(key),
        list: () => redis.lrange(key, 0, -1),
        set: () => redis.smembers(key),
        zset: () => redis.zrange(key, 0, -1, 'WITHSCORES'),
        stream: () => redis.xrange(key, '-', '+'),
      };
      out.push(key, await (read[type] ?? (() => Promise.resolve(type)))());
    }
    return asText(out);
  } finally {
    redis.disconnect();
  }
}

async function runEmbedded(specFile: string, out: string): Promise<{ code: number | null; console: string }> {
  const r = await pantaProcess(['run', specFile, '--out', out, '--log-level', 'debug'], ENV).exited;
  return { code: r.code, console: r.stdout + r.stderr };
}

describe('no API key reaches the corpus, the journals, Redis or the console', () => {
  it('the scan finds a key in a file and in a Parquet file read back', async () => {
    const planted = join(dir, 'planted');
    await writeParquetTable(join(planted, 'x.parquet'), defineTable('planted', [{ name: 'error', type: 'VARCHAR' }]), [
      { error: 'a first row' },
      { error: `HTTP 401: ${AGENT_KEY}` },
      { error: 'z last row' },
    ]);
    const file = join(planted, 'x.parquet');
    expect(await leaks(planted)).toEqual([`${file}: ${AGENT_KEY}`, `${file} (read back): ${AGENT_KEY}`]);
  });

  it("the dashboard's log tail redacts a log written before Panta redacted its lines", () => {
    const file = join(dir, 'old-log.jsonl');
    const err = 'HTTP 500: upstream https://panta:pw-123456@h/v1?api_key=k-123456 failed (Authorization: Bearer sk-abcdefghijklmnopqrstuv)';
    writeFileSync(file, `${JSON.stringify({ level: 50, time: Date.UTC(2026, 0, 1, 12, 34, 56), run: 'r1', err, msg: 'run failed' })}\n`);
    expect(tailLog(file, 5)).toEqual([
      '12:34:56 error run failed r1 (HTTP 500: upstream https://[redacted]@h/v1?api_key=[redacted] failed (Authorization: Bearer [redacted]))',
    ]);
  });

  it("manifest.json: a base_url's credentials are redacted, the dataset's prompts kept as given", () => {
    const out = join(dir, 'manifest');
    const prompt = { id: 'q1', question: 'What is in a fortune cookie: a slip of paper or a coin?', accepted: ['a slip of paper'] };
    const manifest = {
      format: 'panta-corpus/1',
      name: 'm',
      spec: { backend: { kind: 'openai', base_url: 'https://user:pw-98765432@h/v1' } },
      prompts: [prompt],
    };
    mkdirSync(out);
    writeManifest(out, manifest as unknown as Manifest);
    const back = readManifest(out)!;
    expect(back.spec).toEqual({ backend: { kind: 'openai', base_url: 'https://[redacted]@h/v1' } });
    expect(back.prompts).toEqual([prompt]);
  });

  it('embedded, a 401 whose body echoes the key and the Authorization header: the sweep stops at once, its line and log redacted', async () => {
    const out = join(dir, 'echo-401');
    const r = await runEmbedded(spec('echo-401', await server('echo-key')), out);
    expect(r.code).toBe(1);
    expect(r.console).toContain('HTTP 401: Incorrect API key provided: [redacted]');
    expect(r.console).toContain('the endpoint refuses the key');
    expect(readFileSync(join(out, 'log.jsonl'), 'utf8')).toContain('backend unhealthy: stopping the sweep');
    expect([...(await leaks(out)), ...inText('console', r.console)]).toEqual([]);
  });

  it('embedded, a 500 quoting the key in a URL with credentials, a query and a header, retried', async () => {
    const out = join(dir, 'echo-500');
    const r = await runEmbedded(spec('echo-500', await server('echo-key-500')), out);
    expect(r.code).toBe(1);
    const journal = readFileSync(join(out, '.state', 'runs.jsonl'), 'utf8');
    expect(journal).toContain('gave up after 2 attempts; last failure: HTTP 500: upstream https://[redacted]@upstream.invalid');
    expect(journal).toContain('api_key=[redacted]');
    expect([...(await leaks(out)), ...inText('console', r.console)]).toEqual([]);
  });

  it("the LLM judge's key: a judge endpoint echoing it fails every verdict (judge_failure), the sweep completes", async () => {
    const out = join(dir, 'judge');
    const r = await runEmbedded(spec('judge', await server('never-matching', AGENT_KEY), await server('echo-key-500')), out);
    expect(r.code, r.console).toBe(0);
    const tags = await queryRows(`SELECT DISTINCT tag FROM read_parquet('${out}/events/*.parquet')`);
    expect(tags).toEqual([{ tag: 'judge_failure' }]);
    expect([...(await leaks(out)), ...inText('console', r.console)]).toEqual([]);
  });

  it("distributed: worker, scheduler and collector against Redis; the failure record in Redis, the roles' logs and the corpus hold no key", async () => {
    const out = join(dir, 'distributed');
    const specFile = spec('distributed', await server('echo-key'));
    const env = { ...ENV, PANTA_REDIS_URL: redisServer.url };
    const collector = pantaProcess(['collector', '--out', out, '--durable-ms', '300'], env);
    const worker = pantaProcess(['worker', '--concurrency', '2'], env);
    const scheduler = pantaProcess(['scheduler', specFile], env);
    const scheduled = await scheduler.exited;
    const collected = await collector.exited;
    worker.kill('SIGTERM');
    const worked = await worker.exited;
    expect([scheduled.code, collected.code, worked.code]).toEqual([1, 1, 0]);
    const stored = await redisDump(redisServer.url);
    // The worker's backend stops at the 401: the scheduler and the collector stop with its line, redacted.
    expect(stored).toContain('Incorrect API key provided: [redacted]');
    expect(scheduled.stderr).toContain('HTTP 401: Incorrect API key provided: [redacted]');
    expect(collected.stderr).toContain('HTTP 401: Incorrect API key provided: [redacted]');
    const roles = { scheduler: scheduled, collector: collected, worker: worked };
    expect([
      ...(await leaks(out)),
      ...(await leaks(join(dir, 'redis'))),
      ...inText('redis', stored),
      ...Object.entries(roles).flatMap(([role, r]) => inText(role, r.stdout + r.stderr)),
    ]).toEqual([]);
  });
});
