import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, readManifest, verifyCorpus, writeManifest } from '@panta/corpus';
import { ROOT, corpusDiff, onDisk, sweepKilledWhen, tempDir, writeSpec } from '../../../test/helpers.js';
import { runSweep } from '../src/index.js';

/**
 * A model served over the OpenAI API that records each call's max_tokens (by its seed) and writes, as relay
 * member k, 9 + 13k completion tokens or its max_tokens if fewer: members that leave some of their share
 * unused, and later ones that would write more than an even split allows.
 */
class RecordingModel {
  readonly maxTokens = new Map<number, number>();
  url = '';
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.method !== 'POST')
        return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'x' }] }));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      this.maxTokens.set(body.seed, body.max_tokens);
      const system = String(body.messages[0].content);
      const k = Number(/agent (\d+) of a relay/.exec(system)?.[1] ?? 1) - 1;
      const tokens = Math.min(body.max_tokens, 9 + 13 * k);
      const choice = { index: 0, message: { role: 'assistant', content: `Found: part ${k + 1}. Open: none.` }, finish_reason: 'stop' };
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [choice],
          usage: { prompt_tokens: 20, completion_tokens: tokens },
        }),
      );
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const model = new RecordingModel();
beforeAll(() => model.start());
afterAll(() => model.stop());

const BUDGET = 100;

function spec(team: string, sizes = '[1, 2, 3, 5, 8]'): string {
  return `name: pool
dataset: ${ROOT}/datasets/multifact26.jsonl
prompts: [mf01, mf02]
geometries: [chain]
sizes: ${sizes}
temperatures: [0.7]
trials: 2
dynamics: relay
team: ${team}
seed: 5
backend: {kind: openai, base_url: "${model.url}/v1", model: m, max_in_flight: 4}
encoders: [{name: hashing, kind: hashing, dim: 16}]
judge: {kind: reference}
`;
}

interface Row {
  run_id: string;
  n: number;
  agent: number;
  seed: number;
  completion_tokens: number;
  read_versions: number[];
}

async function rows(out: string): Promise<Row[]> {
  return (await queryRows(
    `SELECT run_id, n::INTEGER AS n, agent::INTEGER AS agent, seed::BIGINT AS seed, completion_tokens::INTEGER AS completion_tokens, read_versions FROM read_parquet('${out}/events/*.parquet') ORDER BY run_id, event`,
  )) as Row[];
}

function byRun(all: Row[]): Row[][] {
  const runs = new Map<string, Row[]>();
  for (const r of all) runs.set(r.run_id, [...(runs.get(r.run_id) ?? []), r]);
  return [...runs.values()];
}

describe('a relay at "the same total budget of tokens": the pool (team.budget_rule)', () => {
  it('pool (a new sweep): member k may write what the members before it left, over the members still to write; a run never writes more than B', async () => {
    const dir = tempDir();
    const out = join(dir, 'pool');
    expect((await runSweep(writeSpec(dir, spec(`{token_budget: ${BUDGET}}`)), { out, logLevel: 'silent' })).status).toBe('complete');
    expect((readManifest(out)!.spec as { team: { budget_rule?: string } }).team.budget_rule).toBe('pool');
    expect((await verifyCorpus(out)).problems).toEqual([]);
    const runs = byRun(await rows(out));
    expect(runs.length).toBe(2 * 5 * 2);
    let passedOn = 0;
    for (const run of runs) {
      const n = run[0].n;
      let spent = 0;
      for (const [k, r] of run.entries()) {
        // Every earlier member is read (for what it spent), and the share is what they left over the members to come.
        expect(r.read_versions.map(Number)).toEqual(Array.from({ length: k }, (_, j) => j));
        const share = Math.floor((BUDGET - spent) / (n - k));
        expect(model.maxTokens.get(Number(r.seed)), `${r.run_id} member ${k}`).toBe(share);
        if (share > Math.floor(BUDGET / n)) passedOn++;
        spent += r.completion_tokens;
      }
      expect(spent).toBeLessThanOrEqual(BUDGET);
      // The last member may write all that is left.
      expect(model.maxTokens.get(Number(run[n - 1].seed))).toBe(BUDGET - (spent - run[n - 1].completion_tokens));
    }
    // Tokens a member left were passed on: shares above the even split.
    expect(passedOn).toBeGreaterThan(10);
  }, 60_000);

  it('split (the rule of corpora from before the key): floor(B / N) each, set in advance; such a corpus verifies and resumes with budget_rule: split', async () => {
    const dir = tempDir();
    const out = join(dir, 'split');
    const file = writeSpec(dir, spec(`{token_budget: ${BUDGET}, budget_rule: split}`, '[3, 8]'));
    expect((await runSweep(file, { out, logLevel: 'silent' })).status).toBe('complete');
    for (const run of byRun(await rows(out))) {
      for (const [k, r] of run.entries()) {
        expect(model.maxTokens.get(Number(r.seed))).toBe(Math.floor(BUDGET / r.n));
        expect(r.read_versions.map(Number)).toEqual(k === 0 ? [] : [k - 1]);
      }
    }
    // A corpus from before the key: its stored spec has none, and it reads as split.
    const manifest = readManifest(out)!;
    delete (manifest.spec as { team: { budget_rule?: string } }).team.budget_rule;
    writeManifest(out, manifest);
    expect((await verifyCorpus(out)).problems).toEqual([]);
    // Today's YAML without the key pools the budget: another corpus, and the refusal says which key resumes it.
    await expect(
      runSweep(writeSpec(dir, spec(`{token_budget: ${BUDGET}}`, '[3, 8]'), 'today.yaml'), { out, logLevel: 'silent' }),
    ).rejects.toThrow(/write team: \{budget_rule: split\} to resume/);
    expect((await runSweep(file, { out, logLevel: 'silent' })).status).toBe('complete');
  }, 60_000);

  it('a pooled relay killed mid-run resumes to the corpus of an uninterrupted run (the shares read back from the parts)', async () => {
    const dir = tempDir();
    const file = writeSpec(dir, spec(`{token_budget: ${BUDGET}}`, '[8]').replace('max_in_flight: 4', 'max_in_flight: 1'));
    const whole = join(dir, 'whole');
    const cut = join(dir, 'cut');
    expect((await runSweep(file, { out: whole, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    await sweepKilledWhen(file, cut, 1, () => onDisk(cut).parts >= 3);
    expect(onDisk(cut).shards).toBeLessThan(4);
    expect((await runSweep(file, { out: cut, concurrency: 1, logLevel: 'silent' })).status).toBe('complete');
    expect((await verifyCorpus(cut)).problems).toEqual([]);
    expect(await corpusDiff(whole, cut)).toEqual({ extra: 0, missing: 0 });
  }, 60_000);
});
