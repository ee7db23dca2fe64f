import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDataset } from '@panta/core';
import { queryRows } from '@panta/corpus';
import { startSurrogateServer, type SurrogateServer } from '@panta/llm';
import { startFaultProxy, type FaultProxy } from '../../../test/fault-proxy.js';
import { RHEON6, pantaProcess, tempDir, writeSpec, pantaInProcess as cli } from '../../../test/helpers.js';
import { freePort } from '../../../test/redis-server.js';

/**
 * Servers that misbehave, as the fuzz suite's spec cases do for inputs: a backend that answers every request
 * with 200 and an HTML page, truncated JSON, JSON of another shape, or 401 makes `panta run` exit 1 within
 * 30 s with one line naming the endpoint and the cause (never a "complete" corpus of "" answers); the same
 * server fixed (it then passes requests to serve-surrogate), the same command resumes to the full corpus,
 * which `panta verify` passes.
 */
type Mode = 'html' | 'truncated' | 'shape' | '401' | 'hang' | 'good';

const prompts = parseDataset(readFileSync(RHEON6, 'utf8'), RHEON6);
let surrogate: SurrogateServer;
let proxy: FaultProxy;
let url: string;
let mode: Mode = 'good';
/** Completion requests the server accepted and never answered. */
let hung = 0;

const HTML = `<!DOCTYPE html><html><head><title>Sign in</title></head><body><form action="/login">${'<input>'.repeat(80)}</form></body></html>`;

beforeAll(async () => {
  surrogate = await startSurrogateServer({ prompts });
  proxy = await startFaultProxy(surrogate.url, (req) => {
    // Lists its models, then accepts each completion request and never answers it.
    if (mode === 'hang' && req.url?.endsWith('/chat/completions')) {
      hung++;
      return 'hang';
    }
    if (mode === 'html') return { status: 200, body: HTML, type: 'text/html' };
    if (mode === 'truncated')
      return { status: 200, body: '{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"The ans' };
    if (mode === 'shape') return { status: 200, body: '{"result":{"text":"an answer"},"status":"ok"}' };
    if (mode === '401') return { status: 401, body: '{"error":{"message":"Invalid API key","type":"invalid_request_error"}}' };
    return undefined;
  });
  url = proxy.url;
});

afterAll(async () => {
  await proxy.close();
  await surrogate.close();
});

const spec = () => `name: misbehaving-server
dataset: ${RHEON6}
prompts: [fq117]
geometries: [ring]
sizes: [4]
temperatures: [0.3, 0.9]
sweeps: 1
seed: 3
encoders: [{name: h, kind: hashing, dim: 8}]
concurrency: 4
backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_in_flight: 4, timeout_ms: 2000, max_retries: 2}
`;

const CAUSES: [Exclude<Mode, 'good' | 'hang'>, RegExp][] = [
  ['html', /gave no usable reply \(latest: not JSON: "<!DOCTYPE html><html><head><title>Sign in<\/title>/],
  ['truncated', /gave no usable reply \(latest: not JSON \(.*the reply began "\{\\"id\\":\\"x\\",\\"choices\\".*The ans/],
  ['shape', /gave no usable reply \(latest: no choices: \{"result":\{"text":"an answer"\},"status":"ok"\}\)/],
  ['401', /HTTP 401: .*Invalid API key.*: the endpoint refuses the key; fix: check backend\.api_key_env/],
];

describe('a backend that cannot produce answers', () => {
  it.each(CAUSES)('%s: panta run exits 1 within 30 s with the cause in one line; fixed, the same command resumes', async (kind, cause) => {
    const dir = tempDir('panta-fuzz-server-');
    const file = writeSpec(dir, spec());
    const out = join(dir, 'out');
    mode = kind;
    const started = Date.now();
    const bad = await cli(['run', file, '--out', out]);
    const seconds = (Date.now() - started) / 1000;
    expect(bad.code, bad.stderr).toBe(1);
    expect(seconds).toBeLessThan(30);
    const lines = bad.stderr.split('\n').filter((l) => l.startsWith('panta: openai'));
    expect(lines, bad.stderr).toHaveLength(1);
    expect(lines[0]).toContain(`panta: openai ${url}/v1: `);
    expect(lines[0]).toMatch(cause);
    expect(bad.stderr).not.toMatch(/runs failed|complete/);
    expect(bad.stdout).not.toMatch(/complete/);
    if (kind === '401') expect(lines[0]).not.toMatch(/run the same command again/);

    mode = 'good';
    const good = await cli(['run', file, '--out', out]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/complete: 2\/2 runs, 16 events/);
    const verified = await cli(['verify', out]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const [row] = await queryRows(
      `SELECT count(*) AS events, count(*) FILTER (WHERE reply_status <> 'ok' OR response = '') AS unusable FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ events: 16, unusable: 0 });
  });
});

describe('an LLM judge that cannot produce verdicts', () => {
  const JUDGE_CAUSES: [Exclude<Mode, 'good' | 'hang'> | 'down', RegExp][] = [
    ['html', /gave no usable reply \(latest: not JSON: "<!DOCTYPE html>/],
    ['401', /HTTP 401: .*Invalid API key.*: the endpoint refuses the key/],
    ['down', /attempts failed \(latest: connection failed \(.*\)\); fix: check that the model server at backend\.base_url is up/],
  ];

  it('panta judge stops with the cause in one line (exit 1), tags nothing, and a rerun once fixed judges every answer', async () => {
    const dir = tempDir('panta-fuzz-judge-');
    mode = 'good';
    const out = join(dir, 'out');
    const made = await cli(['run', writeSpec(dir, spec()), '--out', out]);
    expect(made.code, made.stderr).toBe(0);
    const manifest = () => readFileSync(join(out, 'manifest.json'), 'utf8');
    const before = manifest();
    // The dead endpoint's pass on a copy: its unfinished journal (resumable) would fail verify of `out`.
    const copy = join(dir, 'copy');
    cpSync(out, copy, { recursive: true });
    const closed = await freePort();
    const judge = (base: string) =>
      `{kind: llm, backend: {kind: openai, base_url: "${base}/v1", model: surrogate-potts-v1, max_retries: 2, timeout_ms: 2000}}`;
    for (const [kind, cause] of JUDGE_CAUSES) {
      mode = kind === 'down' ? 'good' : kind;
      const started = Date.now();
      // A judge pass's journal keeps its judge, endpoint included: the dead endpoint's pass is on the copy.
      const bad = await cli([
        'judge',
        kind === 'down' ? copy : out,
        '--judge',
        judge(kind === 'down' ? `http://127.0.0.1:${closed}` : url),
        '--name',
        'llm',
      ]);
      expect(bad.code, `${kind}: ${bad.stderr}`).toBe(1);
      expect((Date.now() - started) / 1000).toBeLessThan(30);
      const lines = bad.stderr.split('\n').filter((l) => l.startsWith('panta: '));
      expect(lines, bad.stderr).toHaveLength(1);
      expect(lines[0], kind).toMatch(cause);
      expect(bad.stdout).not.toMatch(/complete/);
      expect(manifest()).toBe(before);
    }
    mode = 'good';
    const good = await cli(['judge', out, '--judge', judge(url), '--name', 'llm']);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toMatch(/complete: tag_llm \(llm judge\) over 16 answers/);
    const [row] = await queryRows(
      `SELECT count(*) FILTER (WHERE tag_llm = 'judge_failure') AS failures, count(tag_llm) AS tagged FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ failures: 0, tagged: 16 });
    const verified = await cli(['verify', out]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });
});

describe('an LLM judge of the sweep that cannot produce verdicts', () => {
  it('panta run stops with the judge endpoint and cause in one line (exit 1); fixed, the same command completes with no judge failure', async () => {
    const dir = tempDir('panta-fuzz-run-judge-');
    const file = writeSpec(
      dir,
      spec().replace(
        /backend: .*\n/,
        `backend: {kind: surrogate}\njudge: {kind: llm, backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, max_retries: 2, timeout_ms: 2000}}\n`,
      ),
    );
    const out = join(dir, 'out');
    mode = 'html';
    const bad = await cli(['run', file, '--out', out]);
    expect(bad.code, bad.stderr).toBe(1);
    const lines = bad.stderr.split('\n').filter((l) => l.startsWith('panta: openai'));
    expect(lines, bad.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/gave no usable reply \(latest: not JSON: "<!DOCTYPE html>/);
    mode = 'good';
    const good = await cli(['run', file, '--out', out]);
    expect(good.code, good.stderr).toBe(0);
    const [row] = await queryRows(
      `SELECT count(*) AS events, count(*) FILTER (WHERE tag = 'judge_failure') AS failures FROM read_parquet('${out}/events/*.parquet')`,
    );
    expect(row).toEqual({ events: 16, failures: 0 });
    expect((await cli(['verify', out])).code).toBe(0);
  });
});

describe('a backend that accepts requests and never answers', () => {
  it("the progress line names the open calls and the oldest one's age; Ctrl-C says how to quit at once, and twice quits", {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir('panta-fuzz-hang-');
    mode = 'hang';
    const file = writeSpec(dir, spec().replace('timeout_ms: 2000', 'timeout_ms: 600000'));
    const p = pantaProcess(['run', file, '--out', join(dir, 'out')]);
    try {
      for (let i = 0; i < 300 && !/calls open, oldest \d+ s/.test(p.stderr()); i++) await sleep(100);
      expect(p.stderr()).toMatch(/calls in flight 4, [^|]*\(4 calls open, oldest (\d+) s\)/);
      p.kill('SIGINT');
      for (let i = 0; i < 50 && !p.stderr().includes('again to quit'); i++) await sleep(100);
      expect(p.stderr()).toContain('(Ctrl-C again to quit at once)');
      p.kill('SIGINT');
      const done = await p.exited;
      expect(done.code).toBe(130);
    } finally {
      p.kill('SIGKILL');
      mode = 'good';
    }
  });

  it('panta judge: SIGTERM says how to quit at once (the pass waits for the shard being judged), and a second SIGTERM quits', {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir('panta-fuzz-judge-hang-');
    mode = 'good';
    const out = join(dir, 'out');
    expect((await cli(['run', writeSpec(dir, spec()), '--out', out])).code).toBe(0);
    mode = 'hang';
    const before = hung;
    const judge = `{kind: llm, backend: {kind: openai, base_url: "${url}/v1", model: surrogate-potts-v1, timeout_ms: 600000}}`;
    const p = pantaProcess(['judge', out, '--judge', judge, '--name', 'llm']);
    try {
      for (let i = 0; i < 300 && hung === before; i++) await sleep(100);
      expect(hung).toBeGreaterThan(before);
      p.kill('SIGTERM');
      for (let i = 0; i < 50 && !p.stderr().includes('again to quit'); i++) await sleep(100);
      expect(p.stderr()).toContain('terminated: finishing the shard being rewritten (SIGTERM again to quit at once)');
      p.kill('SIGTERM');
      expect((await p.exited).code).toBe(143);
    } finally {
      p.kill('SIGKILL');
      mode = 'good';
    }
  });
});
