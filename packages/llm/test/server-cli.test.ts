import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { panta, pantaInProcess as cli, ROOT } from '../../../test/helpers.js';
import { chat, firstPrompt } from './fixtures.js';

const BIN = join(ROOT, 'packages', 'cli', 'bin', 'panta.js');

/** `panta serve-surrogate ARGS` until it has printed `count` listening lines; stderr and the exit code as they come. */
async function serve(args: string[], count: number) {
  const child = spawn(process.execPath, [BIN, 'serve-surrogate', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = await new Promise<string[]>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const done = stdout.split('\n').slice(0, -1);
      if (done.length >= count) resolve(done.slice(0, count));
    });
    child.on('exit', () => reject(new Error(`exited early: ${stderr}`)));
  });
  return { lines, exited, stderr: () => stderr, stop: () => child.kill('SIGTERM') };
}

/** One agent call in the template the server reads prompts back with; the reply's text. */
async function ask(baseURL: string, seed: number, maxTokens: number): Promise<string> {
  const m = firstPrompt('How old was Queen Elizabeth II when she died?');
  const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
  const r = await client.chat.completions.create({
    model: 'surrogate-potts-v1',
    messages: chat(m),
    seed,
    max_tokens: maxTokens,
  });
  return r.choices[0].message.content ?? '';
}

describe('panta serve-surrogate (the built binary)', () => {
  it('prints where it listens, serves the OpenAI API, and exits 0 on SIGTERM after closing', async () => {
    const server = await serve(['--port', '0', '--slots', '8', '--token-ms', '1'], 1);
    const [line] = server.lines;
    try {
      expect(line).toMatch(/^serve-surrogate listening on http:\/\/127\.0\.0\.1:\d+\/v1 \(model surrogate-potts-v1, 6 prompts\)$/);
      const baseURL = /(http:\S+)/.exec(line)![1];
      const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
      expect((await client.models.list()).data[0].id).toBe('surrogate-potts-v1');
      expect((await ask(baseURL, 1, 100)).length).toBeGreaterThan(0);
    } finally {
      server.stop();
    }
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toMatch(/SIGTERM: stopped after 2 requests/);
  });

  it('--endpoints N: N endpoints in one process, each on its own port with its own counters', async () => {
    const server = await serve(['--port', '0', '--endpoints', '3', '--fault-rate', '0'], 3);
    try {
      const urls = server.lines.map((l) => /listening on (http:\S+)\/v1 /.exec(l)![1]);
      expect(new Set(urls).size).toBe(3);
      // Two calls to the second endpoint, one to the third: each endpoint counts its own.
      for (const i of [1, 1, 2]) expect((await ask(`${urls[i]}/v1`, i, 20)).length).toBeGreaterThan(0);
      const completed = await Promise.all(
        urls.map(async (u) => ((await (await fetch(`${u}/panta/stats`)).json()) as { completed: number }).completed),
      );
      expect(completed).toEqual([0, 2, 1]);
    } finally {
      server.stop();
    }
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toMatch(
      /SIGTERM: stopped after 6 requests \(3 answered, 0 faults injected, 0 bad, at most 1 at once on one endpoint of 3\)/,
    );
  });

  it("--cost-model: simulated vLLM endpoints, each its own engine, with /metrics in vLLM's names", async () => {
    const server = await serve(['--port', '0', '--endpoints', '2', '--cost-model', 'h100-qwen3-14b', '--time-scale', '100'], 2);
    try {
      expect(server.stderr()).toMatch(
        /simulated vLLM: h100-qwen3-14b .*not measurements.*time scale 100, scheduling fcfs, tokens by estimate/,
      );
      const urls = server.lines.map((l) => /listening on (http:\S+)\/v1 /.exec(l)![1]);
      expect((await ask(`${urls[1]}/v1`, 1, 20)).length).toBeGreaterThan(0);
      const queries = await Promise.all(
        urls.map(async (u) => {
          const text = await (await fetch(`${u}/metrics`)).text();
          expect(text).toMatch(/^vllm:num_requests_waiting\{model_name="surrogate-potts-v1"\} 0\.0$/m);
          return Number(/^vllm:prefix_cache_queries_total\{[^}]*\} (\S+)$/m.exec(text)?.[1]);
        }),
      );
      expect(queries[0]).toBe(0);
      expect(queries[1]).toBeGreaterThan(0);
    } finally {
      server.stop();
    }
    expect(await server.exited).toBe(0);
  });

  it('bad options: one line naming the option and the fix, exit 2', async () => {
    // The first on the binary (its exit status, its streams), the rest in this process: the same code, no Node start each.
    for (const [i, [args, text]] of (
      [
        [['--fault-rate', '1.5'], /^panta: serve-surrogate: --fault-rate: 1\.5 is too big \(maximum 1\); fix: use a value of at most 1$/m],
        [['--faults', '429,teapot'], /^panta: serve-surrogate: --faults: unknown fault kind "teapot"; fix: /],
        [['--slots', '-1'], /^panta: serve-surrogate: --slots: /],
        [['--token-ms', '2'], /^panta: serve-surrogate: --token-ms: .*--slots/],
        [['--dataset', 'no/such.jsonl'], /^panta: serve-surrogate: --dataset: cannot read no\/such\.jsonl/],
        [['--endpoints', '0'], /^panta: serve-surrogate: --endpoints: 0 is too small \(minimum 1\); fix: /],
        [['--cost-model', 'a100'], /^panta: serve-surrogate: --cost-model: cannot read a100 .*h100-qwen3-14b/],
        [['--cost-model', 'h100-qwen3-14b', '--slots', '8'], /^panta: serve-surrogate: --slots: does not apply with --cost-model/],
        [['--scheduling-policy', 'lifo'], /--scheduling-policy/],
        [['--scenario', 'nope'], /^panta: serve-surrogate: --scenario: unknown surrogate scenario "nope"; fix: use one of neutral, /],
        [
          ['--port', '65535', '--endpoints', '2'],
          /^panta: serve-surrogate: --endpoints: 2 endpoints from port 65535 go past port 65535; fix: /,
        ],
      ] as const
    ).entries()) {
      const argv = ['serve-surrogate', '--port', '0', ...args];
      const r = i === 0 ? panta(argv) : await cli(argv);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(text);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });
});
